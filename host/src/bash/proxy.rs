//! `bash`'s way out, when the toolset's `http` allow-list names one: an
//! HTTP proxy the host runs for one call. Its listening socket is made by
//! the host *inside* the sandbox's network namespace (on
//! `127.0.0.1:`[`PORT`], before the command starts), so the namespace
//! stays empty of any route out and the sandbox holds nothing of the
//! host's network: every connection it makes arrives here. A `CONNECT`
//! (HTTPS, tunnelled as it is) or an absolute-form request (plain HTTP) is
//! admitted only to an origin the allow-list admits, each counted against
//! the call's request cap, and dialed under the same address screening as
//! a tool's requests (a name's addresses must be globally routable unless
//! the list names the address itself). What was refused is told to the
//! call, so the model reads why.

use std::io::Write as _;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::caps::http::{AllowList, Network, RequestBudget, Screen};

/// The port the proxy listens on in the sandbox's loopback.
pub const PORT: u16 = 3128;

/// The largest request head a client may send before its body.
const MAX_HEAD_BYTES: usize = 16 << 10;

/// The most headers in a request head.
const MAX_HEADERS: usize = 100;

/// The most connections one call's sandbox holds through the proxy at once.
const MAX_CONNECTIONS: usize = 16;

/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the sandbox's loopback is waited for to come up.
const LOOPBACK_WAIT: Duration = Duration::from_secs(5);

/// The most refusals kept to tell the call.
const MAX_REFUSALS: usize = 8;

/// Where one call's sandbox may connect, and what it is counted against.
#[derive(Debug, Clone)]
pub struct Egress {
    /// The toolset's `http` allow-list.
    pub allowed: Arc<AllowList>,
    /// The host's network: resolver, dialer, connection slots and limits.
    pub network: Network,
    /// The call's request cap and tally.
    pub budget: RequestBudget,
}

/// A proxy serving one call's sandbox; what it refused.
#[derive(Debug, Default)]
pub struct Refusals(Mutex<Vec<String>>);

impl Refusals {
    /// Keep `refusal` to tell the call, while fewer than [`MAX_REFUSALS`]
    /// are kept.
    pub(super) fn note(&self, refusal: String) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < MAX_REFUSALS {
            kept.push(refusal);
        }
    }

    /// What was refused, the first [`MAX_REFUSALS`].
    pub fn taken(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A listener on `127.0.0.1:`[`PORT`] in the network namespace process
/// `pid` is in, made from a thread of its own that enters that namespace
/// and ends (so no other of the host's threads ever changes namespace).
/// It blocks until the namespace's loopback is up: call it where blocking
/// is allowed.
pub(super) fn listen_in(pid: u32) -> std::io::Result<std::net::TcpListener> {
    let namespace = std::fs::File::open(format!("/proc/{pid}/ns/net"))?;
    let listener = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: setns on a descriptor this thread's scope holds;
                // it changes this thread's namespace only.
                if unsafe { libc::setns(namespace.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // bubblewrap brings the namespace's loopback up once the
                // sandbox's first process runs, which may be a moment
                // after it names that process.
                let waiting = std::time::Instant::now();
                loop {
                    match std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, PORT)) {
                        Err(e)
                            if e.raw_os_error() == Some(libc::EADDRNOTAVAIL)
                                && waiting.elapsed() < LOOPBACK_WAIT =>
                        {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        bound => return bound,
                    }
                }
            })
            .join()
            .map_err(|_| std::io::Error::other("the thread entering the sandbox's network died"))?
    })?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serve the sandbox's connections on `listener` until dropped (with the
/// call): each relayed, or refused with a reason noted in `refusals`.
pub(super) async fn serve(listener: TcpListener, egress: Egress, refusals: Arc<Refusals>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((client, _)) = listener.accept().await else {
            // Out of descriptors, most likely: a moment for some to free.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let (egress, refusals) = (egress.clone(), Arc::clone(&refusals));
        connections.spawn(async move {
            if let Err(refusal) = relay(client, &egress).await {
                refusals.note(refusal);
            }
            drop(slot);
        });
        // Finished connections' results are not kept.
        while connections.try_join_next().is_some() {}
    }
}

