//! Unit tests for the HTTP capability (no wasm): the allow-list, literal
//! address exemptions, and the hook against scripted resolvers and dialers
//! and servers on 127.0.0.1.

use super::*;

fn list(entries: &[&str]) -> AllowList {
    AllowList::parse(entries).unwrap()
}

#[test]
fn exact_origin_is_port_exact() {
    let l = list(&["https://api.example.com"]);
    assert!(l.allows("https", "api.example.com", 443));
    assert!(l.allows("https", "API.example.com", 443));
    assert!(!l.allows("https", "api.example.com", 8443));
    assert!(!l.allows("http", "api.example.com", 443));
    assert!(!l.allows("https", "example.com", 443));
}

#[test]
fn canonical_form_parses_back_to_the_same_list() {
    let l = list(&[
        "HTTPS://API.example.com/",
        "http://*.example.com:8080",
        "*://*:*",
        "http://[::1]:3000",
        "https://10.0.0.1",
    ]);
    assert_eq!(
        l.canonical(),
        [
            "https://api.example.com:443",
            "http://*.example.com:8080",
            "*://*:*",
            "http://[::1]:3000",
            "https://10.0.0.1:443",
        ]
    );
    assert_eq!(AllowList::parse(&l.canonical()).unwrap(), l);
}

#[test]
fn subdomain_wildcard_excludes_apex_and_lookalikes() {
    let l = list(&["https://*.example.com:8443"]);
    assert!(l.allows("https", "a.example.com", 8443));
    assert!(l.allows("https", "a.b.example.com", 8443));
    assert!(!l.allows("https", "example.com", 8443));
    assert!(!l.allows("https", "evilexample.com", 8443));
    assert!(!l.allows("https", "a.example.com", 443));
}

#[test]
fn everything_must_be_explicit() {
    assert_eq!(
        AllowList::parse(&["*"]).unwrap_err(),
        AllowListError::BareWildcard
    );
    let all = list(&["*://*:*"]);
    assert!(all.allows("http", "anything.test", 1));
    assert!(matches!(
        AllowList::parse(&["api.example.com"]),
        Err(AllowListError::Malformed { .. })
    ));
    assert!(matches!(
        AllowList::parse(&["ftp://x"]),
        Err(AllowListError::Scheme { .. })
    ));
    assert!(AllowList::parse(&["https://x/path"]).is_err());
    assert!(AllowList::parse(&["https://a*b.com"]).is_err());
}

#[test]
fn ip_literals() {
    let l = list(&["http://127.0.0.1:8080", "http://[::1]:8080"]);
    assert!(l.allows("http", "127.0.0.1", 8080));
    assert!(l.allows("http", "[::1]", 8080));
    assert!(!l.allows("http", "127.0.0.2", 8080));
    assert!(AllowList::default().is_empty());
}

#[test]
fn literal_entries_name_their_address_for_their_scheme_and_port() {
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let l = list(&[
        "http://127.0.0.1:8080",
        "https://[::1]",
        "*://10.0.0.7:*",
        "*://*:*",
        "https://*.example.com",
    ]);
    assert!(l.names_ip("http", ip("127.0.0.1"), 8080));
    assert!(!l.names_ip("https", ip("127.0.0.1"), 8080));
    assert!(!l.names_ip("http", ip("127.0.0.1"), 8081));
    assert!(!l.names_ip("http", ip("127.0.0.2"), 8080));
    // The mapped form of a named address is a different address.
    assert!(!l.names_ip("http", ip("::ffff:127.0.0.1"), 8080));
    assert!(l.names_ip("https", ip("::1"), 443));
    assert!(!l.names_ip("https", ip("::1"), 8443));
    assert!(l.names_ip("http", ip("10.0.0.7"), 1));
    assert!(l.names_ip("https", ip("10.0.0.7"), 65535));
    // Wildcards never name an address.
    assert!(!l.names_ip("http", ip("10.0.0.8"), 80));
    assert!(!l.names_ip("https", ip("169.254.169.254"), 443));
}

