//! A session's events in Redis, for a fleet: one stream per session that
//! every server appends to and reads from, so a client following the
//! session on any server sees the events of calls made on all of them.
//!
//! - `events:<id>`: a Redis Stream whose entry `0-<n>` is event `n` (its
//!   kind, instant and JSON payload), so ids are the fleet's one sequence,
//!   `events-seq:<id>` allocating them. The payload is sealed under the
//!   cluster key (`redis_store::seal`) with its kind and instant, bound to
//!   the session's stream: an event a server of the fleet did not append
//!   there is skipped, so no writer of Redis shows a client an event (a
//!   custom tool's use, a question, a message) to act on;
//! - `evbytes:<id>` and `evbytes`: the bytes the session's stream and all
//!   streams hold. Appending an event trims, in the same script, the
//!   session's oldest events while the stream is over [`MAX_EVENTS`] or
//!   `[server] session_history_mb`, then the oldest events of the streams
//!   appended to longest ago while all of them are over `history_mb`
//!   (counted fleet-wide); whole events go, where one machine drops
//!   payloads first, and never the one just appended;
//! - `evstreams` and `evorder`: the sessions whose streams hold events,
//!   scored by the order of their last append (a counter, not a clock, so
//!   servers' clocks never reorder it);
//! - an append to a session whose record is gone is refused, so an ended
//!   session's stream is never made again;
//! - `eventfeed`: a pub/sub channel each append publishes `<id> <n>` on.
//!   It only wakes readers up: a reader re-reads the stream after every
//!   (re)subscription and on a timer, since pub/sub drops what is sent
//!   while a subscriber reconnects.
//!
//! A server appends a session's events in the order they are emitted,
//! through one queue per session, so a call's `actions.requested` is
//! always before its `action.result`.

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use redis::Script;
use redis::streams::StreamRangeReply;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::events::{EVENT_OVERHEAD_BYTES, Event, EventKind, MAX_EVENTS, SharedLog, next_after};
use crate::redis_store::RedisStore;
use crate::redis_store::feed::Wakeups;
use crate::redis_store::seal::Purpose;

/// Events one read takes from a stream.
const PAGE: usize = 512;
/// How often a follower reads its stream again without a wake-up.
const REREAD: Duration = Duration::from_secs(1);
/// Events a server may have emitted and not yet appended, per session;
/// past it, new ones are dropped (and logged).
const OUTBOX: usize = 1024;
/// The most events appended in one script.
const MAX_BATCH: usize = 64;
/// How long an event nobody waits for waits for others to be appended with.
const BATCH_WINDOW: Duration = Duration::from_millis(2);

/// `KEYS`: stream, sequence, session bytes, all bytes, the session's
/// record, the streams holding events (by last append), the append order.
/// `ARGV`: max events, max session bytes, max bytes, channel, session id,
/// stream and byte key prefixes, then kind, instant and payload of each
/// event in turn. The last new event's number (the others precede it), or
/// 0 when the session has ended.
///
/// Past the session's count or bytes, its own oldest events go; past the
/// fleet's bytes, the oldest events of the streams appended to longest
/// ago, other sessions' only (the appending one is held to its own
/// budget). The last event just appended is never one that goes.
static APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "if redis.call('EXISTS', KEYS[5]) == 0 then return 0 end
         local n, held, all
         for i = 8, #ARGV, 3 do
           n = redis.call('INCR', KEYS[2])
           redis.call('XADD', KEYS[1], '0-' .. n, 'k', ARGV[i], 'at', ARGV[i + 1], 'd', ARGV[i + 2])
           local size = {EVENT_OVERHEAD_BYTES} + #ARGV[i + 2]
           held = redis.call('INCRBY', KEYS[3], size)
           all = redis.call('INCRBY', KEYS[4], size)
         end
         local newest = '0-' .. n
         redis.call('ZADD', KEYS[6], redis.call('INCR', KEYS[7]), ARGV[5])
         local function drop_oldest(stream, bytes)
           local oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
           if not oldest or (stream == KEYS[1] and oldest[1] == newest) then return nil end
           local freed = {EVENT_OVERHEAD_BYTES}
           local fields = oldest[2]
           for i = 1, #fields, 2 do
             if fields[i] == 'd' then freed = freed + #fields[i + 1] end
           end
           redis.call('XDEL', stream, oldest[1])
           all = redis.call('DECRBY', KEYS[4], freed)
           return redis.call('DECRBY', bytes, freed)
         end
         local max_events = tonumber(ARGV[1])
         local max_held = tonumber(ARGV[2])
         local max_all = tonumber(ARGV[3])
         while redis.call('XLEN', KEYS[1]) > max_events or held > max_held do
           local left = drop_oldest(KEYS[1], KEYS[3])
           if not left then break end
           held = left
         end
         while all > max_all do
           local id = redis.call('ZRANGE', KEYS[6], 0, 0)[1]
           if not id or id == ARGV[5] then break end
           if not drop_oldest(ARGV[6] .. id, ARGV[7] .. id) then
             redis.call('ZREM', KEYS[6], id)
           end
         end
         redis.call('PUBLISH', ARGV[4], ARGV[5] .. ' ' .. n)
         return n"
    ))
});