/// What a client asked the proxy for.
#[derive(Debug, PartialEq, Eq)]
struct Asked {
    /// `https` for a tunnel (`CONNECT`), `http` for a request.
    scheme: &'static str,
    host: String,
    port: u16,
    /// For a request: its head as the origin server gets it (the target in
    /// origin form, hop-by-hop headers dropped, the connection closed after
    /// it). Empty for a tunnel.
    head: Vec<u8>,
}

/// Relay one client's connection; why not, when it was refused (the
/// client was told too).
async fn relay(mut client: TcpStream, egress: &Egress) -> Result<(), String> {
    let (head, rest) = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(read)) => read,
        Ok(Err(problem)) => return refuse(&mut client, 400, problem).await,
        Err(_) => return refuse(&mut client, 408, "no request head in 10 s".into()).await,
    };
    let asked = match parse(&head) {
        Ok(asked) => asked,
        Err(problem) => return refuse(&mut client, 400, problem).await,
    };
    let origin = format!("{}://{}:{}", asked.scheme, asked.host, asked.port);
    if !egress.allowed.allows(asked.scheme, &asked.host, asked.port) {
        let problem = format!("{origin} is not in the toolset's `http` allow-list");
        return refuse(&mut client, 403, problem).await;
    }
    if !egress.budget.admit_relayed() {
        let problem = format!(
            "{origin}: the call has made its {} requests (max_requests_per_call)",
            egress.budget.max()
        );
        return refuse(&mut client, 429, problem).await;
    }
    let screen = Screen {
        allowed: &egress.allowed,
        scheme: asked.scheme,
        key: "the toolset's `http`",
    };
    let (mut upstream, _, _slot) = match egress
        .network
        .dial_checked(&asked.host, asked.port, Some(screen))
        .await
    {
        Ok(dialed) => dialed,
        Err(problem) => return refuse(&mut client, 502, format!("{origin}: {problem}")).await,
    };
    let sent_first = if asked.head.is_empty() {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .map_err(|e| format!("{origin}: the client went away: {e}"))?;
        0
    } else {
        upstream
            .write_all(&asked.head)
            .await
            .map_err(|e| format!("{origin}: cannot send the request: {e}"))?;
        asked.head.len() as u64
    };
    upstream
        .write_all(&rest)
        .await
        .map_err(|e| format!("{origin}: cannot send the request: {e}"))?;
    let (sent, received) = tokio::io::copy_bidirectional(&mut client, &mut upstream)
        .await
        .unwrap_or((0, 0));
    egress
        .budget
        .count_relayed(sent_first + rest.len() as u64 + sent, received);
    Ok(())
}

/// Tell the client its request was refused with `status` and why; the
/// reason, to note.
async fn refuse(client: &mut TcpStream, status: u16, problem: String) -> Result<(), String> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        _ => "Bad Gateway",
    };
    let body = format!("toolhost: {problem}\n");
    let mut answer = Vec::new();
    let _ = write!(
        answer,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(&answer).await;
    let _ = client.shutdown().await;
    Err(problem)
}

/// The request head a client sends, up to its blank line, and what it
/// sent past it.
async fn read_head(client: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut read = Vec::with_capacity(1024);
    let mut buffer = [0u8; 4096];
    loop {
        let n = client
            .read(&mut buffer)
            .await
            .map_err(|e| format!("reading the request: {e}"))?;
        if n == 0 {
            return Err("the connection closed before a whole request head".into());
        }
        let searched_from = read.len().saturating_sub(3);
        read.extend_from_slice(&buffer[..n]);
        if let Some(end) = read[searched_from..]
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
        {
            let end = searched_from + end + 4;
            if end > MAX_HEAD_BYTES {
                break;
            }
            let rest = read.split_off(end);
            return Ok((read, rest));
        }
        if read.len() > MAX_HEAD_BYTES {
            break;
        }
    }
    Err(format!("a request head over {} KiB", MAX_HEAD_BYTES >> 10))
}

