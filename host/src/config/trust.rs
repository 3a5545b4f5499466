//! `[trust."<scope>"]`: whose signatures a tool from an OCI registry must
//! carry before it loads (cosign keys; see `toolhost sign`). The scope is
//! `*` (every registry), a registry (`host[:port]`), or a registry and a
//! repository or a folder of repositories; the most specific one that
//! covers a source applies ([`crate::oci::Rules::trust_for`]), and a source
//! no scope covers needs no signature.
//!
//! ```toml
//! [trust."registry.example.com/acme"]
//! keys = ["keys/acme.pub"]   # PEM public keys, relative to the host directory
//! required = true            # the default; false: check, log, load anyway
//! ```

use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

use crate::oci::Reference;
use crate::oci::signature::{Trust, TrustedKey};

/// The largest public key file read.
const MAX_KEY_BYTES: usize = 16 << 10;

/// The most keys one scope names.
const MAX_KEYS: usize = 32;

/// One `[trust."<scope>"]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustSettings {
    /// PEM public key files (relative to the host directory); a signature
    /// by any one of them counts.
    pub keys: Vec<String>,
    /// Whether a component none of them signed is refused (the default),
    /// or loaded with the reason logged.
    #[serde(default = "required_by_default")]
    pub required: bool,
    /// The keys, read when the config is.
    #[serde(skip)]
    read: Vec<TrustedKey>,
}

fn required_by_default() -> bool {
    true
}

impl TrustSettings {
    /// Read each of `keys` (relative to `dir`) and check it is a public key
    /// cosign verifies with.
    pub fn read_keys(&mut self, scope: &str, dir: &Path) -> anyhow::Result<()> {
        let at = format!("[trust.{scope:?}]");
        anyhow::ensure!(
            !self.keys.is_empty(),
            "{at}: `keys` is empty: name the public keys a signature must be made with"
        );
        anyhow::ensure!(
            self.keys.len() <= MAX_KEYS,
            "{at}: `keys` names {} keys; at most {MAX_KEYS}",
            self.keys.len()
        );
        self.read = self
            .keys
            .iter()
            .map(|file| {
                let pem = super::agent_tools::read_bounded(&dir.join(file), MAX_KEY_BYTES)
                    .with_context(|| format!("{at}: cannot read the key {file}"))?;
                TrustedKey::from_pem(file, pem.as_bytes()).map_err(|e| anyhow::anyhow!("{at}: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(())
    }

    /// The trust this entry gives, under `scope`.
    pub(super) fn trust(&self, scope: &str) -> Trust {
        // Registries are matched as references spell them: lowercase.
        let scope = match scope.split_once('/') {
            Some((registry, path)) => format!("{}/{path}", registry.to_ascii_lowercase()),
            None => scope.to_ascii_lowercase(),
        };
        Trust {
            scope,
            keys: self.read.clone(),
            required: self.required,
        }
    }
}

/// Check a scope's spelling: `*`, `host[:port]` or `host[:port]/path`.
pub(super) fn check_scope(scope: &str, settings: &TrustSettings) -> anyhow::Result<()> {
    let at = format!("[trust.{scope:?}]");
    if scope != "*" {
        let written = if scope.contains('/') {
            format!("{}{scope}", crate::oci::SCHEME)
        } else {
            format!("{}{scope}/any", crate::oci::SCHEME)
        };
        let reference = Reference::parse(&written).map_err(|_| {
            anyhow::anyhow!(
                "{at}: a scope is `*`, a registry (`host[:port]`), or a registry and a \
                 repository (`host[:port]/name`), without a tag or digest"
            )
        })?;
        anyhow::ensure!(
            reference.tag.is_none() && reference.digest.is_none(),
            "{at}: a scope names no tag or digest"
        );
    }
    anyhow::ensure!(
        settings.read.len() == settings.keys.len(),
        "{at}: its keys were not read (a config made in code calls TrustSettings::read_keys)"
    );
    Ok(())
}
