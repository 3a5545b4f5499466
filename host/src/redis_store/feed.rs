//! Wake-ups over Redis pub/sub: one connection of its own per channel,
//! made when the first waiter watches and again whenever it drops, for as
//! long as the [`Wakeups`] live. Pub/sub drops what is published while a
//! subscriber reconnects, so a wake-up is only ever a hint to read the
//! state again (and every waiter is woken after each (re)subscription).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::time::Duration;

use futures::StreamExt as _;
use tokio::sync::broadcast;

use super::RedisStore;

/// Waiters by id on one channel, whose messages name the id to wake
/// (`<id>` or `<id> <anything>`).
pub struct Wakeups {
    store: Arc<RedisStore>,
    channel: String,
    /// How long to wait before subscribing again after a failure.
    retry: Duration,
    watchers: Mutex<HashMap<String, broadcast::Sender<()>>>,
    started: Once,
}

impl Wakeups {
    /// Wake-ups from `channel` of `store`, subscribing again `retry` after
    /// a failure.
    pub fn new(store: Arc<RedisStore>, channel: String, retry: Duration) -> Arc<Self> {
        Arc::new(Self {
            store,
            channel,
            retry,
            watchers: Mutex::default(),
            started: Once::new(),
        })
    }

    /// The channel messages are published on.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Woken whenever a message names `id`, and after every subscription;
    /// missed wake-ups wait in the receiver (a lagging one has been woken).
    pub fn watch(self: &Arc<Self>, id: &str) -> broadcast::Receiver<()> {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            self.started.call_once(|| {
                let (store, channel) = (self.store.clone(), self.channel.clone());
                runtime.spawn(relay(store, channel, Arc::downgrade(self), self.retry));
            });
        }
        let mut watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        watchers.retain(|_, sender| sender.receiver_count() > 0);
        watchers
            .entry(id.to_string())
            .or_insert_with(|| broadcast::channel(16).0)
            .subscribe()
    }

    fn wake(&self, id: &str) {
        let watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = watchers.get(id) {
            let _ = sender.send(());
        }
    }

    fn wake_all(&self) {
        let watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        for sender in watchers.values() {
            let _ = sender.send(());
        }
    }
}

/// Keep `channel` subscribed and wake the watchers each message names,
/// until the wake-ups are dropped; after a failure, subscribe again
/// `retry` later.
async fn relay(store: Arc<RedisStore>, channel: String, wakeups: Weak<Wakeups>, retry: Duration) {
    while wakeups.strong_count() > 0 {
        match store.subscribe(&channel).await {
            Ok(mut messages) => {
                let Some(listener) = wakeups.upgrade() else {
                    return;
                };
                listener.wake_all();
                drop(listener);
                while let Some(message) = messages.next().await {
                    let Some(listener) = wakeups.upgrade() else {
                        return;
                    };
                    if let Ok(payload) = message.get_payload::<String>() {
                        let id = payload.split(' ').next().unwrap_or_default();
                        listener.wake(id);
                    }
                }
            }
            Err(e) => tracing::warn!(%channel, "cannot subscribe: {e}"),
        }
        tokio::time::sleep(retry).await;
    }
}
