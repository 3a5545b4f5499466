//! Leases: a key in Redis that one holder owns for a bounded time, for the
//! exclusions several servers must share (a session's write slot, the owner
//! of a parked call, the server firing a reminder).
//!
//! The rule that makes a lease safe when a holder stalls or loses Redis:
//!
//! - It is taken with `SET key token NX PX ttl`, and renewed and released
//!   only by scripts that check the token first, so nobody but its holder
//!   ever extends or frees it.
//! - Its holder renews it every `ttl / 3`. Each renewal that succeeds makes
//!   it valid, for the holder, until the instant the renewal was *sent* plus
//!   `ttl − margin`: Redis keeps it until at least that instant plus
//!   `margin`, whatever the network did to the reply.
//! - Once that instant passes without a renewal, the holder counts it lost
//!   ([`Lease::lost`] completes) and must stop what it guards — before
//!   Redis can give it to anyone else. `margin` covers the clocks' drift
//!   over one `ttl` and the time the holder needs to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::Script;
use tokio::sync::watch;
use tokio::time::Instant;

use super::RedisStore;

/// `KEYS`: the lease. `ARGV`: token, ttl in ms. 1 if renewed.
static RENEW: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then
           return redis.call('PEXPIRE', KEYS[1], ARGV[2])
         end
         return 0",
    )
});

/// `KEYS`: the lease. `ARGV`: token. 1 if released.
static RELEASE: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then
           return redis.call('DEL', KEYS[1])
         end
         return 0",
    )
});

/// `KEYS`: the lease, a key that must exist. `ARGV`: token, ttl in ms.
/// `taken`, `held` or `missing`.
static ACQUIRE_BESIDE: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| {
    Script::new(
        "if redis.call('EXISTS', KEYS[2]) == 0 then return 'missing' end
         if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'taken' end
         return 'held'",
    )
});

/// Why a lease taken beside another key was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Someone holds it.
    Held,
    /// The key it must stand beside is gone (what it guards has ended).
    Missing,
}

/// How long a lease lasts without renewal, and how much earlier than Redis
/// its holder gives it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTerms {
    /// The key's time to live, renewed every third of it.
    pub ttl: Duration,
    /// How long before Redis would free it the holder counts it lost.
    pub margin: Duration,
}

impl LeaseTerms {
    /// Terms of `ttl` with a margin of a fifth of it.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            margin: ttl / 5,
        }
    }
}

/// A lease this holder owns; released when dropped.
pub struct Lease {
    key: String,
    token: String,
    store: Arc<RedisStore>,
    lost: watch::Receiver<bool>,
    /// Stops the renewal task.
    stop: Arc<tokio::sync::Notify>,
    released: AtomicBool,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("key", &self.key)
            .field("lost", &*self.lost.borrow())
            .finish_non_exhaustive()
    }
}

