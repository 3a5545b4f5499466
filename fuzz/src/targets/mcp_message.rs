//! MCP message handling: arbitrary bytes as JSON-RPC lines to the MCP
//! server (`toolhost mcp`'s [`ToolServer`]) over an in-memory pipe, one
//! fresh connection per input.
//!
//! An input is up to 16 lines, sent as they are. Unless its first line is
//! an `initialize` request (then the handshake itself is fuzzed), the
//! connection is set up first with a valid handshake. Bytes with no `{`
//! are shaped by `arbitrary` into JSON-RPC messages (a method, an id,
//! params naming the example tools). `{session}` stands for the id of a
//! session made at start, for `_meta.toolhost/sessionId`.
//!
//! Promises checked: everything the server writes is a JSON-RPC message
//! (an error has a code and a message); after a valid handshake the server
//! answers every request among the input's lines (unless one is cancelled)
//! and a `ping` sent after them; it ends when the client hangs up; nothing
//! panics.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arbitrary::Unstructured;
use rmcp::ServiceExt as _;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;

use toolhost::session::{NewSession, SessionStore};
use toolhost_serve::mcp::{McpOptions, ToolServer};

use crate::fixture::{self, EXAMPLE_GRANTS as CONFIG, EXAMPLE_TOOLS as TOOLS};
use crate::targets::{arbitrary_json, replace_all};

/// The most lines one input sends.
const MAX_LINES: usize = 16;
/// How long the server may take to answer the handshake or the ping.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// The id of the ping that checks the server still answers.
const PING_ID: &str = "fuzz-ping";

/// JSON-RPC and MCP methods, keys and values.
pub(super) const DICTIONARY: &[&[&[u8]]] = &[
    super::JSON_TOKENS,
    &[
        b"\n",
        b"0",
        b"-1",
        b"1e999",
        b"9007199254740993",
        b"\"jsonrpc\"",
        b"\"2.0\"",
        b"\"id\"",
        b"\"method\"",
        b"\"params\"",
        b"\"result\"",
        b"\"error\"",
        b"\"code\"",
        b"\"message\"",
        b"\"initialize\"",
        b"\"ping\"",
        b"\"tools/list\"",
        b"\"tools/call\"",
        b"\"notifications/initialized\"",
        b"\"notifications/cancelled\"",
        b"\"notifications/progress\"",
        b"\"resources/list\"",
        b"\"prompts/get\"",
        b"\"completion/complete\"",
        b"\"logging/setLevel\"",
        b"\"name\"",
        b"\"arguments\"",
        b"\"_meta\"",
        b"\"progressToken\"",
        b"\"requestId\"",
        b"\"cursor\"",
        b"\"toolhost/sessionId\"",
        b"\"toolhost/continuationToken\"",
        b"\"toolhost/dryRun\"",
        b"\"toolhost/asOf\"",
        b"\"2026-01-01T00:00:00Z\"",
        b"\"{session}\"",
        b"\"protocolVersion\"",
        b"\"2025-11-25\"",
        b"\"2024-11-05\"",
        b"\"capabilities\"",
        b"\"elicitation\"",
        b"\"clientInfo\"",
        b"\"echo\"",
        b"\"notes\"",
        b"\"publish_release\"",
        b"\"text\"",
        b"\"action\"",
    ],
];

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: ToolServer,
    session: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = fixture::runtime("mcp_message");
        let dir = fixture::host_dir("mcp_message", TOOLS, CONFIG);
        let host = fixture::load_host(&runtime, &dir);
        let sessions = Arc::new(
            SessionStore::open(host.sessions_dir(), Duration::from_secs(3600))
                .expect("fixture: the session store"),
        );
        let session = runtime
            .block_on(sessions.create(NewSession::default()))
            .expect("fixture: a session")
            .id()
            .to_string();
        let server = ToolServer::new(host, sessions, McpOptions::default());
        Fixture {
            runtime,
            server,
            session,
        }
    })
}