/// What a request head asks for: a tunnel to `host:port` (`CONNECT`), or
/// a plain-HTTP request to an absolute `http://` URL.
fn parse(head: &[u8]) -> Result<Asked, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("an incomplete request head".into()),
        Err(e) => return Err(format!("a malformed request head: {e}")),
    }
    let method = request.method.unwrap_or_default();
    let target = request.path.unwrap_or_default();
    if method == "CONNECT" {
        let (host, port) = host_and_port(target, None)
            .ok_or_else(|| format!("CONNECT {target}: expected host:port"))?;
        return Ok(Asked {
            scheme: "https",
            host,
            port,
            head: Vec::new(),
        });
    }
    let uri: http::Uri = target
        .parse()
        .map_err(|_| format!("{method} {target}: not a URL"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!(
            "{method} {target}: only http:// URLs are asked for this way (https goes by CONNECT)"
        ));
    }
    let authority = uri
        .authority()
        .ok_or_else(|| format!("{method} {target}: no host"))?;
    if authority.as_str().contains('@') {
        return Err(format!(
            "{method} {target}: credentials in a URL are not relayed"
        ));
    }
    let (host, port) = host_and_port(authority.as_str(), Some(80))
        .ok_or_else(|| format!("{method} {target}: a malformed host"))?;
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut forwarded = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "proxy-authorization" | "keep-alive"
        ) {
            continue;
        }
        forwarded.extend_from_slice(header.name.as_bytes());
        forwarded.extend_from_slice(b": ");
        forwarded.extend_from_slice(header.value);
        forwarded.extend_from_slice(b"\r\n");
    }
    forwarded.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Asked {
        scheme: "http",
        host,
        port,
        head: forwarded,
    })
}

/// `host:port` (or `[v6]:port`) split, the host lowercased; `default` when
/// the port is left out, where it may be.
fn host_and_port(authority: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, Some(port.parse::<u16>().ok()?)),
        _ => (authority, None),
    };
    let port = port.or(default)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let valid = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:_".contains(&b));
    (valid && port != 0).then(|| (host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_asks_for_is_read_strictly() {
        let tunnel = parse(b"CONNECT Docs.rs:443 HTTP/1.1\r\nHost: docs.rs:443\r\n\r\n").unwrap();
        assert_eq!(
            (tunnel.scheme, tunnel.host.as_str(), tunnel.port),
            ("https", "docs.rs", 443)
        );
        let plain = parse(
            b"GET http://example.org/a?b=1 HTTP/1.1\r\nHost: example.org\r\n\
              Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!((plain.host.as_str(), plain.port), ("example.org", 80));
        assert_eq!(
            String::from_utf8(plain.head).unwrap(),
            "GET /a?b=1 HTTP/1.1\r\nHost: example.org\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let v6 = parse(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        for hostile in [
            &b"CONNECT docs.rs HTTP/1.1\r\n\r\n"[..],
            b"CONNECT docs.rs:0 HTTP/1.1\r\n\r\n",
            b"CONNECT docs.rs:99999 HTTP/1.1\r\n\r\n",
            b"CONNECT a b:443 HTTP/1.1\r\n\r\n",
            b"CONNECT evil\x01.rs:443 HTTP/1.1\r\n\r\n",
            b"GET /relative HTTP/1.1\r\nHost: docs.rs\r\n\r\n",
            b"GET https://docs.rs/ HTTP/1.1\r\n\r\n",
            b"GET ftp://docs.rs/ HTTP/1.1\r\n\r\n",
            b"GET http://user:pw@docs.rs/ HTTP/1.1\r\n\r\n",
            b"GET http://docs.rs/ HTTP/1.1\r\nBad Header\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        ] {
            assert!(
                parse(hostile).is_err(),
                "{}",
                String::from_utf8_lossy(hostile)
            );
        }
    }
}