// ---------------------------------------------------------------------------
// The hook, against scripted resolvers and dialers and servers on 127.0.0.1.
// ---------------------------------------------------------------------------

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A global unicast address no test ever sends a packet to: the dialers
/// below connect to a loopback server instead.
const PUBLIC: &str = "93.184.215.14";

/// Answers lookups from a script: each lookup of a name takes its next
/// answer; the last one repeats.
#[derive(Default)]
struct ScriptedResolver {
    script: Mutex<HashMap<String, VecDeque<io::Result<Vec<IpAddr>>>>>,
    lookups: Mutex<Vec<String>>,
}

impl ScriptedResolver {
    fn answer(self, host: &str, answers: &[&[&str]]) -> Self {
        let answers = answers
            .iter()
            .map(|ips| Ok(ips.iter().map(|ip| ip.parse().unwrap()).collect()))
            .collect();
        self.script
            .lock()
            .unwrap()
            .insert(host.to_string(), answers);
        self
    }

    fn fail(self, host: &str) -> Self {
        let error = io::Error::new(io::ErrorKind::NotFound, "no such host (scripted)");
        self.script
            .lock()
            .unwrap()
            .insert(host.to_string(), VecDeque::from([Err(error)]));
        self
    }

    fn lookups(&self) -> Vec<String> {
        self.lookups.lock().unwrap().clone()
    }
}

impl Resolver for ScriptedResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        self.lookups.lock().unwrap().push(host.to_string());
        let mut script = self.script.lock().unwrap();
        let answer = match script.get_mut(host) {
            Some(answers) if answers.len() > 1 => answers.pop_front().unwrap(),
            Some(answers) => match answers.front().unwrap() {
                Ok(ips) => Ok(ips.clone()),
                Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
            },
            None => Err(io::Error::new(io::ErrorKind::NotFound, "not scripted")),
        };
        Box::pin(async move { answer })
    }
}

/// Records every address it is asked for and connects to a loopback server
/// instead (or never finishes connecting, when it has none).
struct LoopbackDialer {
    server: Option<SocketAddr>,
    dialed: Mutex<Vec<SocketAddr>>,
}

impl LoopbackDialer {
    fn to(server: SocketAddr) -> Arc<Self> {
        assert!(server.ip().is_loopback());
        Arc::new(Self {
            server: Some(server),
            dialed: Mutex::default(),
        })
    }

    fn hanging() -> Arc<Self> {
        Arc::new(Self {
            server: None,
            dialed: Mutex::default(),
        })
    }

    fn dialed(&self) -> Vec<SocketAddr> {
        self.dialed.lock().unwrap().clone()
    }
}

impl Dialer for LoopbackDialer {
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>> {
        self.dialed.lock().unwrap().push(addr);
        Box::pin(async move {
            match self.server {
                Some(server) => TcpStream::connect(server).await,
                None => std::future::pending().await,
            }
        })
    }
}

