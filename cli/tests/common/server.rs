//! A tiny HTTP/1.1 server on 127.0.0.1 for tests that make tools fetch.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An HTTP/1.1 server on 127.0.0.1 answering each request head with
/// `respond(head)`; it records every head it reads.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Start serving; it runs until the test's runtime ends.
    pub async fn start(respond: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static) -> Self {
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
                    let _ = socket.write_all(&respond(&head)).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Self { addr, heads }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    /// The allow-list entry naming it.
    pub fn grant(&self) -> String {
        self.url("")
    }

    /// Forget the heads read so far.
    pub fn clear_heads(&self) {
        self.heads.lock().unwrap().clear();
    }

    /// Every request head read so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// A request's head as it came (up to 64 KiB), or what came before the
/// connection closed.
pub async fn read_head(socket: &mut TcpStream) -> String {
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

/// A whole response: status line, headers, `content-length` and body.
pub fn reply(status: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut reply = format!(
        "HTTP/1.1 {status}\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body);
    reply
}
