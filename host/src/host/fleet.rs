//! [`Fleet`]: the host's place in a fleet of servers sharing a Redis
//! server (`[state] backend = "redis"`), and what loading another server's
//! work here needs.
//!
//! Agents made or changed over the API on another server: the server that
//! commits one publishes on `<prefix>:agentfeed`, and every server reloads
//! its named agents when told (and after each subscription, as pub/sub
//! drops what is published while a subscriber reconnects), so a new session
//! anywhere is bound to the agent's latest version.
//!
//! Resources a call announces as changed (`toolhost:tool/resource-updates`):
//! each server publishes its calls' on `<prefix>:resourcefeed`, sealed under
//! the cluster key, and tells its own listeners (MCP subscriptions and
//! `subscriptions/listen` streams) of the others'. Pub/sub drops what is
//! published while a subscriber reconnects: an update is a hint to read
//! again, as on one server.

pub(super) mod failed_loads;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use redis::AsyncCommands as _;
use serde::{Deserialize, Serialize};

use self::failed_loads::FailedLoads;
use super::Host;
use crate::redis_store::RedisStore;
use crate::redis_store::feed::Wakeups;
use crate::redis_store::seal::Purpose;
use crate::sandbox::engine::Tiering;

/// A host's part in its fleet.
pub(super) struct Fleet {
    /// The Redis server the fleet's servers share.
    pub store: Arc<RedisStore>,
    /// Where the fleet's servers tell each other an agent changed.
    agent_feed: Arc<Wakeups>,
    /// Held while a version another server of the fleet made is loaded
    /// here for a call: each is loaded once.
    pub restoring: tokio::sync::Mutex<()>,
    /// What failed to load from the fleet's records lately.
    pub failed_loads: FailedLoads,
    /// This server among the fleet's, for as long as it runs.
    server: String,
}

impl Fleet {
    /// A host's part in the fleet sharing `store`.
    pub fn new(store: Arc<RedisStore>) -> Self {
        Self {
            agent_feed: feed(&store),
            store,
            restoring: tokio::sync::Mutex::default(),
            failed_loads: FailedLoads::default(),
            server: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

/// The id every message on the feed wakes.
const CHANGED: &str = "agents";

/// How long to wait before subscribing again after a failure.
const RESUBSCRIBE: Duration = Duration::from_secs(1);

/// A changed resource on the fleet's feed, and which server's call
/// announced it.
#[derive(Serialize, Deserialize)]
struct ResourceUpdate {
    server: String,
    uri: String,
}

/// The longest message on the resource feed a server reads.
const RESOURCE_UPDATE_MAX_BYTES: usize = 16 * 1024;

/// The feed of a fleet's agent changes.
fn feed(store: &Arc<RedisStore>) -> Arc<Wakeups> {
    Wakeups::new(store.clone(), store.key("agentfeed", &[]), RESUBSCRIBE)
}

impl Host {
    /// Tell the fleet's other servers that an agent made over the API
    /// changed here. A failure is logged: they catch up when a session
    /// names the agent or they reload.
    pub(super) async fn tell_fleet_agents_changed(&self) {
        let Some(Fleet {
            store, agent_feed, ..
        }) = &self.fleet
        else {
            return;
        };
        let published: redis::RedisResult<()> = store
            .connection()
            .publish(agent_feed.channel(), CHANGED)
            .await;
        if let Err(e) = published {
            tracing::warn!(
                "the fleet's other servers were not told of the agent change: {}",
                store.failure(&e)
            );
        }
    }

    /// Follow the fleet while `host` lives: reload the named agents
    /// whenever another server says one changed, and share the resource
    /// updates calls announce; `None` on one machine.
    pub fn follow_fleet(host: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let fleet = host.fleet.as_ref()?;
        let agents = follow_agents(fleet.agent_feed.watch(CHANGED), Arc::downgrade(host));
        let channel = fleet.store.key("resourcefeed", &[]);
        let tell = tell_resource_updates(
            fleet.store.clone(),
            channel.clone(),
            fleet.server.clone(),
            host.resource_changes().made_here(),
        );
        let hear = hear_resource_updates(
            fleet.store.clone(),
            channel,
            fleet.server.clone(),
            host.resource_changes().clone(),
        );
        Some(tokio::spawn(async move {
            tokio::join!(agents, tell, hear);
        }))
    }
}

/// Reload the named agents of `host` whenever `changes` wakes, while it lives.
async fn follow_agents(
    mut changes: tokio::sync::broadcast::Receiver<()>,
    host: std::sync::Weak<Host>,
) {
    while let Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) =
        changes.recv().await
    {
        // What was published meanwhile is seen by this one reload.
        while changes.try_recv().is_ok() {}
        let Some(host) = host.upgrade() else {
            return;
        };
        let _editing = host.editing.lock().await;
        let config = host.config();
        host.load_named_agents(&config, Tiering::BaselineFirst)
            .await;
        host.release_versions();
    }
}

/// Publish each resource update `server`'s calls announce on `channel`.
async fn tell_resource_updates(
    store: Arc<RedisStore>,
    channel: String,
    server: String,
    mut made_here: tokio::sync::broadcast::Receiver<String>,
) {
    loop {
        let uri = match made_here.recv().await {
            Ok(uri) => uri,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "the fleet's servers missed resource updates");
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let update = ResourceUpdate {
            server: server.clone(),
            uri,
        };
        let body = serde_json::json!(update).to_string();
        let sealed = store
            .seal()
            .seal(Purpose::ResourceUpdate, &channel, "", &body);
        let published: redis::RedisResult<()> = store.connection().publish(&channel, sealed).await;
        if let Err(e) = published {
            tracing::warn!(
                "the fleet's other servers were not told of a resource update: {}",
                store.failure(&e)
            );
        }
    }
}

/// Tell `changes`' listeners of each resource update another server of
/// the fleet publishes on `channel`; one not sealed by the fleet, too long
/// or naming an address no call could announce is dropped (logged).
async fn hear_resource_updates(
    store: Arc<RedisStore>,
    channel: String,
    server: String,
    changes: crate::caps::resource_updates::ResourceChanges,
) {
    loop {
        match store.subscribe(&channel).await {
            Ok(mut messages) => {
                while let Some(message) = messages.next().await {
                    let Ok(payload) = message.get_payload::<String>() else {
                        continue;
                    };
                    match heard_update(&store, &channel, &payload) {
                        Ok(update) if update.server != server => {
                            changes.announced_elsewhere(update.uri);
                        }
                        Ok(_) => {}
                        Err(why) => tracing::warn!(%channel, "a resource update is dropped: {why}"),
                    }
                }
            }
            Err(e) => tracing::warn!(%channel, "cannot subscribe: {e}"),
        }
        tokio::time::sleep(RESUBSCRIBE).await;
    }
}

/// The update in `payload`, read from `channel`, if it is one a server of
/// the fleet published.
fn heard_update(
    store: &RedisStore,
    channel: &str,
    payload: &str,
) -> Result<ResourceUpdate, String> {
    if payload.len() > RESOURCE_UPDATE_MAX_BYTES {
        return Err(format!(
            "{} bytes, over {RESOURCE_UPDATE_MAX_BYTES}",
            payload.len()
        ));
    }
    let body = store
        .seal()
        .open(Purpose::ResourceUpdate, channel, "", payload)
        .map_err(|e| e.to_string())?;
    let update: ResourceUpdate = serde_json::from_str(body).map_err(|e| e.to_string())?;
    if let Some(problem) = crate::resources::uri_problem(&update.uri) {
        return Err(format!("the address {problem}"));
    }
    Ok(update)
}