/// A server on 127.0.0.1 that records each request head and answers with
/// `respond(head)`, or holds the connection open when that is `None`.
struct Server {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Server {
    async fn start(respond: impl Fn(&str) -> Option<Vec<u8>> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let heads: Arc<Mutex<Vec<String>>> = Arc::default();
        let respond = Arc::new(respond);
        let seen = Arc::clone(&heads);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (seen, respond) = (Arc::clone(&seen), Arc::clone(&respond));
                tokio::spawn(async move {
                    let head = read_head(&mut socket).await;
                    seen.lock().unwrap().push(head.clone());
                    match respond(&head) {
                        Some(reply) => {
                            let _ = socket.write_all(&reply).await;
                            let _ = socket.shutdown().await;
                        }
                        None => tokio::time::sleep(Duration::from_secs(30)).await,
                    }
                });
            }
        });
        Self { addr, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

async fn read_head(socket: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn ok(body: &[u8]) -> Option<Vec<u8>> {
    let mut reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body);
    Some(reply)
}

fn chunked(total: usize) -> Option<Vec<u8>> {
    let mut reply =
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".to_vec();
    for chunk in vec![b'x'; total].chunks(256) {
        reply.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        reply.extend_from_slice(chunk);
        reply.extend_from_slice(b"\r\n");
    }
    reply.extend_from_slice(b"0\r\n\r\n");
    Some(reply)
}

fn request(method: &str, uri: &str) -> http::Request<WasiBody> {
    http::Request::builder()
        .method(method)
        .uri(uri)
        .body(
            Empty::<Bytes>::new()
                .map_err(|never| match never {})
                .boxed_unsync(),
        )
        .unwrap()
}

fn ctx(network: Network, grants: &[&str], read_only: bool) -> (HttpCtx, TraceLog) {
    let trace = TraceLog::default();
    let allow = Arc::new(AllowList::parse(grants).unwrap());
    (
        HttpCtx::new(network, allow, read_only, trace.clone()),
        trace,
    )
}

fn network(resolver: Arc<ScriptedResolver>, dialer: Arc<LoopbackDialer>) -> Network {
    Network::system()
        .with_resolver(resolver)
        .with_dialer(dialer)
}

/// Run the hook as `wasi:http` would, driving the connection in the background.
async fn send(
    ctx: &mut HttpCtx,
    request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<http::Response<WasiBody>, HttpError> {
    let future = ctx.send_request(request, options, Box::new(async { Ok(()) }));
    let (response, io) = Box::into_pin(future).await?;
    tokio::spawn(Box::into_pin(io));
    Ok(response)
}

fn lines(trace: &TraceLog) -> Vec<String> {
    trace.snapshot().0.into_iter().map(|l| l.message).collect()
}

#[tokio::test]
async fn a_name_is_resolved_once_per_request_and_only_the_checked_answer_is_dialed() {
    let server = Server::start(|_| ok(b"hello")).await;
    // The first lookup answers a public address, every later one loopback.
    let resolver =
        Arc::new(ScriptedResolver::default().answer("rebind.test", &[&[PUBLIC], &["127.0.0.1"]]));
    let dialer = LoopbackDialer::to(server.addr);
    let (mut ctx, trace) = ctx(
        network(resolver.clone(), dialer.clone()),
        &["http://rebind.test"],
        true,
    );

    let response = send(&mut ctx, request("GET", "http://rebind.test/a"), None)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"hello");
    assert_eq!(resolver.lookups(), ["rebind.test"]);
    let public: SocketAddr = format!("{PUBLIC}:80").parse().unwrap();
    assert_eq!(dialer.dialed(), [public]);
    let head = &server.heads()[0];
    assert!(head.starts_with("GET /a HTTP/1.1\r\n"), "{head}");

    // The second request resolves again, gets loopback, and is refused
    // before anything is dialed.
    let refused = send(&mut ctx, request("GET", "http://rebind.test/b"), None).await;
    assert!(
        matches!(refused, Err(HttpError::DestinationIpProhibited)),
        "{refused:?}"
    );
    assert_eq!(resolver.lookups(), ["rebind.test", "rebind.test"]);
    assert_eq!(dialer.dialed(), [public]);
    assert_eq!(server.heads().len(), 1);
    let lines = lines(&trace);
    let refusal = lines.iter().find(|l| l.contains("refused")).unwrap();
    assert!(
        refusal.contains("rebind.test resolves to 127.0.0.1; 127.0.0.1 is loopback (127.0.0.0/8)"),
        "{refusal}"
    );
}

#[tokio::test]
async fn mixed_answers_dial_only_the_routable_address() {
    let server = Server::start(|_| ok(b"")).await;
    let resolver = Arc::new(ScriptedResolver::default().answer(
        "mixed.test",
        &[&["127.0.0.1", "10.0.0.1", PUBLIC, "169.254.169.254"]],
    ));
    let dialer = LoopbackDialer::to(server.addr);
    let (mut ctx, trace) = ctx(network(resolver, dialer.clone()), &["*://*:*"], true);
    let response = send(&mut ctx, request("GET", "http://mixed.test:8080/"), None)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(dialer.dialed(), [format!("{PUBLIC}:8080").parse().unwrap()]);
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("skipped") && l.contains("169.254.169.254 is cloud metadata")),
        "{:?}",
        lines(&trace)
    );
}

