//! Outbound HTTP with real components (`fetch_url`, `http_flood`) against a
//! server on 127.0.0.1 that each test starts, through a scripted resolver
//! and a dialer that records every address it is asked for and connects
//! only to loopback: no test sends a packet anywhere else.
//!
//! Each hostile call ends in a clear error, touches nothing outside the
//! grant, and is followed by a normal call that succeeds.

use crate::common;

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::server::{Server, reply};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use toolhost::caps::http::{BoxFuture, Dialer, HttpLimits, Network, Resolver};
use toolhost::{CallResult, Host};

/// Names the scripted resolver knows; every one points at loopback.
const NAMES: &[(&str, &str)] = &[("evil.test", "127.0.0.1"), ("internal.test", "127.0.0.1")];

/// Resolves [`NAMES`] and records each lookup.
#[derive(Default)]
struct ScriptedResolver {
    lookups: Mutex<Vec<String>>,
}

impl Resolver for ScriptedResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        self.lookups.lock().unwrap().push(host.to_string());
        let answer = NAMES
            .iter()
            .find(|(name, _)| *name == host)
            .map(|(_, ip)| vec![ip.parse().unwrap()])
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not scripted"));
        Box::pin(async move { answer })
    }
}

/// Records every address it is asked to dial; connects only to loopback.
#[derive(Default)]
struct RecordingDialer {
    dialed: Mutex<Vec<SocketAddr>>,
}

impl RecordingDialer {
    fn dialed(&self) -> Vec<SocketAddr> {
        self.dialed.lock().unwrap().clone()
    }

    fn dialed_ip(&self, ip: &str) -> bool {
        let ip: IpAddr = ip.parse().unwrap();
        self.dialed().iter().any(|a| a.ip() == ip)
    }
}

impl Dialer for RecordingDialer {
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>> {
        self.dialed.lock().unwrap().push(addr);
        Box::pin(async move {
            if addr.ip().is_loopback() {
                TcpStream::connect(addr).await
            } else {
                Err(io::Error::other("the test dialer never leaves loopback"))
            }
        })
    }
}

/// Just over the default 10 MiB response cap.
const OVER_CAP: usize = 10 * 1024 * 1024 + 1;

