//! A client of one registry's OCI distribution API, as much of it as
//! publishing and pulling a component takes: manifests by tag or digest,
//! blobs, uploads. Every request goes out through the host's own client
//! (the host's resolver and dialer, TLS with the web PKI roots); every
//! answer is read under a cap; a blob is streamed into the cache, hashed
//! as it comes and kept only when it is its digest, byte for byte.
//!
//! The registry named in the reference is the operator's choice (an
//! address written there is dialed whatever its class; a name's addresses
//! must be globally routable). Redirects (object storage, for blobs) and
//! upload locations are followed, at most [`MAX_REDIRECTS`]: to another
//! origin without the registry's credentials and with its addresses
//! screened (globally routable only), and never from HTTPS to HTTP.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full};

use super::artifact::{MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES};
use super::cache::Cache;
use super::{Digest, Reference};
use crate::caps::http::{AllowList, Network, Screen};
use crate::outbound::{OutboundClient, read_capped};

/// The most redirects one request follows.
pub const MAX_REDIRECTS: usize = 5;

/// The most of an error response's body read, to say what went wrong.
const ERROR_BODY_BYTES: usize = 4 << 10;

/// The largest token response from a registry's auth server.
const TOKEN_BYTES: usize = 64 << 10;

/// How long one blob may take to arrive, whole.
const BLOB_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a blob's body may send nothing, and a manifest, a token or an
/// error may take to arrive whole: what a tool's HTTP waits between bytes.
const BETWEEN_BYTES: Duration = crate::caps::http::DEFAULT_BETWEEN_BYTES_TIMEOUT;

/// Credentials for a registry.
#[derive(Clone)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or token; never shown.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, <password>)", self.username)
    }
}

impl Credentials {
    /// From `TOOLHOST_REGISTRY_USERNAME` and `TOOLHOST_REGISTRY_PASSWORD`,
    /// when both are set.
    pub fn from_env() -> Option<Self> {
        let username = std::env::var("TOOLHOST_REGISTRY_USERNAME").ok()?;
        let password = std::env::var("TOOLHOST_REGISTRY_PASSWORD").ok()?;
        Some(Self { username, password })
    }

    /// The credentials for `registry` (`host[:port]`): the environment's
    /// ([`Credentials::from_env`]), else what Docker's config file
    /// (`$DOCKER_CONFIG/config.json`, or `~/.docker/config.json`) holds for
    /// it, through its credential helper or store when it names one; none
    /// when neither has any. A helper that fails, an unreadable entry, or
    /// an identity token (which needs the registry's OAuth flow) is an
    /// error naming it.
    pub async fn for_registry(registry: &str) -> Result<Option<Self>, String> {
        if let Some(credentials) = Self::from_env() {
            return Ok(Some(credentials));
        }
        let server = registry.to_string();
        let found = tokio::task::spawn_blocking(move || docker_credential::get_credential(&server))
            .await
            .map_err(|e| format!("reading Docker's credentials: {e}"))?;
        use docker_credential::{CredentialRetrievalError as Missing, DockerCredential};
        match found {
            Ok(DockerCredential::UsernamePassword(username, password)) => {
                Ok(Some(Self { username, password }))
            }
            Ok(DockerCredential::IdentityToken(_)) => Err(format!(
                "Docker's config holds an identity token for {registry}, which toolhost cannot \
                 use: set TOOLHOST_REGISTRY_USERNAME and TOOLHOST_REGISTRY_PASSWORD (a token)"
            )),
            Err(
                Missing::ConfigNotFound
                | Missing::ConfigReadError
                | Missing::NoCredentialConfigured,
            ) => Ok(None),
            Err(e) => Err(format!("Docker's credentials for {registry}: {e:?}")),
        }
    }