/// What the streams may hold: per session, and all together.
#[derive(Debug, Clone, Copy)]
pub(super) struct StreamLimits {
    /// Bytes of one session's stream.
    pub session_bytes: usize,
    /// Bytes of every stream together.
    pub every_bytes: usize,
}

/// Where a session's events are kept in Redis, and how they are appended.
#[derive(Clone)]
struct Appender {
    store: Arc<RedisStore>,
    session: String,
    /// The session's record: a follower stops once it is gone.
    record: String,
    stream: String,
    seq: String,
    bytes: String,
    all_bytes: String,
    /// The sessions whose streams hold events, oldest append first.
    streams: String,
    order: String,
    stream_prefix: String,
    bytes_prefix: String,
    channel: String,
    limits: StreamLimits,
}

/// One event waiting to be appended.
struct Outgoing {
    kind: EventKind,
    at: DateTime<Utc>,
    payload: String,
    /// Told the event's number once it is appended.
    reply: Option<oneshot::Sender<Result<u64, String>>>,
}

impl Appender {
    /// Append `batch`, in order, in one script: the number of each.
    async fn append(&self, batch: &[Outgoing]) -> Result<Vec<u64>, String> {
        let mut invocation = APPEND.key(&self.stream);
        invocation
            .key(&self.seq)
            .key(&self.bytes)
            .key(&self.all_bytes)
            .key(&self.record)
            .key(&self.streams)
            .key(&self.order)
            .arg(MAX_EVENTS)
            .arg(self.limits.session_bytes)
            .arg(self.limits.every_bytes)
            .arg(&self.channel)
            .arg(&self.session)
            .arg(&self.stream_prefix)
            .arg(&self.bytes_prefix);
        for event in batch {
            let at = event.at.to_rfc3339();
            let field = format!("{} {at}", event.kind.name());
            let sealed =
                self.store
                    .seal()
                    .seal(Purpose::Event, &self.stream, &field, &event.payload);
            invocation.arg(event.kind.name()).arg(at).arg(sealed);
        }
        let last: u64 = invocation
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))?;
        if last == 0 {
            return Err(format!("session `{}` has ended", self.session));
        }
        let first = last + 1 - batch.len() as u64;
        Ok((first..=last).collect())
    }

    /// Append what `outbox` brings, in order, until every sender is gone:
    /// what is queued together goes in one script, and an event no caller
    /// waits for waits up to [`BATCH_WINDOW`] for company (a short call's
    /// `actions.requested` then travels, and is made durable, with its
    /// `action.result`).
    async fn run(self, mut outbox: mpsc::Receiver<Outgoing>) {
        while let Some(first) = outbox.recv().await {
            let until = tokio::time::Instant::now() + BATCH_WINDOW;
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                let next = match outbox.try_recv() {
                    Ok(next) => Some(next),
                    Err(_) if batch.iter().any(|e| e.reply.is_some()) => None,
                    Err(_) => tokio::time::timeout_at(until, outbox.recv())
                        .await
                        .ok()
                        .flatten(),
                };
                match next {
                    Some(next) => batch.push(next),
                    None => break,
                }
            }
            let appended = self.append(&batch).await;
            if let Err(e) = &appended {
                let kinds: Vec<&str> = batch.iter().map(|e| e.kind.name()).collect();
                tracing::warn!(
                    session = %self.session,
                    "events were not recorded ({}): {e}",
                    kinds.join(", ")
                );
            }
            for (i, event) in batch.into_iter().enumerate() {
                if let Some(reply) = event.reply {
                    let _ = reply.send(appended.as_ref().map(|n| n[i]).map_err(Clone::clone));
                }
            }
        }
    }

    /// Whether the session is gone (another server ended or swept it); not
    /// while Redis cannot say.
    async fn ended(&self) -> bool {
        let exists = redis::cmd("EXISTS")
            .arg(&self.record)
            .query_async::<bool>(&mut self.store.connection())
            .await;
        matches!(exists, Ok(false))
    }

    /// Events after `after` (from the first when `None`), of at most
    /// `count` read.
    async fn range(&self, after: Option<u64>, count: usize) -> Result<Page, String> {
        let start = after.map_or_else(|| "-".to_string(), |n| format!("(0-{n}"));
        self.read(&start, "+", count).await
    }

    async fn read(&self, start: &str, end: &str, count: usize) -> Result<Page, String> {
        let reply: StreamRangeReply = redis::cmd("XRANGE")
            .arg(&self.stream)
            .arg(start)
            .arg(end)
            .arg("COUNT")
            .arg(count)
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))?;
        let last = reply
            .ids
            .last()
            .and_then(|entry| entry.id.strip_prefix("0-")?.parse().ok());
        let full = reply.ids.len() >= count;
        let events = reply
            .ids
            .iter()
            .map(|entry| -> Result<Option<Event>, String> {
                let field = |name: &str| -> Result<String, String> {
                    entry
                        .get::<String>(name)
                        .ok_or_else(|| format!("event {} in Redis has no `{name}`", entry.id))
                };
                let Some(id) = entry
                    .id
                    .strip_prefix("0-")
                    .and_then(|n| n.parse::<u64>().ok())
                else {
                    tracing::warn!(
                        "skipping an event of session `{}` in Redis: its id is {:?}",
                        self.session,
                        entry.id
                    );
                    return Ok(None);
                };
                let (Ok(name), Ok(at_text), Ok(sealed)) = (field("k"), field("at"), field("d"))
                else {
                    tracing::warn!(
                        "skipping event {id} of session `{}` in Redis: it lacks a field",
                        self.session
                    );
                    return Ok(None);
                };
                let opened = self.store.seal().open(
                    Purpose::Event,
                    &self.stream,
                    &format!("{name} {at_text}"),
                    &sealed,
                );
                let Ok(payload) = opened else {
                    tracing::warn!(
                        "skipping event {id} of session `{}` in Redis: no server of the fleet \
                         appended it",
                        self.session
                    );
                    return Ok(None);
                };
                let kind = EventKind::from_name(&name)
                    .ok_or_else(|| format!("event {id} in Redis has the kind {name:?}"))?;
                let at = DateTime::parse_from_rfc3339(&at_text)
                    .map_err(|e| format!("event {id} in Redis: {e}"))?
                    .with_timezone(&Utc);
                let data = serde_json::from_str(payload)
                    .map_err(|e| format!("event {id} in Redis: {e}"))?;
                Ok(Some(Event::stored(id, kind, at, data)))
            })
            .filter_map(Result::transpose)
            .collect::<Result<_, String>>()?;
        Ok(Page { events, last, full })
    }
}