#[tokio::test]
async fn internal_addresses_are_refused_before_dialing() {
    let internal = [
        "127.0.0.1",
        "127.8.9.10",
        "0.0.0.0",
        "10.0.0.1",
        "172.20.0.1",
        "192.168.0.1",
        "100.64.0.1",
        "169.254.169.254",
        "169.254.1.1",
        "255.255.255.255",
        "224.0.0.1",
        "::1",
        "::",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::",
        "fd00:ec2::254",
        "fc00::1",
        "fe80::1",
    ];
    let server = Server::start(|_| ok(b"")).await;
    for ip in internal {
        let dialer = LoopbackDialer::to(server.addr);
        // As a name that resolves to it…
        let resolver = Arc::new(ScriptedResolver::default().answer("inside.test", &[&[ip]]));
        let (mut ctx, trace) = ctx(network(resolver, dialer.clone()), &["*://*:*"], true);
        let refused = send(&mut ctx, request("GET", "http://inside.test/"), None).await;
        assert!(
            matches!(refused, Err(HttpError::DestinationIpProhibited)),
            "{ip}: {refused:?}"
        );
        // …and as a literal.
        let literal = match ip.parse::<IpAddr>().unwrap() {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        let refused = send(
            &mut ctx,
            request("GET", &format!("http://{literal}/")),
            None,
        )
        .await;
        assert!(
            matches!(refused, Err(HttpError::DestinationIpProhibited)),
            "{ip}: {refused:?}"
        );
        assert!(dialer.dialed().is_empty(), "{ip} was dialed");
        let lines = lines(&trace);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.contains(ip)), "{lines:?}");
    }
    assert!(server.heads().is_empty());
}