impl Lease {
    /// Take the lease `key` if nobody holds it: `None` if someone does.
    /// Its renewals run on the current runtime until it is dropped or lost.
    pub async fn acquire(
        store: &Arc<RedisStore>,
        key: String,
        terms: LeaseTerms,
    ) -> Result<Option<Self>, String> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let sent = Instant::now();
        let mut connection = store.connection();
        let asking = Asking::new(store, &connection, &key, &token);
        let taken: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(millis(terms.ttl))
            .query_async(&mut connection)
            .await
            .map_err(|e| store.failure(&e))?;
        asking.answered();
        if taken.is_none() {
            return Ok(None);
        }
        Ok(Some(Self::start(store, key, token, terms, sent)))
    }

    /// Take the lease `key` if nobody holds it and `beside` exists, both
    /// checked at once (a session's slot is never taken once its record is
    /// gone).
    pub async fn acquire_beside(
        store: &Arc<RedisStore>,
        key: String,
        beside: &str,
        terms: LeaseTerms,
    ) -> Result<Result<Self, Refused>, String> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let sent = Instant::now();
        let mut connection = store.connection();
        let asking = Asking::new(store, &connection, &key, &token);
        let answer: String = ACQUIRE_BESIDE
            .key(&key)
            .key(beside)
            .arg(&token)
            .arg(millis(terms.ttl))
            .invoke_async(&mut connection)
            .await
            .map_err(|e| store.failure(&e))?;
        asking.answered();
        Ok(match answer.as_str() {
            "taken" => Ok(Self::start(store, key, token, terms, sent)),
            "missing" => Err(Refused::Missing),
            _ => Err(Refused::Held),
        })
    }

    /// A lease just taken at `sent`, its renewals started.
    fn start(
        store: &Arc<RedisStore>,
        key: String,
        token: String,
        terms: LeaseTerms,
        sent: Instant,
    ) -> Self {
        let (lost_tx, lost) = watch::channel(false);
        let stop = Arc::new(tokio::sync::Notify::new());
        tokio::spawn(renew(
            store.clone(),
            key.clone(),
            token.clone(),
            terms,
            sent,
            lost_tx,
            stop.clone(),
        ));
        Self {
            key,
            token,
            store: store.clone(),
            lost,
            stop,
            released: AtomicBool::new(false),
        }
    }

    /// The key it holds.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether it has been lost (see the module's rule).
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Completes once the lease is lost: stop what it guards now.
    pub async fn lost(&self) {
        let mut lost = self.lost.clone();
        // An error means the renewal task ended, which it does only after
        // marking the lease lost or being stopped by the holder.
        let _ = lost.wait_for(|lost| *lost).await;
    }

    /// Free it now, if it is still ours.
    pub async fn release(self) {
        self.release_now().await;
    }

    async fn release_now(&self) {
        if self.released.swap(true, Ordering::Relaxed) {
            return;
        }
        self.stop.notify_one();
        let released: redis::RedisResult<i64> = RELEASE
            .key(&self.key)
            .arg(&self.token)
            .invoke_async(&mut self.store.connection())
            .await;
        if let Err(e) = released {
            // It expires on its own within its ttl.
            tracing::warn!(key = %self.key, "cannot release a lease: {}", self.store.failure(&e));
        }
    }

    /// Stop renewing without releasing, as a holder that died would: for
    /// tests of what the others see.
    #[doc(hidden)]
    pub fn abandon(self) {
        self.released.store(true, Ordering::Relaxed);
        self.stop.notify_one();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.released.swap(true, Ordering::Relaxed) {
            return;
        }
        self.stop.notify_one();
        release_later(&self.store, &self.key, &self.token);
    }
}

/// Release `key` if `token` holds it, in the background.
fn release_later(store: &Arc<RedisStore>, key: &str, token: &str) {
    release_later_on(store, store.connection(), key, token);
}

/// [`release_later`] on `connection` (after what was sent on it before).
fn release_later_on(
    store: &Arc<RedisStore>,
    mut connection: redis::aio::ConnectionManager,
    key: &str,
    token: &str,
) {
    let (store, key, token) = (store.clone(), key.to_string(), token.to_string());
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let released: redis::RedisResult<i64> = RELEASE
                .key(&key)
                .arg(&token)
                .invoke_async(&mut connection)
                .await;
            if let Err(e) = released {
                tracing::warn!(%key, "cannot release a lease: {}", store.failure(&e));
            }
        });
    }
}

/// A request for a lease in flight: if the caller gives up on it (its
/// future is dropped) before the answer, Redis may have given the lease
/// all the same, so it is released in the background — on the connection
/// the request went on, so the release cannot overtake it.
struct Asking<'a> {
    store: &'a Arc<RedisStore>,
    connection: redis::aio::ConnectionManager,
    key: &'a str,
    token: &'a str,
    answered: bool,
}

impl<'a> Asking<'a> {
    fn new(
        store: &'a Arc<RedisStore>,
        connection: &redis::aio::ConnectionManager,
        key: &'a str,
        token: &'a str,
    ) -> Self {
        Self {
            store,
            connection: connection.clone(),
            key,
            token,
            answered: false,
        }
    }

    fn answered(mut self) {
        self.answered = true;
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if !self.answered {
            release_later_on(self.store, self.connection.clone(), self.key, self.token);
        }
    }
}

