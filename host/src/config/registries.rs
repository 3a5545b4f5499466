//! `[registries]`: how OCI registries are spoken to. HTTPS, except a
//! registry on a loopback address and one listed in `insecure` (a
//! registry on the operator's own network without TLS): those over plain
//! HTTP. Listing a registry makes its manifests, blobs and credentials
//! readable on the way; digests and signatures still decide what runs.
//!
//! ```toml
//! [registries]
//! insecure = ["registry.internal:5000"]   # host[:port], as references write it
//! ```

use serde::Deserialize;

use crate::oci::Reference;

/// The `[registries]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrySettings {
    /// Registries (`host[:port]`, as written in references) spoken to over
    /// plain HTTP.
    #[serde(default)]
    pub insecure: Vec<String>,
}

impl RegistrySettings {
    /// Check each entry is a registry's `host[:port]`.
    pub(super) fn validate(&self) -> anyhow::Result<()> {
        for registry in &self.insecure {
            let parsed = Reference::parse(&format!("{}{registry}/any", crate::oci::SCHEME));
            anyhow::ensure!(
                parsed.is_ok_and(|r| r.registry == registry.to_ascii_lowercase())
                    && !registry.contains('/'),
                "in [registries]: insecure names {registry:?}, which is not a registry's \
                 host[:port] (as in oci://registry.internal:5000/team/tool)"
            );
        }
        Ok(())
    }
}