/// Run one input: see the module documentation.
pub fn mcp_message(data: &[u8]) {
    let fixture = fixture();
    let data = replace_all(data, b"{session}", fixture.session.as_bytes());
    let lines = if data.contains(&b'{') {
        data.split(|&b| b == b'\n')
            .take(MAX_LINES)
            .map(<[u8]>::to_vec)
            .collect()
    } else {
        shaped(&data)
    };
    let handshake = !lines
        .first()
        .is_some_and(|l| l.windows(12).any(|w| w == b"\"initialize\""));
    fixture
        .runtime
        .block_on(converse(fixture.server.clone(), handshake, lines));
}

/// One connection: the handshake (if `handshake`), the lines, a ping.
async fn converse(server: ToolServer, handshake: bool, lines: Vec<Vec<u8>>) {
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client);
    let (sent, received) = mpsc::unbounded_channel();
    let reading = tokio::spawn(async move {
        let mut lines = BufReader::new(read).lines();
        while let Some(line) = lines.next_line().await.transpose() {
            let line =
                line.unwrap_or_else(|e| panic!("the server wrote a line that is not UTF-8: {e}"));
            let _ = sent.send(check_message(&line));
        }
    });
    let mut answers = Answers {
        received,
        ids: Vec::new(),
    };

    let mut send = async |line: &[u8]| {
        // A server that hung up takes no more; what it wrote is still checked.
        let _ = write.write_all(line).await;
        let _ = write.write_all(b"\n").await;
    };
    if handshake {
        send(INITIALIZE.as_bytes()).await;
        answers
            .wait_for(&[json!(0)], false, "the initialize request")
            .await;
        send(INITIALIZED.as_bytes()).await;
    }
    for line in &lines {
        send(line).await;
    }
    if handshake {
        let ping = json!({"jsonrpc": "2.0", "id": PING_ID, "method": "ping"});
        send(ping.to_string().as_bytes()).await;
        answers.wait_for(&[json!(PING_ID)], false, "the ping").await;
        answers.wait_for(&requests(&lines), true, "requests").await;
    }
    // Hang up: the server must see the end of its input and stop.
    let _ = write.shutdown().await;
    drop(write);
    match tokio::time::timeout(ANSWER_WITHIN, serving).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("the server task failed: {e}"),
        Err(_) => {
            panic!("the server did not end within {ANSWER_WITHIN:?} of the client hanging up")
        }
    }
    if let Err(e) = reading.await {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// The ids of the requests among `lines` that must be answered, each once:
/// JSON-RPC 2.0 requests with a number or string id and params, if any, an
/// object (MCP's params are). With a cancellation among them none is
/// counted (a cancelled request may go unanswered).
fn requests(lines: &[Vec<u8>]) -> Vec<Value> {
    // A line whose object names a member twice is ambiguous: skipped.
    let messages: Vec<Value> = lines
        .iter()
        .filter_map(|line| serde_json::from_slice::<Members>(line).ok())
        .filter_map(|Members(members)| {
            let object: Map<String, Value> = members.iter().cloned().collect();
            (object.len() == members.len()).then_some(Value::Object(object))
        })
        .collect();
    let cancels = messages
        .iter()
        .any(|m| m.get("method") == Some(&json!("notifications/cancelled")));
    if cancels {
        return Vec::new();
    }
    messages
        .into_iter()
        .filter(|m| {
            m.get("jsonrpc") == Some(&json!("2.0"))
                && m.get("method").is_some_and(Value::is_string)
                && m.get("params").is_none_or(Value::is_object)
                && m.get("result").is_none()
                && m.get("error").is_none()
        })
        .filter_map(|m| {
            m.get("id")
                .filter(|id| id.is_string() || id.is_number())
                .cloned()
        })
        .fold(Vec::new(), |mut ids, id| {
            // Two requests in flight with one id are the client's mistake.
            if !ids.iter().any(|seen| same_id(seen, &id)) {
                ids.push(id);
            }
            ids
        })
}

/// A JSON object's members in order, a name given twice kept twice.
struct Members(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Value>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// What the server wrote, as it comes.
struct Answers {
    received: mpsc::UnboundedReceiver<Value>,
    /// The ids of the answers read (null for an answer without one).
    ids: Vec<Value>,
}

impl Answers {
    /// Wait until the answers read cover `ids`: each by an answer with its
    /// id, or if `anonymous` by an error without one (rmcp's Invalid Request
    /// error for JSON that is no MCP message it can decode leaves the id
    /// out). Panic if they do not within [`ANSWER_WITHIN`].
    async fn wait_for(&mut self, ids: &[Value], anonymous: bool, what: &str) {
        let missing = |seen: &[Value]| -> Vec<Value> {
            ids.iter()
                .filter(|id| !seen.iter().any(|s| same_id(s, id)))
                .cloned()
                .collect()
        };
        let covered = tokio::time::timeout(ANSWER_WITHIN, async {
            loop {
                let nulls = self.ids.iter().filter(|id| id.is_null()).count();
                if missing(&self.ids).len() <= if anonymous { nulls } else { 0 } {
                    return true;
                }
                match self.received.recv().await {
                    Some(message) => {
                        if message.get("result").is_some() || message.get("error").is_some() {
                            self.ids
                                .push(message.get("id").cloned().unwrap_or(Value::Null));
                        }
                    }
                    None => return false,
                }
            }
        })
        .await;
        let missing = missing(&self.ids);
        match covered {
            Ok(true) => {}
            Ok(false) => panic!("the server hung up before answering {what} {missing:?}"),
            Err(_) => panic!("no answer to {what} {missing:?} within {ANSWER_WITHIN:?}"),
        }
    }
}

/// Whether two ids name the same request (`1` and `1.0` do).
fn same_id(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A line the server wrote must be a JSON-RPC message.
fn check_message(line: &str) -> Value {
    let message: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
    assert_eq!(
        message.get("jsonrpc"),
        Some(&json!("2.0")),
        "not JSON-RPC 2.0: {line}"
    );
    if let Some(error) = message.get("error") {
        assert!(
            error.get("code").is_some_and(Value::is_i64)
                && error
                    .get("message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| !m.trim().is_empty()),
            "an error without a code and a message: {line}"
        );
    }
    message
}

/// Methods the shaped messages call.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "resources/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// Keys shaped params use.
const KEYS: &[&str] = &[
    "name",
    "arguments",
    "_meta",
    "progressToken",
    "requestId",
    "cursor",
    "text",
    "action",
    "title",
    "version",
    "toolhost/sessionId",
    "toolhost/dryRun",
    "toolhost/asOf",
];

/// JSON-RPC messages shaped from bytes with no JSON in them.
fn shaped(data: &[u8]) -> Vec<Vec<u8>> {
    let mut u = Unstructured::new(data);
    let mut lines = Vec::new();
    while !u.is_empty() && lines.len() < 4 {
        match message(&mut u) {
            Ok(message) => lines.push(message.to_string().into_bytes()),
            Err(_) => break,
        }
    }
    lines
}

fn message(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), json!("2.0"));
    let method = if u.ratio(9, 10)? {
        (*u.choose(METHODS)?).to_string()
    } else {
        u.arbitrary()?
    };
    if !method.starts_with("notifications/") || u.ratio(1, 10)? {
        let id = match u.choose_index(3)? {
            0 => json!(u.arbitrary::<i64>()?),
            1 => json!(u.arbitrary::<String>()?),
            _ => Value::Null,
        };
        message.insert("id".into(), id);
    }
    let params = if method == "tools/call" {
        let mut params = Map::new();
        let name = if u.ratio(4, 5)? {
            (*u.choose(TOOLS)?).to_string()
        } else {
            u.arbitrary()?
        };
        params.insert("name".into(), json!(name));
        params.insert(
            "arguments".into(),
            Value::Object(arbitrary_json::object(u, KEYS)?),
        );
        if u.ratio(1, 3)? {
            params.insert(
                "_meta".into(),
                Value::Object(arbitrary_json::object(u, KEYS)?),
            );
        }
        Value::Object(params)
    } else {
        arbitrary_json::value(u, KEYS)?
    };
    message.insert("method".into(), json!(method));
    if u.ratio(9, 10)? {
        message.insert("params".into(), params);
    }
    Ok(Value::Object(message))
}