/// Renew `key` every `ttl / 3` until stopped; mark it lost once it has gone
/// `ttl − margin` since the last renewal that succeeded was sent.
async fn renew(
    store: Arc<RedisStore>,
    key: String,
    token: String,
    terms: LeaseTerms,
    acquired: Instant,
    lost: watch::Sender<bool>,
    stop: Arc<tokio::sync::Notify>,
) {
    let every = terms.ttl / 3;
    let mut valid_until = acquired + terms.ttl.saturating_sub(terms.margin);
    let mut next = acquired + every;
    loop {
        let wake = next.min(valid_until);
        tokio::select! {
            () = stop.notified() => return,
            () = tokio::time::sleep_until(wake) => {}
        }
        if Instant::now() >= valid_until {
            tracing::warn!(%key, "lease lost: no renewal succeeded in time");
            let _ = lost.send(true);
            return;
        }
        let sent = Instant::now();
        let mut connection = store.connection();
        let mut invocation = RENEW.key(&key);
        invocation.arg(&token).arg(millis(terms.ttl));
        let renewal = invocation.invoke_async::<i64>(&mut connection);
        let answer = tokio::select! {
            () = stop.notified() => return,
            () = tokio::time::sleep_until(valid_until) => None,
            answer = renewal => Some(answer),
        };
        match answer {
            Some(Ok(1)) => {
                valid_until = sent + terms.ttl.saturating_sub(terms.margin);
                next = sent + every;
            }
            Some(Ok(_)) => {
                tracing::warn!(%key, "lease lost: another holder has it");
                let _ = lost.send(true);
                return;
            }
            Some(Err(e)) => {
                tracing::warn!(%key, "cannot renew a lease: {}", store.failure(&e));
                // Try again soon, while it is still valid.
                next = Instant::now() + (every / 4).max(Duration::from_millis(10));
            }
            None => {}
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis_store::RedisOptions;
    use toolhost_test_artifacts::redis::RedisServer;

    fn store(server: &RedisServer) -> Arc<RedisStore> {
        let options = RedisOptions {
            response_timeout: Duration::from_millis(200),
            connect_timeout: Duration::from_millis(200),
            ..RedisOptions::new(server.url())
        };
        RedisStore::open(&options, &crate::redis_store::TEST_CLUSTER_KEY).unwrap()
    }

    const TERMS: LeaseTerms = LeaseTerms {
        ttl: Duration::from_millis(600),
        margin: Duration::from_millis(120),
    };

    #[tokio::test]
    async fn one_holder_at_a_time_and_renewed_past_its_ttl() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let store = store(&server);
        let first = Lease::acquire(&store, "l".into(), TERMS)
            .await
            .unwrap()
            .unwrap();
        assert!(
            Lease::acquire(&store, "l".into(), TERMS)
                .await
                .unwrap()
                .is_none()
        );
        tokio::time::sleep(TERMS.ttl * 3).await;
        assert!(!first.is_lost(), "renewals keep it");
        assert!(
            Lease::acquire(&store, "l".into(), TERMS)
                .await
                .unwrap()
                .is_none(),
            "still held three ttls later"
        );
        first.release().await;
        let second = Lease::acquire(&store, "l".into(), TERMS).await.unwrap();
        assert!(second.is_some(), "free as soon as it is released");
        drop(second);
        // Dropping releases it in the background.
        let mut again = None;
        for _ in 0..50 {
            again = Lease::acquire(&store, "l".into(), TERMS).await.unwrap();
            if again.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(again.is_some(), "free soon after it is dropped");
    }

    #[tokio::test]
    async fn a_dead_holders_lease_frees_itself_within_its_ttl() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let store = store(&server);
        Lease::acquire(&store, "l".into(), TERMS)
            .await
            .unwrap()
            .unwrap()
            .abandon();
        assert!(
            Lease::acquire(&store, "l".into(), TERMS)
                .await
                .unwrap()
                .is_none()
        );
        tokio::time::sleep(TERMS.ttl + Duration::from_millis(50)).await;
        assert!(
            Lease::acquire(&store, "l".into(), TERMS)
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn a_holder_cut_off_from_redis_gives_it_up_while_redis_still_holds_it() {
        let Some(mut server) = RedisServer::start() else {
            return;
        };
        let store = store(&server);
        let terms = LeaseTerms {
            ttl: Duration::from_secs(3),
            margin: Duration::from_secs(1),
        };
        let lease = Lease::acquire(&store, "l".into(), terms)
            .await
            .unwrap()
            .unwrap();
        server.kill();
        lease.lost().await;
        server.restart().unwrap();
        let health = store.health().await;
        assert!(health.reachable, "{health:?}");
        // Redis kept the key with its expiry (appendfsync always): when the
        // holder gave it up, nobody else could have taken it yet.
        let left: i64 = redis::cmd("PTTL")
            .arg("l")
            .query_async(&mut store.connection())
            .await
            .unwrap();
        assert!(
            left > 0,
            "the key must outlive its holder's claim: PTTL {left}"
        );
        assert!(
            Lease::acquire(&store, "l".into(), terms)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_lease_taken_over_is_never_renewed_or_released_by_its_old_holder() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let store = store(&server);
        let old = Lease::acquire(&store, "l".into(), TERMS)
            .await
            .unwrap()
            .unwrap();
        // As if it expired while the old holder stalled: someone else's now.
        let _: () = redis::cmd("SET")
            .arg("l")
            .arg("someone-else")
            .query_async(&mut store.connection())
            .await
            .unwrap();
        old.lost().await;
        old.release().await;
        let holder: String = redis::cmd("GET")
            .arg("l")
            .query_async(&mut store.connection())
            .await
            .unwrap();
        assert_eq!(holder, "someone-else");
    }
}