#[tokio::test]
async fn a_literal_grant_reaches_its_address_and_nothing_beside_it() {
    let server = Server::start(|_| ok(b"local")).await;
    let port = server.addr.port();
    let grant = format!("http://127.0.0.1:{port}");
    let resolver = Arc::new(ScriptedResolver::default().answer("loopback.test", &[&["127.0.0.1"]]));
    let (mut ctx, _trace) = ctx(
        network(resolver.clone(), LoopbackDialer::to(server.addr)),
        &[&grant, "*://*:*"],
        true,
    );
    let response = send(&mut ctx, request("GET", &format!("{grant}/x")), None)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // The literal IP skips DNS.
    assert!(resolver.lookups().is_empty());
    // The same address on another port or scheme is not named.
    for other in [
        format!("http://127.0.0.1:{}/", port.wrapping_add(1)),
        format!("https://127.0.0.1:{port}/"),
        format!("http://127.0.0.2:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
    ] {
        let refused = send(&mut ctx, request("GET", &other), None).await;
        assert!(
            matches!(refused, Err(HttpError::DestinationIpProhibited)),
            "{other}: {refused:?}"
        );
    }
    // A name resolving to the named address, on the named port, is the same
    // destination the operator allowed.
    let response = send(
        &mut ctx,
        request("GET", &format!("http://loopback.test:{port}/")),
        None,
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.heads().len(), 2);
}

#[tokio::test]
async fn the_request_cap_counts_refused_attempts_and_traces_once() {
    let server = Server::start(|_| ok(b"")).await;
    let grant = format!("http://127.0.0.1:{}", server.addr.port());
    let limits = HttpLimits {
        max_requests_per_call: 3,
        ..HttpLimits::default()
    };
    let network = Network::system().with_limits(limits);
    let (mut ctx, trace) = ctx(network, &[&grant], true);

    // Two refused by the allow-list, one sent: the cap is spent.
    for _ in 0..2 {
        let refused = send(&mut ctx, request("GET", "http://elsewhere.test/"), None).await;
        assert!(matches!(refused, Err(HttpError::HttpRequestDenied)));
    }
    let response = send(&mut ctx, request("GET", &format!("{grant}/")), None).await;
    assert_eq!(response.unwrap().status(), 200);
    for _ in 0..50 {
        let refused = send(&mut ctx, request("GET", &format!("{grant}/")), None).await;
        assert!(matches!(refused, Err(HttpError::HttpRequestDenied)));
    }
    assert_eq!(ctx.budget().attempted(), 53);
    assert_eq!(server.heads().len(), 1);
    let lines = lines(&trace);
    let cap_lines: Vec<_> = lines.iter().filter(|l| l.contains("request cap")).collect();
    assert_eq!(cap_lines.len(), 1, "{lines:?}");
    assert!(
        cap_lines[0].contains("3 requests (max_requests_per_call)"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 4, "{lines:?}");

    // A budget shared by two contexts spans both.
    let budget = RequestBudget::new(1);
    let (first, _) = super::tests::ctx(Network::system(), &[], true);
    let (second, _) = super::tests::ctx(Network::system(), &[], true);
    let (mut first, mut second) = (
        first.with_budget(budget.clone()),
        second.with_budget(budget),
    );
    let _ = send(&mut first, request("GET", "http://a.test/"), None).await;
    let _ = send(&mut second, request("GET", "http://a.test/"), None).await;
    assert_eq!(first.budget().attempted(), 2);
}

#[tokio::test]
async fn read_effect_calls_send_only_get_and_head() {
    let server = Server::start(|_| ok(b"")).await;
    let grant = format!("http://127.0.0.1:{}", server.addr.port());
    let (mut read, trace) = ctx(Network::system(), &[&grant], true);
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let refused = send(&mut read, request(method, &format!("{grant}/")), None).await;
        assert!(
            matches!(refused, Err(HttpError::HttpRequestDenied)),
            "{method}"
        );
    }
    assert!(lines(&trace).iter().all(|l| l.contains("effect is `read`")));
    let head = send(&mut read, request("HEAD", &format!("{grant}/")), None).await;
    assert_eq!(head.unwrap().status(), 200);
    let (mut write, _) = ctx(Network::system(), &[&grant], false);
    let post = send(&mut write, request("POST", &format!("{grant}/")), None).await;
    assert_eq!(post.unwrap().status(), 200);
    let heads = server.heads();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(heads[1].starts_with("POST / "), "{heads:?}");
}

#[tokio::test]
async fn body_bytes_are_counted_each_way_for_the_receipt() {
    let server = Server::start(|_| ok(b"hello")).await;
    let grant = format!("http://127.0.0.1:{}", server.addr.port());
    let (mut write, _) = ctx(Network::system(), &[&grant], false);
    let mut post = request("POST", &format!("{grant}/"));
    *post.body_mut() = Full::new(Bytes::from_static(b"twelve bytes"))
        .map_err(|never| match never {})
        .boxed_unsync();
    let response = send(&mut write, post, None).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"hello");
    let tally = write.budget().tally();
    assert_eq!(
        (tally.requests, tally.bytes_sent, tally.bytes_received),
        (1, 12, 5)
    );
}