    fn basic(&self) -> String {
        use base64::Engine as _;
        let pair = format!("{}:{}", self.username, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// One registry, spoken to for one repository's reference.
pub struct RegistryClient {
    client: OutboundClient,
    base: String,
    /// `scheme://host[:port]` of `base`: requests there carry the
    /// credentials.
    origin: String,
    credentials: Option<Credentials>,
    /// What the registry's auth server granted, once asked.
    token: tokio::sync::Mutex<Option<String>>,
    /// Names nothing: redirects to another origin reach globally routable
    /// addresses only.
    nothing: AllowList,
}

/// A response whose status was looked at, with the URL it came from.
struct Answer {
    response: http::Response<hyper::body::Incoming>,
    url: Uri,
}

impl RegistryClient {
    /// The registry of `reference`, dialed through `network`.
    pub fn new(
        network: Network,
        reference: &Reference,
        credentials: Option<Credentials>,
    ) -> Result<Self, String> {
        let base = reference.base_url();
        Ok(Self {
            client: OutboundClient::new(network)?,
            origin: origin_of(&base)?,
            base,
            credentials,
            token: tokio::sync::Mutex::new(None),
            nothing: AllowList::default(),
        })
    }

    /// The manifest `reference` (a tag or a digest) names in `repository`,
    /// and its digest: at most [`MAX_MANIFEST_BYTES`], an OCI image
    /// manifest, and, asked for by digest, that digest's.
    pub async fn manifest(
        &self,
        repository: &str,
        reference: &str,
    ) -> Result<(Vec<u8>, Digest), String> {
        self.manifest_if_any(repository, reference, &[MANIFEST_MEDIA_TYPE])
            .await?
            .ok_or_else(|| format!("the registry has no manifest {repository}:{reference} (404)"))
    }

    /// The manifest `reference` names in `repository`, as
    /// [`RegistryClient::manifest`] reads it but of one of `media_types`;
    /// `None` when the registry has none (404).
    pub async fn manifest_if_any(
        &self,
        repository: &str,
        reference: &str,
        media_types: &[&str],
    ) -> Result<Option<(Vec<u8>, Digest)>, String> {
        let path = format!("/v2/{repository}/manifests/{reference}");
        let accept = media_types.join(", ");
        let answer = self
            .send(Method::GET, &path, &[(ACCEPT, &accept)], Bytes::new())
            .await?;
        if answer.response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let answer = expect(answer, StatusCode::OK, &format!("the manifest {reference}")).await?;
        let media_type = answer
            .response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bare = media_type
            .split(';')
            .next()
            .map(str::trim)
            .unwrap_or_default();
        if !media_types.contains(&bare) {
            return Err(format!(
                "the registry answered {repository}:{reference} with {media_type:?}, not an \
                 image manifest ({})",
                media_types.join(" or ")
            ));
        }
        let said = answer
            .response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = read_small(answer.response.into_body(), MAX_MANIFEST_BYTES)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "the manifest {reference} is over {} MiB",
                    MAX_MANIFEST_BYTES >> 20
                )
            })?;
        let digest = Digest::of(&bytes);
        if reference.starts_with("sha256:") && reference != digest.as_str() {
            return Err(format!(
                "the registry answered for {reference} with a manifest whose digest is {digest}"
            ));
        }
        if let Some(said) = said
            && said != digest.as_str()
        {
            return Err(format!(
                "the registry said the manifest is {said}, but its bytes are {digest}"
            ));
        }
        Ok(Some((bytes.to_vec(), digest)))
    }

