//! Wake-ups over Redis pub/sub: a connection of its own per channel, made
//! again whenever it drops, for as long as whoever it wakes lives.
//! Pub/sub drops what is published while a subscriber reconnects, so a
//! wake-up is only ever a hint to read the state again.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt as _;

use super::RedisStore;

/// What a [`relay`] wakes.
pub trait Woken: Send + Sync + 'static {
    /// A message published on the channel.
    fn message(&self, payload: &str);
    /// The subscription was made (again): what was published before is lost.
    fn subscribed(&self);
}

/// Keep `channel` subscribed and tell `woken` what arrives, until `woken`
/// is dropped; after a failure, subscribe again `retry` later.
pub async fn relay<W: Woken>(
    store: Arc<RedisStore>,
    channel: String,
    woken: Weak<W>,
    retry: Duration,
) {
    while woken.strong_count() > 0 {
        match store.subscribe(&channel).await {
            Ok(mut messages) => {
                let Some(listener) = woken.upgrade() else {
                    return;
                };
                listener.subscribed();
                drop(listener);
                while let Some(message) = messages.next().await {
                    let Some(listener) = woken.upgrade() else {
                        return;
                    };
                    if let Ok(payload) = message.get_payload::<String>() {
                        listener.message(&payload);
                    }
                }
            }
            Err(e) => tracing::warn!(%channel, "cannot subscribe: {e}"),
        }
        tokio::time::sleep(retry).await;
    }
}