#[tokio::test]
async fn trace_lines_hold_no_credentials_or_query() {
    let server = Server::start(|_| ok(b"")).await;
    let port = server.addr.port();
    let grant = format!("http://127.0.0.1:{port}");
    let (mut ctx, trace) = ctx(Network::system(), &[&grant], true);
    let with_secrets = |uri: &str| {
        let mut request = request("GET", uri);
        let headers = request.headers_mut();
        headers.insert("authorization", "Bearer s3cr3t-bearer".parse().unwrap());
        headers.insert(
            "proxy-authorization",
            "Basic cHJveHk6czNjcjN0".parse().unwrap(),
        );
        headers.insert("x-api-key", "s3cr3t-key".parse().unwrap());
        headers.insert("cookie", "session=s3cr3t-cookie".parse().unwrap());
        request
    };
    let allowed = format!("http://alice:s3cr3t-pw@127.0.0.1:{port}/p?token=s3cr3t-query");
    let response = send(&mut ctx, with_secrets(&allowed), None).await.unwrap();
    assert_eq!(response.status(), 200);
    for refused in [
        "http://alice:s3cr3t-pw@elsewhere.test/p?token=s3cr3t-query".to_string(),
        format!(
            "http://alice:s3cr3t-pw@127.0.0.1:{}/?k=s3cr3t",
            port.wrapping_add(1)
        ),
    ] {
        assert!(send(&mut ctx, with_secrets(&refused), None).await.is_err());
    }
    let mut post = with_secrets(&allowed);
    *post.method_mut() = http::Method::POST;
    assert!(send(&mut ctx, post, None).await.is_err());

    let lines = lines(&trace);
    assert_eq!(lines.len(), 4, "{lines:?}");
    for line in &lines {
        assert!(
            !line.contains("s3cr3t") && !line.contains("alice"),
            "{line}"
        );
        assert!(!line.contains("cHJveHk"), "{line}");
    }
    assert!(
        lines[0].contains(&format!("GET http://127.0.0.1:{port}/…")),
        "{lines:?}"
    );
    assert!(lines.iter().all(|line| !line.contains("/p")), "{lines:?}");
}

/// The server name a TLS ClientHello asks for (SNI), if any.
fn sni(hello: &[u8]) -> Option<String> {
    let take = |at: usize, n: usize| hello.get(at..at + n);
    let u16_at = |at: usize| take(at, 2).map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    // Record header (5), handshake header (4), version (2), random (32).
    let mut at = 5 + 4 + 2 + 32;
    at += 1 + usize::from(*hello.get(at)?); // session id
    at += 2 + u16_at(at)?; // cipher suites
    at += 1 + usize::from(*hello.get(at)?); // compression methods
    let end = at + 2 + u16_at(at)?;
    at += 2;
    while at + 4 <= end {
        let (kind, len) = (u16_at(at)?, u16_at(at + 2)?);
        if kind == 0 {
            // server_name_list length (2), name type (1), name length (2).
            let name_len = u16_at(at + 4 + 3)?;
            return take(at + 4 + 5, name_len).map(|n| String::from_utf8_lossy(n).into_owned());
        }
        at += 4 + len;
    }
    None
}

#[tokio::test]
async fn tls_verifies_and_sends_the_requested_name_not_the_dialed_address() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hello = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 16 * 1024];
        let mut got = Vec::new();
        while got.len() < 5 || got.len() < 5 + usize::from(u16::from_be_bytes([got[3], got[4]])) {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        got
    });
    let resolver = Arc::new(ScriptedResolver::default().answer("api.example.test", &[&[PUBLIC]]));
    let dialer = LoopbackDialer::to(addr);
    let (mut ctx, trace) = ctx(
        network(resolver, dialer.clone()),
        &["https://api.example.test"],
        true,
    );
    let failed = send(
        &mut ctx,
        request("GET", "https://api.example.test/v1"),
        None,
    )
    .await;
    // The server hangs up mid-handshake: a guest-visible error, not a trap.
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(dialer.dialed(), [format!("{PUBLIC}:443").parse().unwrap()]);
    let hello = hello.await.unwrap();
    assert_eq!(hello.first(), Some(&0x16), "not a TLS handshake record");
    assert_eq!(sni(&hello).as_deref(), Some("api.example.test"));
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("TLS with api.example.test failed"))
    );
}

