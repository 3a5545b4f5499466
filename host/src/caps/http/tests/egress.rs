//! Which address a request dials, what is refused before dialing, and
//! what a request counts.

use std::net::IpAddr;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

use super::super::*;
use super::fixtures::*;

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
    let (first, _) = super::fixtures::ctx(Network::system(), &[], true);
    let (second, _) = super::fixtures::ctx(Network::system(), &[], true);
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