    /// The blob `digest` of `repository`, `size` bytes, into `cache`
    /// (nothing kept unless it is exactly that); where it is kept.
    pub async fn blob_into(
        &self,
        repository: &str,
        digest: &Digest,
        size: u64,
        cache: &Cache,
        mut progress: impl FnMut(u64),
    ) -> Result<std::path::PathBuf, String> {
        let fetch = async {
            let path = format!("/v2/{repository}/blobs/{digest}");
            let answer = self.send(Method::GET, &path, &[], Bytes::new()).await?;
            let answer = expect(answer, StatusCode::OK, &format!("the blob {digest}")).await?;
            let mut incoming = cache.incoming().map_err(|e| format!("the cache: {e}"))?;
            let mut body = answer.response.into_body();
            while let Some(frame) = tokio::time::timeout(BETWEEN_BYTES, body.frame())
                .await
                .map_err(|_| format!("the blob {digest} stalled: no bytes for {BETWEEN_BYTES:?}"))?
            {
                let frame = frame.map_err(|e| format!("reading the blob {digest}: {e}"))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if incoming.written() + data.len() as u64 > size {
                    return Err(format!(
                        "the blob {digest} runs past the {size} bytes its manifest says"
                    ));
                }
                incoming
                    .write(&data)
                    .map_err(|e| format!("writing the blob {digest}: {e}"))?;
                progress(incoming.written());
            }
            incoming.keep(cache, digest, size)
        };
        tokio::time::timeout(BLOB_TIMEOUT, fetch)
            .await
            .map_err(|_| format!("the blob {digest} did not arrive in {BLOB_TIMEOUT:?}"))?
    }

    /// The small blob `digest` of `repository`, exactly `size` bytes and
    /// that digest's, in memory.
    pub async fn blob(
        &self,
        repository: &str,
        digest: &Digest,
        size: u64,
    ) -> Result<Vec<u8>, String> {
        let path = format!("/v2/{repository}/blobs/{digest}");
        let answer = self.send(Method::GET, &path, &[], Bytes::new()).await?;
        let answer = expect(answer, StatusCode::OK, &format!("the blob {digest}")).await?;
        let bytes = read_small(answer.response.into_body(), size as usize)
            .await
            .map_err(|e| format!("reading the blob {digest}: {e}"))?
            .ok_or_else(|| {
                format!("the blob {digest} runs past the {size} bytes its manifest says")
            })?;
        if bytes.len() as u64 != size || Digest::of(&bytes) != *digest {
            return Err(format!(
                "the blob said to be {digest} ({size} bytes) is {} ({} bytes)",
                Digest::of(&bytes),
                bytes.len()
            ));
        }
        Ok(bytes.to_vec())
    }

    /// Upload `bytes` to `repository` (unless the registry has them); their
    /// digest.
    pub async fn push_blob(&self, repository: &str, bytes: Bytes) -> Result<Digest, String> {
        let digest = Digest::of(&bytes);
        let path = format!("/v2/{repository}/blobs/{digest}");
        let have = self.send(Method::HEAD, &path, &[], Bytes::new()).await?;
        if have.response.status() == StatusCode::OK {
            return Ok(digest);
        }
        let path = format!("/v2/{repository}/blobs/uploads/");
        let started = self.send(Method::POST, &path, &[], Bytes::new()).await?;
        let started = expect(started, StatusCode::ACCEPTED, "starting an upload").await?;
        let location = started
            .response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or("the registry started an upload without saying where to send it")?;
        let mut upload = resolve(&started.url, location)?.to_string();
        upload.push(if upload.contains('?') { '&' } else { '?' });
        upload.push_str(&format!("digest={digest}"));
        let done = self
            .send_to(
                Method::PUT,
                &upload,
                &[(CONTENT_TYPE, "application/octet-stream")],
                bytes,
            )
            .await?;
        expect(done, StatusCode::CREATED, &format!("uploading {digest}")).await?;
        Ok(digest)
    }

    /// Put `manifest` in `repository` under `tag`; its digest.
    pub async fn push_manifest(
        &self,
        repository: &str,
        tag: &str,
        manifest: Bytes,
    ) -> Result<Digest, String> {
        let digest = Digest::of(&manifest);
        let path = format!("/v2/{repository}/manifests/{tag}");
        let answer = self
            .send(
                Method::PUT,
                &path,
                &[(CONTENT_TYPE, MANIFEST_MEDIA_TYPE)],
                manifest,
            )
            .await?;
        expect(answer, StatusCode::CREATED, &format!("the manifest {tag}")).await?;
        Ok(digest)
    }

