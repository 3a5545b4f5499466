//! `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST]`: where a tool is
//! published, read strictly (the distribution spec's grammar for names,
//! tags and digests), so nothing a user types reaches a registry's URL
//! unchecked.

use std::fmt;

/// The scheme a reference is written with.
pub const SCHEME: &str = "oci://";

/// The longest repository name the distribution spec allows clients to
/// rely on.
const MAX_REPOSITORY_BYTES: usize = 255;

/// The longest tag.
const MAX_TAG_BYTES: usize = 128;

/// A content digest: `sha256:` and 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(String);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        use sha2::Digest as _;
        Self(format!(
            "sha256:{}",
            hex::encode(sha2::Sha256::digest(bytes))
        ))
    }

    /// A digest as written (`sha256:<64 hex>`); why not, when it is not one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let hex = text
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("digest {text:?}: expected sha256:<64 hex digits>"))?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(format!(
                "digest {text:?}: expected sha256: and 64 lowercase hex digits"
            ));
        }
        Ok(Self(text.to_string()))
    }

    /// Its hex part, as a file name.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }

    /// It as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A component's place in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host` or `host:port`, lowercase.
    pub registry: String,
    /// `name/space/repo`.
    pub repository: String,
    /// The tag, when one is written.
    pub tag: Option<String>,
    /// The digest, when one is written.
    pub digest: Option<Digest>,
    /// Spoken to over plain HTTP although not on a loopback address: the
    /// operator listed its registry in `[registries] insecure`
    /// ([`Reference::insecure_among`]).
    pub insecure: bool,
}

impl Reference {
    /// Read `oci://…`; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| format!("{text:?}: a registry reference starts with {SCHEME}"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => (rest, Some(Digest::parse(digest)?)),
            None => (rest, None),
        };
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| format!("{text:?}: expected oci://HOST/REPOSITORY"))?;
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
            _ => (path, None),
        };
        check_registry(registry).map_err(|e| format!("{text:?}: {e}"))?;
        check_repository(repository).map_err(|e| format!("{text:?}: {e}"))?;
        if let Some(tag) = tag {
            check_tag(tag).map_err(|e| format!("{text:?}: {e}"))?;
        }
        Ok(Self {
            registry: registry.to_ascii_lowercase(),
            repository: repository.to_string(),
            tag: tag.map(str::to_string),
            digest,
            insecure: false,
        })
    }

    /// The same, spoken to over plain HTTP when its registry (`host:port`
    /// as written) is one of `insecure`.
    pub fn insecure_among(self, insecure: &[String]) -> Self {
        let listed = insecure
            .iter()
            .any(|registry| registry.eq_ignore_ascii_case(&self.registry));
        Self {
            insecure: listed,
            ..self
        }
    }

    /// What names the manifest in the registry: the digest when one is
    /// written, else the tag, else `latest`.
    pub fn manifest_reference(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(digest), _) => digest.to_string(),
            (None, Some(tag)) => tag.clone(),
            (None, None) => "latest".to_string(),
        }
    }

    /// The same repository pinned to `digest` (the tag kept, for people).
    pub fn pinned(&self, digest: Digest) -> Self {
        Self {
            digest: Some(digest),
            ..self.clone()
        }
    }

    /// The registry's host, without its port or brackets.
    pub fn host(&self) -> &str {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            _ => &self.registry,
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// Whether the registry is spoken to over plain HTTP: one on a
    /// loopback address, or one the operator listed as insecure (anything
    /// else is HTTPS).
    pub fn plain_http(&self) -> bool {
        self.insecure
            || self
                .host()
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// The registry's base URL.
    pub fn base_url(&self) -> String {
        let scheme = if self.plain_http() { "http" } else { "https" };
        format!("{scheme}://{}", self.registry)
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

fn check_registry(registry: &str) -> Result<(), String> {
    let (host, port) = match registry.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, Some(port)),
        _ => (registry, None),
    };
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p != 0)
    {
        return Err(format!("the registry's port {port:?} is not a port"));
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let valid = !bare.is_empty()
        && bare.len() <= 253
        && bare
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:".contains(&b))
        && (bare.contains(':') == host.starts_with('['));
    if !valid {
        return Err(format!("{host:?} is not a registry host"));
    }
    Ok(())
}

/// The distribution spec's repository name: path components of lowercase
/// letters and digits, joined inside by `.`, `_`, `__` or dashes.
fn check_repository(repository: &str) -> Result<(), String> {
    let component_ok = |part: &str| {
        let bytes = part.as_bytes();
        !bytes.is_empty()
            && bytes[0].is_ascii_alphanumeric()
            && bytes[bytes.len() - 1].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(b))
            && !part.contains("..")
            && !part.contains("___")
            && !part.contains("._")
            && !part.contains("_.")
    };
    if repository.len() > MAX_REPOSITORY_BYTES || !repository.split('/').all(component_ok) {
        return Err(format!(
            "repository {repository:?}: expected lowercase path components like \
             `team/tool-name` (at most {MAX_REPOSITORY_BYTES} bytes)"
        ));
    }
    Ok(())
}

