//! Scripted resolvers and dialers, and servers on 127.0.0.1, for the
//! request hook's tests.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::super::*;

/// A global unicast address no test ever sends a packet to: the dialers
/// below connect to a loopback server instead.
pub(super) const PUBLIC: &str = "93.184.215.14";

/// Answers lookups from a script: each lookup of a name takes its next
/// answer; the last one repeats.
#[derive(Default)]
pub(super) struct ScriptedResolver {
    pub(super) script: Mutex<HashMap<String, VecDeque<io::Result<Vec<IpAddr>>>>>,
    pub(super) lookups: Mutex<Vec<String>>,
}

impl ScriptedResolver {
    pub(super) fn answer(self, host: &str, answers: &[&[&str]]) -> Self {
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

    pub(super) fn fail(self, host: &str) -> Self {
        let error = io::Error::new(io::ErrorKind::NotFound, "no such host (scripted)");
        self.script
            .lock()
            .unwrap()
            .insert(host.to_string(), VecDeque::from([Err(error)]));
        self
    }

    pub(super) fn lookups(&self) -> Vec<String> {
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
pub(super) struct LoopbackDialer {
    pub(super) server: Option<SocketAddr>,
    pub(super) dialed: Mutex<Vec<SocketAddr>>,
}

impl LoopbackDialer {
    pub(super) fn to(server: SocketAddr) -> Arc<Self> {
        assert!(server.ip().is_loopback());
        Arc::new(Self {
            server: Some(server),
            dialed: Mutex::default(),
        })
    }

    pub(super) fn hanging() -> Arc<Self> {
        Arc::new(Self {
            server: None,
            dialed: Mutex::default(),
        })
    }

    pub(super) fn dialed(&self) -> Vec<SocketAddr> {
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
pub(super) struct Server {
    pub(super) addr: SocketAddr,
    pub(super) heads: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub(super) async fn start(
        respond: impl Fn(&str) -> Option<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
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

    pub(super) fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

pub(super) async fn read_head(socket: &mut TcpStream) -> String {
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

pub(super) fn ok(body: &[u8]) -> Option<Vec<u8>> {
    let mut reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body);
    Some(reply)
}

pub(super) fn chunked(total: usize) -> Option<Vec<u8>> {
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

pub(super) fn request(method: &str, uri: &str) -> http::Request<WasiBody> {
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

pub(super) fn ctx(network: Network, grants: &[&str], read_only: bool) -> (HttpCtx, TraceLog) {
    let trace = TraceLog::default();
    let allow = Arc::new(AllowList::parse(grants).unwrap());
    (
        HttpCtx::new(network, allow, read_only, trace.clone()),
        trace,
    )
}

pub(super) fn network(resolver: Arc<ScriptedResolver>, dialer: Arc<LoopbackDialer>) -> Network {
    Network::system()
        .with_resolver(resolver)
        .with_dialer(dialer)
}

/// Run the hook as `wasi:http` would, driving the connection in the background.
pub(super) async fn send(
    ctx: &mut HttpCtx,
    request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<http::Response<WasiBody>, HttpError> {
    let future = ctx.send_request(request, options, Box::new(async { Ok(()) }));
    let (response, io) = Box::into_pin(future).await?;
    tokio::spawn(Box::into_pin(io));
    Ok(response)
}

pub(super) fn lines(trace: &TraceLog) -> Vec<String> {
    trace.snapshot().0.into_iter().map(|l| l.message).collect()
}
