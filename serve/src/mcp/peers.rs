//! The clients connected to an MCP server, with their subscriptions, and
//! what the host's tools offer: to tell the clients when either changes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;
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

/// The clients connected now, with their subscriptions, to tell when the
/// tools or a resource change.
#[derive(Clone, Default)]
pub(super) struct Peers(Arc<Mutex<Vec<Client>>>);

/// A connected client and the resources it subscribed to.
pub(super) type Client = (Peer<RoleServer>, resources::Subscriptions);

impl Peers {
    pub(super) fn add(&self, peer: Peer<RoleServer>, subscriptions: resources::Subscriptions) {
        let mut peers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.push((peer, subscriptions));
    }

    /// The clients still connected.
    pub(super) fn open(&self) -> Vec<Client> {
        let mut peers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.clone()
    }

    /// The tools changed, and with them the prompts and the resources when
    /// those are set.
    pub(super) fn changed(&self, prompts: bool, resources: bool) {
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