    /// Send a request to `path` on the registry.
    async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(http::HeaderName, &str)],
        body: Bytes,
    ) -> Result<Answer, String> {
        let url = format!("{}{path}", self.base);
        self.send_to(method, &url, headers, body).await
    }

    /// Send a request to `url`: with the registry's credentials when it is
    /// the registry's, asking its auth server for a token when it is told
    /// to, and following redirects.
    async fn send_to(
        &self,
        method: Method,
        url: &str,
        headers: &[(http::HeaderName, &str)],
        body: Bytes,
    ) -> Result<Answer, String> {
        let mut url: Uri = url
            .parse()
            .map_err(|e| format!("{url} is not a URL: {e}"))?;
        let mut authorized_again = false;
        for _ in 0..=MAX_REDIRECTS {
            let own = origin(&url) == self.origin;
            let mut builder = Request::builder().method(method.clone()).uri(url.clone());
            for (name, value) in headers {
                builder = builder.header(name, *value);
            }
            if own && let Some(authorization) = self.authorization().await {
                builder = builder.header(AUTHORIZATION, authorization);
            }
            let request = builder
                .body(Full::new(body.clone()))
                .map_err(|e| format!("bad request: {e}"))?;
            let screen = (!own).then(|| Screen {
                allowed: &self.nothing,
                scheme: url.scheme_str().unwrap_or("https"),
                key: "a registry's redirect (to public addresses only)",
            });
            let response = self
                .client
                .send(request, screen)
                .await
                .map_err(|e| format!("{}: {e}", shown(&url)))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && own && !authorized_again {
                authorized_again = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                if let Some(challenge) = challenge
                    && self.fetch_token(&challenge).await?
                {
                    continue;
                }
                return Ok(Answer { response, url });
            }
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let Some(location) = response.headers().get(LOCATION) else {
                    return Ok(Answer { response, url });
                };
                let location = location
                    .to_str()
                    .map_err(|_| "a redirect to a location that is not text".to_string())?;
                let next = resolve(&url, location)?;
                if url.scheme_str() == Some("https") && next.scheme_str() != Some("https") {
                    return Err(format!(
                        "{} redirected from HTTPS to {}: refused",
                        shown(&url),
                        shown(&next)
                    ));
                }
                url = next;
                continue;
            }
            return Ok(Answer { response, url });
        }
        Err(format!(
            "{}: more than {MAX_REDIRECTS} redirects",
            shown(&url)
        ))
    }

    /// The `Authorization` the registry's own requests carry.
    async fn authorization(&self) -> Option<String> {
        if let Some(token) = self.token.lock().await.as_ref() {
            return Some(format!("Bearer {token}"));
        }
        self.credentials.as_ref().map(Credentials::basic)
    }

    /// Ask the auth server a `Bearer` challenge names for a token (with
    /// the credentials, when there are some); whether one was granted.
    async fn fetch_token(&self, challenge: &str) -> Result<bool, String> {
        let Some(params) = challenge.strip_prefix("Bearer ") else {
            return Ok(false);
        };
        let param = |name: &str| {
            params.split(',').find_map(|part| {
                let (key, value) = part.trim().split_once('=')?;
                (key == name).then(|| value.trim_matches('"').to_string())
            })
        };
        let realm = param("realm").ok_or("the registry's auth challenge names no realm")?;
        let mut url = realm.clone();
        let mut separator = if url.contains('?') { '&' } else { '?' };
        for name in ["service", "scope"] {
            if let Some(value) = param(name) {
                url.push(separator);
                separator = '&';
                url.push_str(name);
                url.push('=');
                url.push_str(
                    &percent_encoding::utf8_percent_encode(
                        &value,
                        percent_encoding::NON_ALPHANUMERIC,
                    )
                    .to_string(),
                );
            }
        }
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("the registry's auth realm {realm:?}: {e}"))?;
        let own = origin(&uri) == self.origin;
        if uri.scheme_str() != Some("https") && !(own && self.base.starts_with("http://")) {
            return Err(format!(
                "the registry's auth realm {realm} is not HTTPS: no credentials sent there"
            ));
        }
        let mut builder = Request::builder().method(Method::GET).uri(uri.clone());
        if let Some(credentials) = &self.credentials {
            builder = builder.header(AUTHORIZATION, credentials.basic());
        }
        let request = builder
            .body(Full::new(Bytes::new()))
            .map_err(|e| format!("bad request: {e}"))?;
        let screen = (!own).then_some(Screen {
            allowed: &self.nothing,
            scheme: "https",
            key: "a registry's auth server (at public addresses only)",
        });
        let response = self
            .client
            .send(request, screen)
            .await
            .map_err(|e| format!("the registry's auth server: {e}"))?;
        if response.status() != StatusCode::OK {
            return Err(format!(
                "the registry's auth server refused: {}",
                response.status()
            ));
        }
        let body = read_small(response.into_body(), TOKEN_BYTES)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the registry's auth server answered with over 64 KiB")?;
        #[derive(serde::Deserialize)]
        struct Granted {
            token: Option<String>,
            access_token: Option<String>,
        }
        let granted: Granted = serde_json::from_slice(&body)
            .map_err(|e| format!("the registry's auth server answered with no token: {e}"))?;
        let token = granted
            .token
            .or(granted.access_token)
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
            .ok_or("the registry's auth server answered with no usable token")?;
        *self.token.lock().await = Some(token);
        Ok(true)
    }
}

