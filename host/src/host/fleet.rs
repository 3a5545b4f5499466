//! [`Fleet`]: the host's place in a fleet of servers sharing a Redis
//! server (`[state] backend = "redis"`), and what loading another server's
//! work here needs.
//!
//! Agents made or changed over the API on another server: the server that
//! commits one publishes on `<prefix>:agentfeed`, and every server reloads
//! its named agents when told (and after each subscription, as pub/sub
//! drops what is published while a subscriber reconnects), so a new session
//! anywhere is bound to the agent's latest version.

pub(super) mod failed_loads;

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands as _;

use self::failed_loads::FailedLoads;
use super::Host;
use crate::redis_store::RedisStore;
use crate::redis_store::feed::Wakeups;
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
}

impl Fleet {
    /// A host's part in the fleet sharing `store`.
    pub fn new(store: Arc<RedisStore>) -> Self {
        Self {
            agent_feed: feed(&store),
            store,
            restoring: tokio::sync::Mutex::default(),
            failed_loads: FailedLoads::default(),
        }
    }
}

/// The id every message on the feed wakes.
const CHANGED: &str = "agents";

/// How long to wait before subscribing again after a failure.
const RESUBSCRIBE: Duration = Duration::from_secs(1);

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

    /// Reload the named agents whenever another server of the fleet says
    /// one changed, while `host` lives; `None` on one machine.
    pub fn follow_fleet_agents(host: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let mut changes = host.fleet.as_ref()?.agent_feed.watch(CHANGED);
        let host = Arc::downgrade(host);
        Some(tokio::spawn(async move {
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
        }))
    }
}