#[tokio::test]
async fn response_bodies_over_the_cap_are_guest_errors() {
    let server = Server::start(|head| {
        if head.starts_with("GET /announced ") {
            ok(&[b'x'; 2000])
        } else if head.starts_with("GET /chunked ") {
            chunked(2000)
        } else if head.starts_with("HEAD ") {
            // A HEAD answer announces a length it never sends.
            Some(b"HTTP/1.1 200 OK\r\ncontent-length: 99999999\r\n\r\n".to_vec())
        } else {
            ok(&[b'x'; 1000])
        }
    })
    .await;
    let grant = format!("http://127.0.0.1:{}", server.addr.port());
    let limits = HttpLimits {
        max_response_body_bytes: 1000,
        ..HttpLimits::default()
    };
    let (mut ctx, trace) = ctx(Network::system().with_limits(limits), &[&grant], true);

    // Announced too big: refused with the response head.
    let refused = send(
        &mut ctx,
        request("GET", &format!("{grant}/announced")),
        None,
    )
    .await;
    assert!(
        matches!(refused, Err(HttpError::HttpResponseBodySize(Some(2000)))),
        "{refused:?}"
    );
    // Streamed too big: the body errors once past the cap.
    let response = send(&mut ctx, request("GET", &format!("{grant}/chunked")), None)
        .await
        .unwrap();
    let read = response.into_body().collect().await;
    assert!(
        matches!(read, Err(HttpError::HttpResponseBodySize(Some(n))) if n > 1000),
        "{:?}",
        read.map(|c| c.to_bytes().len())
    );
    // Exactly at the cap is fine, and so is a HEAD answer.
    let response = send(&mut ctx, request("GET", &format!("{grant}/exact")), None)
        .await
        .unwrap();
    assert_eq!(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .len(),
        1000
    );
    let head = send(&mut ctx, request("HEAD", &format!("{grant}/")), None).await;
    assert_eq!(head.unwrap().status(), 200);

    let lines = lines(&trace);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("1000-byte cap (max_response_body_bytes)"))
            .count(),
        2,
        "{lines:?}"
    );
}

#[tokio::test]
async fn every_step_has_a_timeout() {
    let limits = HttpLimits {
        connect_timeout: Duration::from_millis(50),
        first_byte_timeout: Duration::from_millis(100),
        ..HttpLimits::default()
    };
    // Connect: the dialer never finishes.
    let resolver = Arc::new(ScriptedResolver::default().answer("slow.test", &[&[PUBLIC]]));
    let network_ = network(resolver, LoopbackDialer::hanging()).with_limits(limits);
    let (mut ctx_, trace) = ctx(network_, &["*://*:*"], true);
    let started = std::time::Instant::now();
    let timed_out = send(&mut ctx_, request("GET", "http://slow.test/"), None).await;
    assert!(
        matches!(timed_out, Err(HttpError::ConnectionTimeout)),
        "{timed_out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("50ms (connect_timeout)"))
    );

    // First byte: the server reads the request and never answers.
    let silent = Server::start(|_| None).await;
    let grant = format!("http://127.0.0.1:{}", silent.addr.port());
    let (mut ctx_, trace) = ctx(Network::system().with_limits(limits), &[&grant], true);
    let timed_out = send(&mut ctx_, request("GET", &format!("{grant}/")), None).await;
    assert!(
        matches!(timed_out, Err(HttpError::HttpResponseTimeout)),
        "{timed_out:?}"
    );
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("100ms (first_byte_timeout)"))
    );

    // A guest may ask for less time, never for more.
    let (mut ctx_, trace) = ctx(Network::system(), &[&grant], true);
    let options = RequestOptions {
        first_byte_timeout: Some(Duration::from_millis(20)),
        ..RequestOptions::default()
    };
    let timed_out = send(
        &mut ctx_,
        request("GET", &format!("{grant}/")),
        Some(options),
    )
    .await;
    assert!(
        matches!(timed_out, Err(HttpError::HttpResponseTimeout)),
        "{timed_out:?}"
    );
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("20ms (first_byte_timeout)"))
    );
}

#[tokio::test]
async fn dns_failures_are_guest_errors() {
    let resolver = Arc::new(
        ScriptedResolver::default()
            .fail("missing.test")
            .answer("empty.test", &[&[]]),
    );
    let dialer = LoopbackDialer::hanging();
    let (mut ctx, trace) = ctx(network(resolver, dialer.clone()), &["*://*:*"], true);
    for host in ["missing.test", "empty.test"] {
        let failed = send(&mut ctx, request("GET", &format!("http://{host}/")), None).await;
        assert!(
            matches!(failed, Err(HttpError::DnsError { .. })),
            "{host}: {failed:?}"
        );
    }
    assert!(dialer.dialed().is_empty());
    let lines = lines(&trace);
    assert!(lines[0].contains("no such host (scripted)"), "{lines:?}");
    assert!(lines[1].contains("no addresses"), "{lines:?}");
}