/// The allowed server: `/hello`, redirects towards `secret`, and bodies over
/// the cap (announced, and chunked without a length).
async fn allowed_server(secret: SocketAddr) -> Server {
    Server::start(move |head| {
        let path = head.split(' ').nth(1).unwrap_or_default();
        match path {
            "/hello" => reply(
                "200 OK",
                "content-type: text/plain\r\n",
                b"hello from loopback",
            ),
            "/to-secret" => reply(
                "302 Found",
                &format!("location: http://127.0.0.1:{}/secret\r\n", secret.port()),
                b"",
            ),
            "/to-named" => reply(
                "302 Found",
                &format!(
                    "location: http://internal.test:{}/secret\r\n",
                    secret.port()
                ),
                b"",
            ),
            "/big" => reply("200 OK", "", &vec![b'x'; OVER_CAP]),
            "/big-chunked" => {
                let mut out =
                    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                        .to_vec();
                let chunk = vec![b'x'; 64 * 1024];
                for _ in 0..=(OVER_CAP / chunk.len()) {
                    out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(&chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
                out
            }
            _ => reply("404 Not Found", "", b"no such page"),
        }
    })
    .await
}

/// A host, its servers, and the scripted network it runs on.
struct Fixture {
    _dir: tempfile::TempDir,
    host: Host,
    server: Server,
    /// A loopback server nothing is granted: it must never see a request.
    secret: Server,
    resolver: Arc<ScriptedResolver>,
    dialer: Arc<RecordingDialer>,
}

/// A host with `fetch_url` granted the allowed server literally and
/// `http_flood` granted `flood_grants` (`{server}` stands for the allowed
/// server's origin).
async fn fixture(flood_grants: &[&str]) -> Fixture {
    let secret = Server::start(|_| reply("200 OK", "", b"secret")).await;
    let server = allowed_server(secret.addr).await;
    let grants: Vec<String> = flood_grants
        .iter()
        .map(|g| g.replace("{server}", &server.grant()))
        .collect();
    let config = format!(
        "[defaults]\ntimeout_ms = 60000\n\
         [tools.fetch_url]\nhttp = [{:?}]\n\
         [tools.http_flood]\nhttp = {}\n",
        server.grant(),
        serde_json::to_string(&grants).unwrap(),
    );
    let dir = common::host_dir(&["fetch_url", "http_flood"], &config);
    let resolver = Arc::new(ScriptedResolver::default());
    let dialer = Arc::new(RecordingDialer::default());
    let network = Network::system()
        .with_resolver(resolver.clone())
        .with_dialer(dialer.clone())
        .with_limits(HttpLimits::default());
    let host = Host::builder(dir.path())
        .cache_dir(common::cache_dir())
        .network(network)
        .build()
        .await
        .expect("host loads");
    let registry = host.registry();
    assert!(registry.failures().is_empty(), "{:?}", registry.failures());
    Fixture {
        _dir: dir,
        host,
        server,
        secret,
        resolver,
        dialer,
    }
}

impl Fixture {
    async fn call(&self, tool: &str, input: Value) -> Arc<CallResult> {
        self.host
            .call(tool, input, &common::live())
            .await
            .expect("the call runs")
    }

    /// A normal fetch through the literal grant, which must succeed.
    async fn fetch_hello(&self) {
        let result = self
            .call("fetch_url", json!({"url": self.server.url("/hello")}))
            .await;
        assert!(!result.is_error, "{}", result.result);
        assert_eq!(result.result["status"], json!(200), "{}", result.result);
        assert_eq!(result.result["body"], json!("hello from loopback"));
    }

    /// Send one request with `http_flood`; its report.
    async fn flood(&self, url: &str, count: u32, method: &str) -> (Arc<CallResult>, Value) {
        let result = self
            .call(
                "http_flood",
                json!({"url": url, "count": count, "method": method}),
            )
            .await;
        assert!(!result.is_error, "{}", result.result);
        let report = result.result.clone();
        (result, report)
    }
}

fn trace_text(result: &CallResult) -> String {
    result
        .trace
        .logs
        .iter()
        .map(|l| l.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_literal_grant_reaches_the_local_server() {
    let fx = fixture(&[]).await;
    let result = fx
        .call("fetch_url", json!({"url": fx.server.url("/hello")}))
        .await;
    assert!(!result.is_error, "{}", result.result);
    assert_eq!(result.result["status"], json!(200));
    assert_eq!(result.result["body"], json!("hello from loopback"));
    assert_eq!(result.result["contentType"], json!("text/plain"));
    let usage = &result.usage;
    assert_eq!(
        (usage.http_requests, usage.http_bytes_sent),
        (1, 0),
        "{usage:?}"
    );
    assert_eq!(
        usage.http_bytes_received as usize,
        "hello from loopback".len()
    );
    assert_eq!(fx.dialer.dialed(), [fx.server.addr]);
    assert!(fx.resolver.lookups.lock().unwrap().is_empty());
    let heads = fx.server.heads();
    assert_eq!(heads.len(), 1);
    assert!(heads[0].starts_with("GET /hello HTTP/1.1\r\n"), "{heads:?}");
    let host_header = format!("host: 127.0.0.1:{}", fx.server.addr.port());
    assert!(
        heads[0].to_ascii_lowercase().contains(&host_header),
        "{heads:?}"
    );
    let trace = trace_text(&result);
    assert!(
        trace.contains(&format!("via {}: 200 OK", fx.server.addr)),
        "{trace}"
    );
}

#[tokio::test]
async fn internal_destinations_are_refused_even_when_everything_is_granted() {
    let fx = fixture(&["*://*:*"]).await;
    let port = fx.server.addr.port();
    let hostile = [
        (fx.server.url("/hello"), "127.0.0.1"),
        (format!("http://[::1]:{port}/hello"), "::1"),
        ("http://10.0.0.1/".to_string(), "10.0.0.1"),
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "169.254.169.254",
        ),
        (format!("http://evil.test:{port}/hello"), "127.0.0.1"),
    ];
    for (url, ip) in hostile {
        let (result, report) = fx.flood(&url, 1, "GET").await;
        assert_eq!(report["succeeded"], json!(0), "{url}: {report}");
        let error = report["firstError"].as_str().unwrap_or_default();
        assert!(
            error.contains("destination address is not allowed"),
            "{url}: {error}"
        );
        let trace = trace_text(&result);
        assert!(
            trace.contains("refused") && trace.contains(ip),
            "{url}: {trace}"
        );
        assert!(!fx.dialer.dialed_ip(ip), "{url}: {ip} was dialed");
        assert!(fx.server.heads().is_empty(), "{url} reached the server");
        // The host is fine, and the literal grant still works.
        fx.fetch_hello().await;
        fx.server.clear_heads();
        fx.dialer.dialed.lock().unwrap().clear();
    }
    assert_eq!(*fx.resolver.lookups.lock().unwrap(), ["evil.test"]);
    assert!(fx.secret.heads().is_empty());
}

#[tokio::test]
async fn the_literal_grant_names_one_port_only() {
    let fx = fixture(&[]).await;
    let result = fx
        .call("fetch_url", json!({"url": fx.secret.url("/secret")}))
        .await;
    assert!(result.is_error, "{}", result.result);
    assert!(fx.dialer.dialed().is_empty());
    assert!(fx.secret.heads().is_empty());
    fx.fetch_hello().await;
}

#[tokio::test]
async fn a_redirect_to_loopback_is_refused_at_the_hop() {
    // fetch_url may reach the allowed server, and every origin by name; the
    // redirect's target is on loopback but not named literally.
    let secret = Server::start(|_| reply("200 OK", "", b"secret")).await;
    let server = allowed_server(secret.addr).await;
    let config = format!(
        "[tools.fetch_url]\nhttp = [{:?}, \"*://*:*\"]\n",
        server.grant()
    );
    let dir = common::host_dir(&["fetch_url"], &config);
    let dialer = Arc::new(RecordingDialer::default());
    let resolver = Arc::new(ScriptedResolver::default());
    let host = Host::builder(dir.path())
        .cache_dir(common::cache_dir())
        .network(
            Network::system()
                .with_resolver(resolver.clone())
                .with_dialer(dialer.clone()),
        )
        .build()
        .await
        .unwrap();

    for path in ["/to-secret", "/to-named"] {
        let result = host
            .call(
                "fetch_url",
                json!({"url": server.url(path)}),
                &common::live(),
            )
            .await
            .unwrap();
        assert!(result.is_error, "{path}: {}", result.result);
        let message = result.result.to_string();
        assert!(
            message.contains(&format!("127.0.0.1:{}/secret", secret.addr.port()))
                || message.contains(&format!("internal.test:{}/secret", secret.addr.port())),
            "{path}: {message}"
        );
        assert!(
            message.contains("destination address is not allowed"),
            "{path}: {message}"
        );
        let trace = trace_text(&result);
        assert!(trace.contains("loopback (127.0.0.0/8)"), "{path}: {trace}");
    }
    // The first hop reached the allowed server; the second never left.
    assert_eq!(server.heads().len(), 2);
    assert!(secret.heads().is_empty());
    assert!(dialer.dialed().iter().all(|a| *a == server.addr));
    assert_eq!(*resolver.lookups.lock().unwrap(), ["internal.test"]);

    let ok = host
        .call(
            "fetch_url",
            json!({"url": server.url("/hello")}),
            &common::live(),
        )
        .await
        .unwrap();
    assert!(!ok.is_error, "{}", ok.result);
}

#[tokio::test]
async fn ten_thousand_requests_stop_at_the_request_cap() {
    let fx = fixture(&["{server}"]).await;
    let started = Instant::now();
    let (result, report) = fx.flood(&fx.server.url("/hello"), 10_000, "GET").await;
    assert_eq!(report["succeeded"], json!(100), "{report}");
    assert_eq!(report["failed"], json!(9_900), "{report}");
    let error = report["firstError"].as_str().unwrap_or_default();
    assert!(error.contains("refused by the host"), "{error}");
    assert_eq!(fx.server.heads().len(), 100);
    let trace = trace_text(&result);
    assert!(
        trace.contains("request cap reached")
            && trace.contains("100 requests (max_requests_per_call)"),
        "{trace}"
    );
    // One line for the cap, not one per refused request.
    assert_eq!(trace.matches("request cap reached").count(), 1);
    assert!(started.elapsed() < Duration::from_secs(60));
    fx.fetch_hello().await;
}

#[tokio::test]
async fn a_response_over_the_body_cap_is_a_tool_error() {
    let fx = fixture(&[]).await;
    let max_bytes = 16 * 1024 * 1024;
    for (path, needle) in [
        // Announced by Content-Length: refused with the response head.
        ("/big", "http-response-body-size"),
        // Chunked, no length: the body stream fails once past the cap.
        ("/big-chunked", "HTTP response body size exceeds limit"),
    ] {
        let result = fx
            .call(
                "fetch_url",
                json!({"url": fx.server.url(path), "max_bytes": max_bytes}),
            )
            .await;
        assert!(result.is_error, "{path}: {}", result.result);
        assert!(result.trace.failure.is_none(), "{path}: not a trap");
        let message = result.result.to_string();
        assert!(message.contains(needle), "{path}: {message}");
        let trace = trace_text(&result);
        assert!(
            trace.contains("10485760-byte cap (max_response_body_bytes)"),
            "{path}: {trace}"
        );
        fx.fetch_hello().await;
    }
}

#[tokio::test]
async fn a_read_effect_call_cannot_post_even_with_the_grant() {
    let fx = fixture(&["{server}"]).await;
    let (result, report) = fx.flood(&fx.server.url("/hello"), 1, "POST").await;
    assert_eq!(report["succeeded"], json!(0), "{report}");
    let error = report["firstError"].as_str().unwrap_or_default();
    assert!(error.contains("refused by the host"), "{error}");
    let trace = trace_text(&result);
    assert!(
        trace.contains("POST is refused: this call's effect is `read`"),
        "{trace}"
    );
    assert!(fx.server.heads().is_empty());
    assert!(fx.dialer.dialed().is_empty());

    // GET with the same grant goes through.
    let (_, report) = fx.flood(&fx.server.url("/hello"), 1, "GET").await;
    assert_eq!(report["succeeded"], json!(1), "{report}");
    fx.fetch_hello().await;
}

#[tokio::test]
async fn limits_come_from_the_hosts_network() {
    let secret = Server::start(|_| reply("200 OK", "", b"")).await;
    let server = allowed_server(secret.addr).await;
    let config = format!("[tools.http_flood]\nhttp = [{:?}]\n", server.grant());
    let dir = common::host_dir(&["http_flood"], &config);
    let limits = HttpLimits {
        max_requests_per_call: 3,
        ..HttpLimits::default()
    };
    let host = Host::builder(dir.path())
        .cache_dir(common::cache_dir())
        .network(Network::system().with_limits(limits))
        .build()
        .await
        .unwrap();
    let result = host
        .call(
            "http_flood",
            json!({"url": server.url("/hello"), "count": 5}),
            &common::live(),
        )
        .await
        .unwrap();
    assert_eq!(result.result["succeeded"], json!(3), "{}", result.result);
    assert_eq!(server.heads().len(), 3);
}