/// Events read from a stream, and how far the read went: an event skipped
/// (no server of the fleet appended it) still moves a reader on.
struct Page {
    /// The events that verified, in order.
    events: Vec<Event>,
    /// The number of the last entry read, skipped or not.
    last: Option<u64>,
    /// Whether the read took as many entries as it asked for.
    full: bool,
}

/// A session's stream, as its [`super::EventLog`] uses it.
pub(super) struct FleetEvents {
    appender: Arc<Appender>,
    feed: Arc<EventFeed>,
    /// Made on the first event: most sessions a server sees never emit.
    outbox: OnceLock<mpsc::Sender<Outgoing>>,
}

impl std::fmt::Debug for FleetEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetEvents")
            .field("stream", &self.appender.stream)
            .finish_non_exhaustive()
    }
}

impl FleetEvents {
    fn outbox(&self) -> Option<&mpsc::Sender<Outgoing>> {
        if let Some(outbox) = self.outbox.get() {
            return Some(outbox);
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(self.outbox.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(OUTBOX);
            runtime.spawn(Appender::clone(&self.appender).run(receiver));
            sender
        }))
    }

    fn enqueue(&self, event: Outgoing) -> Result<(), String> {
        let kind = event.kind.name();
        let Some(outbox) = self.outbox() else {
            return Err(format!("a `{kind}` event was emitted outside a runtime"));
        };
        outbox.try_send(event).map_err(|_| {
            format!("a `{kind}` event was dropped: {OUTBOX} are waiting to reach Redis already")
        })
    }
}