/// Never answers a lookup.
struct HangingResolver;

impl Resolver for HangingResolver {
    fn resolve<'a>(&'a self, _host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn connections_and_lookups_wait_for_host_wide_slots() {
    let silent = Server::start(|_| None).await;
    let answering = Server::start(|_| ok(b"hi")).await;
    let grants = [
        format!("http://127.0.0.1:{}", silent.addr.port()),
        format!("http://127.0.0.1:{}", answering.addr.port()),
    ];
    let grants: Vec<&str> = grants.iter().map(String::as_str).collect();
    let limits = HttpLimits {
        connect_timeout: Duration::from_millis(100),
        dns_timeout: Duration::from_millis(100),
        ..HttpLimits::default()
    };
    let shared = Network::system().with_limits(limits).with_slots(1, 1);

    // One connection slot, held by a request the server never answers.
    let (mut holder, _) = ctx(shared.clone(), &grants, true);
    let url = format!("{}/", grants[0]);
    let held = tokio::spawn(async move { send(&mut holder, request("GET", &url), None).await });
    while silent.heads().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (mut waiting, trace) = ctx(shared.clone(), &grants, true);
    let url = format!("{}/", grants[1]);
    let refused = send(&mut waiting, request("GET", &url), None).await;
    assert!(
        matches!(refused, Err(HttpError::ConnectionLimitReached)),
        "{refused:?}"
    );
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("all 1 of the host's outbound connections")),
        "{:?}",
        lines(&trace)
    );
    held.abort();
    let _ = held.await;
    let answered = send(&mut waiting, request("GET", &url), None).await;
    assert!(
        answered.is_ok(),
        "the slot is free once the request ends: {answered:?}"
    );

    // One lookup slot, held by a lookup that never answers.
    let dns = Network::system()
        .with_limits(limits)
        .with_slots(1, 1)
        .with_resolver(Arc::new(HangingResolver));
    let patient = HttpLimits {
        dns_timeout: Duration::from_secs(5),
        ..limits
    };
    let (mut holder, _) = ctx(dns.clone().with_limits(patient), &["*://*:*"], true);
    let held =
        tokio::spawn(
            async move { send(&mut holder, request("GET", "http://hangs.test/"), None).await },
        );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (mut waiting, trace) = ctx(dns, &["*://*:*"], true);
    let refused = send(&mut waiting, request("GET", "http://other.test/"), None).await;
    assert!(matches!(refused, Err(HttpError::DnsTimeout)), "{refused:?}");
    assert!(
        lines(&trace)
            .iter()
            .any(|l| l.contains("all 1 of the host's DNS lookup slots")),
        "{:?}",
        lines(&trace)
    );
    held.abort();
}

#[tokio::test]
async fn the_system_resolver_reads_the_hosts_file() {
    let ips = SystemResolver::default()
        .resolve("localhost")
        .await
        .unwrap();
    assert!(!ips.is_empty());
    assert!(ips.iter().all(IpAddr::is_loopback), "{ips:?}");
}

#[tokio::test]
async fn the_host_header_never_carries_userinfo() {
    let server = Server::start(|_| ok(b"hi")).await;
    let port = server.addr.port();
    let grant = format!("http://127.0.0.1:{port}");
    let (mut ctx, _) = ctx(Network::system(), &[&grant], true);
    let mut sent = request("GET", &format!("http://ada:s3cret@127.0.0.1:{port}/"));
    // What wasmtime-wasi-http puts there: the guest's authority, whole.
    sent.headers_mut().insert(
        http::header::HOST,
        http::HeaderValue::from_str(&format!("ada:s3cret@127.0.0.1:{port}")).unwrap(),
    );
    send(&mut ctx, sent, None).await.unwrap();
    let head = server.heads().concat();
    assert!(!head.contains("s3cret"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("host: 127.0.0.1:{port}")),
        "{head}"
    );
}
