//! The host's own outbound HTTP requests (to an MCP server's `url`, to an
//! OCI registry) under the same rules as a tool's: the host's resolver and
//! dialer ([`Network`]), a name's addresses dialed only when globally
//! routable (an address the operator wrote literally is theirs to choose;
//! one somebody else named is screened by an allow-list: [`Screen`]), TLS
//! with the web PKI roots, HTTP/1.1, and a connection of its own per
//! request, so every request is screened anew. Redirects are the caller's
//! to follow, or not; response bodies are the caller's to read, under a
//! cap.

use std::sync::Arc;

use bytes::Bytes;
use http::header::HOST;
use http::{HeaderValue, Request};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncWrite};
use wasmtime_wasi_http::io::TokioIo;

use crate::caps::http::{Network, Screen};

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct OutboundError(pub(crate) String);

/// Sends the host's own requests.
#[derive(Clone)]
pub(crate) struct OutboundClient {
    network: Network,
    tls: tokio_rustls::TlsConnector,
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

impl OutboundClient {
    /// A client dialing through `network`.
    pub(crate) fn new(network: Network) -> Result<Self, String> {
        let config = crate::caps::http::client_tls_config().map_err(|e| format!("{e:#}"))?;
        Ok(Self {
            network,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    /// Send `request` (to an absolute `http://` or `https://` URI) on a
    /// connection of its own, its addresses screened by `screen` when
    /// someone other than the operator named them; the response, whose
    /// body the caller reads.
    pub(crate) async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
        screen: Option<Screen<'_>>,
    ) -> Result<http::Response<Incoming>, OutboundError> {
        let uri = request.uri().clone();
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => {
                return Err(OutboundError(format!(
                    "{uri} is not an http:// or https:// address"
                )));
            }
        };
        let host = uri
            .host()
            .ok_or_else(|| OutboundError(format!("{uri} has no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let (stream, addr, slot) = self
            .network
            .dial_checked(&host, port, screen)
            .await
            .map_err(OutboundError)?;
        let limits = *self.network.limits();
        let io: Box<dyn Io> = if https {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| OutboundError(format!("{host} is not a TLS server name: {e}")))?;
            let tls = tokio::time::timeout(limits.connect_timeout, self.tls.connect(name, stream))
                .await
                .map_err(|_| OutboundError(format!("the TLS handshake with {addr} timed out")))?
                .map_err(|e| OutboundError(format!("the TLS handshake with {addr} failed: {e}")))?;
            Box::new(tls)
        } else {
            Box::new(stream)
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| OutboundError(format!("HTTP handshake with {addr} failed: {e}")))?;
        tokio::spawn(async move {
            // The connection's slot is freed when the connection closes.
            let _slot = slot;
            let _ = connection.await;
        });
        let authority = uri
            .authority()
            .map_or(host.as_str(), |a| a.as_str())
            .to_string();
        let host_header = HeaderValue::try_from(authority)
            .map_err(|e| OutboundError(format!("bad Host header: {e}")))?;
        request.headers_mut().insert(HOST, host_header);
        let target = uri.path_and_query().map_or("/", |p| p.as_str());
        *request.uri_mut() = target
            .parse()
            .map_err(|e| OutboundError(format!("bad request target {target:?}: {e}")))?;
        tokio::time::timeout(limits.first_byte_timeout, sender.send_request(request))
            .await
            .map_err(|_| OutboundError(format!("{addr} sent no response in time")))?
            .map_err(|e| OutboundError(format!("{addr}: {e}")))
    }
}

/// At most `cap` bytes of `body`, or `None` when it is longer.
pub(crate) async fn read_capped(
    body: Incoming,
    cap: usize,
) -> Result<Option<Bytes>, OutboundError> {
    match Limited::new(body, cap).collect().await {
        Ok(collected) => Ok(Some(collected.to_bytes())),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Ok(None),
        Err(e) => Err(OutboundError(format!("reading the response failed: {e}"))),
    }
}