impl SharedLog for FleetEvents {
    /// Queue an event; it is appended after every event queued before it.
    fn emit(&self, kind: EventKind, at: DateTime<Utc>, payload: String) {
        let queued = self.enqueue(Outgoing {
            kind,
            at,
            payload,
            reply: None,
        });
        if let Err(e) = queued {
            tracing::warn!(session = %self.appender.session, "{e}");
        }
    }

    /// Append an event (after those queued before it): its number.
    fn append(
        &self,
        kind: EventKind,
        at: DateTime<Utc>,
        payload: String,
    ) -> BoxFuture<'_, Result<u64, String>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.enqueue(Outgoing {
                kind,
                at,
                payload,
                reply: Some(reply),
            })?;
            answer
                .await
                .map_err(|_| "the event's queue was dropped".to_string())?
        })
    }

    /// Every kept event after `after`.
    fn since(&self, after: Option<u64>) -> BoxFuture<'_, Result<Vec<Event>, String>> {
        Box::pin(async move {
            let mut events: Vec<Event> = Vec::new();
            let mut from = after;
            loop {
                let page = self.appender.range(from, PAGE).await?;
                from = page.last.or(from);
                events.extend(page.events);
                if !page.full {
                    return Ok(events);
                }
            }
        })
    }

    /// Event `id`, if it is still kept.
    fn get(&self, id: u64) -> BoxFuture<'_, Result<Option<Event>, String>> {
        Box::pin(async move {
            let at = format!("0-{id}");
            Ok(self.appender.read(&at, &at, 1).await?.events.pop())
        })
    }

    /// Kept events after `after`, then new ones as they are appended by any
    /// server; read again after a wake-up or every [`REREAD`].
    fn follow(self: Arc<Self>, after: Option<u64>) -> BoxStream<'static, Event> {
        let wake = self.feed.watch(&self.appender.session);
        let state = (self, wake, VecDeque::<Event>::new(), after.unwrap_or(0));
        futures::stream::unfold(
            state,
            |(events, mut wake, mut backlog, mut last)| async move {
                loop {
                    if let Some(event) = next_after(&mut backlog, &mut last) {
                        return Some((event, (events, wake, backlog, last)));
                    }
                    match events.appender.range(Some(last), PAGE).await {
                        Ok(page) if !page.events.is_empty() => {
                            backlog = page.events.into();
                            continue;
                        }
                        Ok(Page {
                            last: Some(skipped),
                            ..
                        }) if skipped > last => {
                            last = skipped;
                            continue;
                        }
                        Ok(_) => {}
                        Err(e) => tracing::debug!("following {}: {e}", events.appender.session),
                    }
                    tokio::select! {
                        woken = wake.recv() => {
                            if matches!(woken, Err(broadcast::error::RecvError::Closed)) {
                                wake = events.feed.watch(&events.appender.session);
                            }
                        }
                        () = tokio::time::sleep(REREAD) => {
                            if events.appender.ended().await {
                                return None;
                            }
                        }
                    }
                }
            },
        )
        .boxed()
    }
}

/// The sorted set of the sessions whose streams hold events, scored by the
/// order of their last append: the fleet's byte budget trims the first.
pub(super) fn streams_key(store: &RedisStore) -> String {
    store.key("evstreams", &[])
}

/// One server's wake-ups for the sessions followed on it.
pub(super) type EventFeed = Wakeups;

/// The wake-ups of the streams in `store`.
pub(super) fn event_feed(store: &Arc<RedisStore>) -> Arc<EventFeed> {
    Wakeups::new(store.clone(), store.key("eventfeed", &[]), REREAD)
}

/// The stream of a session: `store`'s keys for session `id`.
pub(super) fn session_events(
    store: &Arc<RedisStore>,
    feed: &Arc<EventFeed>,
    (id, record): (&str, String),
    limits: StreamLimits,
) -> FleetEvents {
    FleetEvents {
        appender: Arc::new(Appender {
            store: store.clone(),
            session: id.to_string(),
            record,
            stream: store.key("events", &[id]),
            seq: store.key("events-seq", &[id]),
            bytes: store.key("evbytes", &[id]),
            all_bytes: store.key("evbytes", &[]),
            streams: streams_key(store),
            order: store.key("evorder", &[]),
            stream_prefix: store.key("events", &[""]),
            bytes_prefix: store.key("evbytes", &[""]),
            channel: feed.channel().to_string(),
            limits,
        }),
        feed: feed.clone(),
        outbox: OnceLock::new(),
    }
}