/// The answer when it has `status`; otherwise an error saying what was
/// asked, the status, and the start of what the registry said.
async fn expect(answer: Answer, status: StatusCode, what: &str) -> Result<Answer, String> {
    if answer.response.status() == status {
        return Ok(answer);
    }
    let got = answer.response.status();
    let said = read_small(answer.response.into_body(), ERROR_BODY_BYTES)
        .await
        .ok()
        .flatten()
        .map(|b| crate::shown::quoted(String::from_utf8_lossy(&b).trim()))
        .unwrap_or_default();
    Err(format!(
        "{what}: the registry answered {got} at {}: {said}",
        shown(&answer.url),
    ))
}

/// At most `cap` bytes of `body`, within [`BETWEEN_BYTES`]; `None` when
/// there are more.
async fn read_small(body: hyper::body::Incoming, cap: usize) -> Result<Option<Bytes>, String> {
    tokio::time::timeout(BETWEEN_BYTES, read_capped(body, cap))
        .await
        .map_err(|_| format!("the registry's answer did not arrive whole in {BETWEEN_BYTES:?}"))?
        .map_err(|e| e.to_string())
}

/// `location` read against `base` (absolute, or a path on base's origin).
fn resolve(base: &Uri, location: &str) -> Result<Uri, String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location
            .parse()
            .map_err(|e| format!("the registry sent a bad location {location:?}: {e}"));
    }
    if !location.starts_with('/') {
        return Err(format!(
            "the registry sent a location that is no path: {location:?}"
        ));
    }
    let origin = origin(base);
    format!("{origin}{location}")
        .parse()
        .map_err(|e| format!("the registry sent a bad location {location:?}: {e}"))
}

/// `scheme://authority` of a URI.
fn origin(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or_default(),
        uri.authority().map_or("", |a| a.as_str())
    )
}

fn origin_of(url: &str) -> Result<String, String> {
    url.parse::<Uri>()
        .map(|uri| origin(&uri))
        .map_err(|e| format!("{url}: {e}"))
}

/// A URL as errors show it: without its query (upload states, signed
/// object-storage URLs).
fn shown(uri: &Uri) -> String {
    format!("{}{}", origin(uri), uri.path())
}
