//! The clients connected to an MCP server, with their subscriptions, the
//! `subscriptions/listen` streams of 2026-07-28 clients, and what the host's
//! tools offer: to tell them when either changes.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ErrorData;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionSink};
use serde_json::json;
use toolhost::host::Host;
use toolhost::prompts::PromptSpec;
use toolhost::resources::{ResourceSpec, ResourceTemplateSpec};

use super::resources;

/// What the host's tools offer besides themselves, to tell when it changes.
#[derive(PartialEq)]
pub(super) struct Offered {
    pub(super) prompts: Vec<PromptSpec>,
    pub(super) resources: (Vec<ResourceSpec>, Vec<ResourceTemplateSpec>),
}

impl Offered {
    pub(super) fn of(host: &Host) -> Self {
        let registry = host.registry();
        Self {
            prompts: registry.prompts().map(|(_, p)| p.clone()).collect(),
            resources: (
                registry.resources().map(|(_, r)| r.clone()).collect(),
                registry
                    .resource_templates()
                    .map(|(_, t)| t.clone())
                    .collect(),
            ),
        }
    }
}

/// How long one notification to one client may take before it is dropped.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

/// How many `subscriptions/listen` streams one server holds at once.
pub(super) const MAX_LISTENERS: usize = 1024;

/// The clients connected now, with their subscriptions, and the listen
/// streams open now, to tell when the tools or a resource change.
#[derive(Clone, Default)]
pub(super) struct Peers {
    sessions: Arc<Mutex<Vec<Client>>>,
    listeners: Arc<Mutex<Listeners>>,
}

/// A connected client and the resources it subscribed to.
pub(super) type Client = (Peer<RoleServer>, resources::Subscriptions);

/// The open listen streams, each under a number of its own.
#[derive(Default)]
struct Listeners {
    next: u64,
    open: Vec<Listener>,
}

/// One open listen stream and the resources it accepted updates of.
#[derive(Clone)]
struct Listener {
    number: u64,
    sink: SubscriptionSink,
    resources: Arc<BTreeSet<String>>,
}

/// A listen stream's place among the open ones: dropped when it ends.
pub(super) struct Listening {
    listeners: Arc<Mutex<Listeners>>,
    number: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners
            .open
            .retain(|listener| listener.number != self.number);
    }
}

impl Peers {
    pub(super) fn add(&self, peer: Peer<RoleServer>, subscriptions: resources::Subscriptions) {
        let mut peers = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.push((peer, subscriptions));
    }

    /// A `subscriptions/listen` stream opened: it is told of changes until
    /// the returned guard is dropped. Refused past [`MAX_LISTENERS`].
    pub(super) fn listen(&self, sink: SubscriptionSink) -> Result<Listening, ErrorData> {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if listeners.open.len() >= MAX_LISTENERS {
            return Err(ErrorData::invalid_request(
                format!(
                    "this server holds {MAX_LISTENERS} subscriptions/listen streams already; \
                     try again later"
                ),
                Some(json!({ "code": "too_many_listeners" })),
            ));
        }
        let number = listeners.next;
        listeners.next += 1;
        let resources = sink.accepted().resource_subscriptions.iter().flatten();
        let resources = Arc::new(resources.cloned().collect());
        listeners.open.push(Listener {
            number,
            sink,
            resources,
        });
        Ok(Listening {
            listeners: self.listeners.clone(),
            number,
        })
    }

    /// The clients still connected.
    pub(super) fn open(&self) -> Vec<Client> {
        let mut peers = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.clone()
    }

    /// The listen streams open now.
    fn listening(&self) -> Vec<Listener> {
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.open.clone()
    }

    /// The tools changed, and with them the prompts and the resources when
    /// those are set.
    pub(super) fn changed(&self, prompts: bool, resources: bool) {
        for Listener { sink, .. } in self.listening() {
            // The sink sends only what its stream accepted.
            tokio::spawn(async move {
                let notify = async {
                    let _ = sink.notify_tool_list_changed().await;
                    if prompts {
                        let _ = sink.notify_prompt_list_changed().await;
                    }
                    if resources {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                };
                let _ = tokio::time::timeout(NOTIFY_TIMEOUT, notify).await;
            });
        }
        for (peer, _) in self.open() {
            tokio::spawn(async move {
                let notify = async {
                    let _ = peer.notify_tool_list_changed().await;
                    if prompts {
                        let _ = peer.notify_prompt_list_changed().await;
                    }
                    if resources {
                        let _ = peer.notify_resource_list_changed().await;
                    }
                };
                let _ = tokio::time::timeout(NOTIFY_TIMEOUT, notify).await;
            });
        }
    }

    /// A call announced that the resource at `uri` changed: tell the
    /// clients subscribed to it.
    pub(super) fn resource_updated(&self, uri: String) {
        for Listener {
            sink, resources, ..
        } in self.listening()
        {
            if resources.contains(&uri) {
                let uri = uri.clone();
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(NOTIFY_TIMEOUT, sink.notify_resource_updated(uri))
                        .await;
                });
            }
        }
        for (peer, subscriptions) in self.open() {
            if !subscriptions.contains(&uri) {
                continue;
            }
            let params = ResourceUpdatedNotificationParam::new(uri.clone());
            tokio::spawn(async move {
                let _ = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_resource_updated(params))
                    .await;
            });
        }
    }
}
