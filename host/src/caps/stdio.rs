//! A tool's stdout and stderr: captured per call, truncated at a cap.
//!
//! Nothing a tool prints reaches the host's own stdout. Output past the cap
//! is discarded and the capture is marked `truncated`; it is never an error
//! to the tool.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How many bytes of each stream one call keeps.
pub const DEFAULT_CAPTURE_BYTES: usize = 64 * 1024;

#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

/// One captured output stream. Cloning shares the buffer.
#[derive(Debug, Clone)]
pub struct Capture {
    captured: Arc<Mutex<Captured>>,
    cap: usize,
}

impl Capture {
    /// A capture that keeps at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            captured: Arc::default(),
            cap,
        }
    }

    /// What was kept, as text (lossy), and whether anything was cut.
    pub fn contents(&self) -> (String, bool) {
        let captured = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        (
            String::from_utf8_lossy(&captured.bytes).into_owned(),
            captured.truncated,
        )
    }

    fn write(&self, buf: &[u8]) {
        let mut captured = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        let room = self.cap.saturating_sub(captured.bytes.len());
        if buf.len() > room {
            captured.truncated = true;
        }
        captured
            .bytes
            .extend_from_slice(&buf[..buf.len().min(room)]);
    }
}

impl IsTerminal for Capture {
    fn is_terminal(&self) -> bool {
        false
    }
}

/// How much a guest may write per `check-write` permit.
const WRITE_PERMIT: usize = 1024 * 1024;

impl StdoutStream for Capture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Written to directly, with no adapter task: always ready, never full.
impl OutputStream for Capture {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        Capture::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Capture {
    async fn ready(&mut self) {}
}

impl AsyncWrite for Capture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_the_cap_and_flags_the_rest() {
        let capture = Capture::new(8);
        capture.write(b"hello ");
        assert_eq!(capture.contents(), ("hello ".to_string(), false));
        capture.write(b"world");
        assert_eq!(capture.contents(), ("hello wo".to_string(), true));
        capture.write(b"more");
        assert_eq!(capture.contents(), ("hello wo".to_string(), true));
    }
}
