//! TLS, response caps, timeouts, DNS failures and host-wide slots.

use std::io;
use std::net::IpAddr;
use std::time::Duration;

use http_body_util::BodyExt;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use super::super::*;
use super::fixtures::*;

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