fn check_tag(tag: &str) -> Result<(), String> {
    let bytes = tag.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.len() <= MAX_TAG_BYTES
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b));
    if !valid {
        return Err(format!(
            "tag {tag:?}: expected up to {MAX_TAG_BYTES} of A-Za-z0-9 . _ -, not starting \
             with . or -"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_read_strictly() {
        let hex = "a".repeat(64);
        let full =
            Reference::parse(&format!("oci://127.0.0.1:5000/team/greet:v1@sha256:{hex}")).unwrap();
        assert_eq!(full.registry, "127.0.0.1:5000");
        assert_eq!(full.repository, "team/greet");
        assert_eq!(full.tag.as_deref(), Some("v1"));
        assert_eq!(full.manifest_reference(), format!("sha256:{hex}"));
        assert_eq!(
            full.to_string(),
            format!("oci://127.0.0.1:5000/team/greet:v1@sha256:{hex}")
        );
        assert!(full.plain_http());
        assert_eq!(full.base_url(), "http://127.0.0.1:5000");
        let bare = Reference::parse("oci://ghcr.io/acme/tools/greet").unwrap();
        assert_eq!(
            (bare.manifest_reference().as_str(), bare.plain_http()),
            ("latest", false)
        );
        assert_eq!(bare.base_url(), "https://ghcr.io");
        let listed = bare.clone().insecure_among(&["GHCR.io".into()]);
        assert_eq!(listed.base_url(), "http://ghcr.io");
        let unlisted = bare.clone().insecure_among(&["ghcr.io:443".into()]);
        assert_eq!(unlisted.base_url(), "https://ghcr.io");
        let v6 = Reference::parse("oci://[::1]:5000/greet:v2").unwrap();
        assert_eq!((v6.host(), v6.plain_http()), ("::1", true));
        for hostile in [
            "https://ghcr.io/acme/greet",
            "oci://ghcr.io",
            "oci:///greet",
            "oci://ghcr.io/Acme/greet",
            "oci://ghcr.io/acme/../greet",
            "oci://ghcr.io/acme//greet",
            "oci://ghcr.io/acme/greet:",
            "oci://ghcr.io/acme/greet:-v1",
            "oci://ghcr.io/acme/greet:v1?x=1",
            "oci://ghcr.io/acme/greet@sha256:abc",
            "oci://ghcr.io/acme/greet@sha512:abc",
            "oci://gh cr.io/greet",
            "oci://ghcr.io:0/greet",
            "oci://ghcr.io:99999/greet",
            "oci://user@ghcr.io/greet",
            "oci://ghcr.io/acme/greet#frag",
        ] {
            assert!(Reference::parse(hostile).is_err(), "{hostile}");
        }
        let long = format!("oci://ghcr.io/{}", "a".repeat(300));
        assert!(Reference::parse(&long).unwrap_err().contains("at most 255"));
        let long_tag = format!("oci://ghcr.io/a:{}", "v".repeat(129));
        assert!(Reference::parse(&long_tag).is_err());
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        let digest = Digest::of(b"hello");
        assert_eq!(
            digest.as_str(),
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(Digest::parse(digest.as_str()).unwrap(), digest);
        assert!(Digest::parse(&digest.as_str().to_uppercase()).is_err());
        assert!(Digest::parse("sha256:../../etc/passwd").is_err());
    }
}
