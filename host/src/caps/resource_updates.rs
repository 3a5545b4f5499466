//! `toolhost:tool/resource-updates`: a call tells the clients subscribed to
//! a resource that it changed.
//!
//! Always served to `execute`, and only for the addresses the tool's own
//! component offers (a listed resource, or one matching its templates):
//! a tool cannot make clients re-read another tool's resources. Each
//! address goes to the host's [`ResourceChanges`] at once, once a call, for
//! at most [`MAX_RESOURCE_UPDATES`] addresses; the surfaces that track
//! subscriptions (MCP) send it on. Loading, dry-run and prompt or resource
//! requests are refused: a read that announced a change would have
//! subscribed clients read again, for ever.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;
use wasmtime::component::HasSelf;

use super::{CallScope, Capability, Grants, OUTSIDE_A_CALL, Outside};
use crate::bindings::toolhost::tool::resource_updates::Host;

/// The most addresses one call may announce.
pub const MAX_RESOURCE_UPDATES: usize = 64;

/// How many announcements wait for a slow listener before it misses some.
const BACKLOG: usize = 1024;

/// The host's stream of changed resource addresses. Cloning shares it.
#[derive(Clone, Debug)]
pub struct ResourceChanges {
    /// Every change: this host's calls' and, in a fleet, the others'.
    heard: broadcast::Sender<String>,
    /// This host's calls' only, for the fleet's other servers.
    made_here: broadcast::Sender<String>,
}

impl Default for ResourceChanges {
    fn default() -> Self {
        Self {
            heard: broadcast::Sender::new(BACKLOG),
            made_here: broadcast::Sender::new(BACKLOG),
        }
    }
}

impl ResourceChanges {
    /// Hear of every address announced from now on. A listener that falls
    /// more than 1024 behind misses the oldest (`RecvError::Lagged`).
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.heard.subscribe()
    }

    /// Hear of the addresses announced on this host from now on (not those
    /// another server of the fleet announced), to tell the others.
    pub fn made_here(&self) -> broadcast::Receiver<String> {
        self.made_here.subscribe()
    }

    /// Tell the listeners that `uri` changed (a host-owned resource, or a
    /// tool's through [`ResourceUpdates`]).
    pub fn announce(&self, uri: String) {
        // No listener is not an error: nobody is subscribed.
        let _ = self.made_here.send(uri.clone());
        let _ = self.heard.send(uri);
    }

    /// Tell the listeners that `uri` changed on another server of the fleet.
    pub fn announced_elsewhere(&self, uri: String) {
        let _ = self.heard.send(uri);
    }
}

/// Whether an address is one the calling tool's component offers.
pub type Owns = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// One call's announcements, shared by its attempts. Cloning shares it.
#[derive(Clone)]
pub struct ResourceUpdates {
    allowed: Result<(Owns, ResourceChanges), &'static str>,
    sent: Arc<Mutex<BTreeSet<String>>>,
}

impl std::fmt::Debug for ResourceUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceUpdates")
            .field("allowed", &self.allowed.is_ok())
            .field("sent", &self.sent)
            .finish()
    }
}

/// The pipeline makes a call's (it knows the resources the tool owns): an
/// instance takes its call's.
impl Capability for ResourceUpdates {
    fn for_call(_: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(scope.resource_updates.clone())
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(OUTSIDE_A_CALL))
    }
}

impl ResourceUpdates {
    /// A call's: it may announce what `owns` accepts, to `changes`.
    pub fn for_call(owns: Owns, changes: ResourceChanges) -> Self {
        Self {
            allowed: Ok((owns, changes)),
            sent: Arc::default(),
        }
    }

    /// Every announcement refused, saying it is not allowed `during` this.
    pub fn refused(during: &'static str) -> Self {
        Self {
            allowed: Err(during),
            sent: Arc::default(),
        }
    }

    fn announce(&self, uri: String) -> Result<(), String> {
        let (owns, changes) = self
            .allowed
            .as_ref()
            .map_err(|during| format!("resource updates are not announced during {during}"))?;
        if let Some(problem) = crate::resources::uri_problem(&uri) {
            return Err(format!("the address {problem}"));
        }
        if !owns(&uri) {
            return Err(format!(
                "{} is not a resource this tool's component offers: a tool announces \
                 changes to its own resources only",
                crate::resources::shown(&uri)
            ));
        }
        {
            let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            if sent.contains(&uri) {
                return Ok(());
            }
            if sent.len() >= MAX_RESOURCE_UPDATES {
                return Err(format!(
                    "this call announced {MAX_RESOURCE_UPDATES} addresses already; that is \
                     the most a call may"
                ));
            }
            sent.insert(uri.clone());
        }
        changes.announce(uri);
        Ok(())
    }
}

impl Host for ResourceUpdates {
    fn updated(&mut self, uri: String) -> Result<(), String> {
        self.announce(uri)
    }
}

/// Link `toolhost:tool/resource-updates` into a linker whose store data
/// holds [`ResourceUpdates`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut ResourceUpdates,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::resource_updates::add_to_linker::<T, HasSelf<ResourceUpdates>>(
        linker, get,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_announces_its_own_addresses_once_each_up_to_the_cap() {
        let changes = ResourceChanges::default();
        let mut heard = changes.subscribe();
        let owns: Owns = Arc::new(|uri: &str| uri.starts_with("mine:"));
        let mut updates = ResourceUpdates::for_call(owns, changes);
        updates.updated("mine:a".into()).unwrap();
        updates.updated("mine:a".into()).unwrap();
        assert_eq!(heard.try_recv().unwrap(), "mine:a");
        assert!(heard.try_recv().is_err(), "announced once");
        let theirs = updates.updated("theirs:b".into()).unwrap_err();
        assert!(theirs.contains("`theirs:b` is not a resource"), "{theirs}");
        for i in 1..MAX_RESOURCE_UPDATES {
            updates.updated(format!("mine:{i}")).unwrap();
        }
        let over = updates.updated("mine:over".into()).unwrap_err();
        assert!(over.contains("64 addresses already"), "{over}");
        let long = format!("mine:{}", "a".repeat(1 << 20));
        let err = updates.updated(long).unwrap_err();
        assert!(err.contains("at most 2048 are allowed"), "{err}");
        let mut refused = ResourceUpdates::refused("a resource read");
        let err = refused.updated("mine:a".into()).unwrap_err();
        assert!(err.contains("during a resource read"), "{err}");
    }
}
