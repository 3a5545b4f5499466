//! Tools from OCI registries: a component published as a wasm OCI artifact
//! (`artifact.rs`), read from a registry through the host's own client
//! (`client.rs`) into a content-addressed cache (`cache.rs`), named by an
//! `oci://` reference (`reference.rs`), signed and verified with cosign's
//! keys (`signature.rs`). Nothing a registry sends is used before it
//! matched its digest: a manifest its reference's (or the pinned one), a
//! component the digest its manifest names, a signature's payload its
//! layer's, and a signature counts only for the manifest it names.

pub mod artifact;
pub mod cache;
mod client;
mod reference;
mod rules;
pub mod signature;
pub mod sources;

use std::collections::BTreeMap;
use std::path::PathBuf;

use bytes::Bytes;

pub use cache::Cache;
pub use client::{Credentials, MAX_REDIRECTS, RegistryClient};
pub use reference::{Digest, Reference, SCHEME};
pub use rules::Rules;
pub use sources::Sources;

use crate::caps::http::Network;
use signature::{Signed, Trust, TrustedKey, Verdict};

/// How long reading a manifest's signatures may take, whole.
const SIGNATURES_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A Docker image manifest's media type (older cosign writes signature
/// manifests so).
const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// The largest component pulled by default, in bytes.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// A component as it is published.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The component's bytes.
    pub component: Vec<u8>,
    /// Its file name (the layer's title).
    pub title: String,
    /// What it imports ([`artifact::world`]).
    pub imports: Vec<String>,
    /// What it exports.
    pub exports: Vec<String>,
    /// The manifest's annotations (what the tool is).
    pub annotations: BTreeMap<String, String>,
}

/// Publish `artifact` at `reference` (a tag: `latest` when none is
/// written); the reference pinned to the manifest's digest.
pub async fn publish(
    network: Network,
    reference: &Reference,
    artifact: Artifact,
    credentials: Option<Credentials>,
) -> Result<Reference, String> {
    let Artifact {
        component,
        title,
        imports,
        exports,
        annotations,
    } = artifact;
    if reference.digest.is_some() {
        return Err(format!(
            "{reference}: publish to a tag (oci://HOST/REPO:TAG); a digest names what is \
             already there"
        ));
    }
    let layer = Digest::of(&component);
    let config = artifact::config(&layer, &imports, &exports);
    let manifest = artifact::manifest(&config, &layer, component.len() as u64, &title, annotations);
    let registry = RegistryClient::new(network, reference, credentials)?;
    let repository = &reference.repository;
    registry
        .push_blob(repository, Bytes::from(config))
        .await
        .map_err(|e| format!("{reference}: {e}"))?;
    registry
        .push_blob(repository, Bytes::from(component))
        .await
        .map_err(|e| format!("{reference}: {e}"))?;
    let tag = reference.tag.clone().unwrap_or_else(|| "latest".into());
    let digest = registry
        .push_manifest(repository, &tag, Bytes::from(manifest))
        .await
        .map_err(|e| format!("{reference}: {e}"))?;
    Ok(reference.pinned(digest))
}

/// A component pulled from a registry.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// What was asked for, pinned to the manifest's digest.
    pub reference: Reference,
    /// The component's digest (its layer's).
    pub component: Digest,
    /// Where the component is kept in the cache.
    pub path: PathBuf,
    /// The manifest, as the registry sent it (its annotations say what
    /// the tool is).
    pub manifest: Vec<u8>,
}

/// The component `pin` names, when the cache holds its manifest and its
/// component whole (each checked against its digest as it is read): what
/// a pull of it would give, without a registry.
pub fn cached(reference: &Reference, pin: &Digest, cache: &Cache) -> Option<Pulled> {
    let manifest = cached_manifest(cache, pin)?;
    let (component, size) = artifact::component_layer(&manifest, MAX_COMPONENT_BYTES).ok()?;
    cache.read(&component, size).ok()??;
    Some(Pulled {
        reference: reference.pinned(pin.clone()),
        path: cache.path(&component),
        component,
        manifest,
    })
}

/// Whether the cache has files for the manifest `pin` and the component it
/// names (not checked against their digests: [`cached`] does that).
pub fn present(cache: &Cache, pin: &Digest) -> bool {
    cached_manifest(cache, pin)
        .and_then(|manifest| artifact::component_layer(&manifest, MAX_COMPONENT_BYTES).ok())
        .is_some_and(|(component, _)| cache.path(&component).is_file())
}

/// The manifest `digest`, when the cache holds it (checked).
fn cached_manifest(cache: &Cache, digest: &Digest) -> Option<Vec<u8>> {
    cache
        .read(digest, artifact::MAX_MANIFEST_BYTES as u64)
        .ok()
        .flatten()
}

/// Pull the component `reference` names into `cache`: its manifest (which
/// must be `pin`'s, when one is given), then its component, each unless
/// the cache holds it already; `progress` told the bytes so far and the
/// total.
pub async fn pull(
    network: Network,
    reference: &Reference,
    pin: Option<&Digest>,
    cache: &Cache,
    credentials: Option<Credentials>,
    mut progress: impl FnMut(u64, u64),
) -> Result<Pulled, String> {
    let pinned = pin.or(reference.digest.as_ref());
    if let Some(hit) = pinned.and_then(|digest| cached(reference, digest, cache)) {
        return Ok(hit);
    }
    let registry = RegistryClient::new(network, reference, credentials)?;
    // A pinned manifest the cache holds (checked) needs no registry.
    let (manifest, digest, fetched) = match pinned.and_then(|digest| cached_manifest(cache, digest))
    {
        Some(bytes) => {
            let digest = Digest::of(&bytes);
            (bytes, digest, false)
        }
        None => {
            let asked = pinned.map_or_else(|| reference.manifest_reference(), Digest::to_string);
            let (manifest, digest) = registry
                .manifest(&reference.repository, &asked)
                .await
                .map_err(|e| format!("{reference}: {e}"))?;
            (manifest, digest, true)
        }
    };
    if let Some(pin) = pin
        && *pin != digest
    {
        return Err(format!(
            "{reference}: the registry's manifest is {digest}, not the pinned {pin}"
        ));
    }
    let (component, size) = artifact::component_layer(&manifest, MAX_COMPONENT_BYTES)
        .map_err(|e| format!("{reference}: {e}"))?;
    let path = match cache.read(&component, size) {
        Ok(Some(_)) => cache.path(&component),
        Ok(None) | Err(_) => registry
            .blob_into(&reference.repository, &component, size, cache, |got| {
                progress(got, size)
            })
            .await
            .map_err(|e| format!("{reference}: {e}"))?,
    };
    // Kept once its component is: a later start pinned to it reads both
    // from the cache.
    if fetched {
        cache
            .put(&manifest)
            .map_err(|e| format!("{reference}: {e}"))?;
    }
    Ok(Pulled {
        reference: reference.pinned(digest),
        component,
        path,
        manifest,
    })
}

/// Sign the manifest `reference` names (its tag's, or its digest) with
/// `signer`, in cosign's signature tag beside it: a signature made earlier
/// with the same key is replaced, others are kept. The reference pinned to
/// what was signed.
pub async fn sign(
    network: Network,
    reference: &Reference,
    signer: &sigstore::crypto::SigStoreSigner,
    credentials: Option<Credentials>,
) -> Result<Reference, String> {
    let failed = |e: String| format!("{reference}: {e}");
    let registry = RegistryClient::new(network, reference, credentials)?;
    let repository = &reference.repository;
    let (manifest, digest) = registry
        .manifest(repository, &reference.manifest_reference())
        .await
        .map_err(failed)?;
    artifact::component_layer(&manifest, u64::MAX)
        .map_err(|e| failed(format!("{e}: only a component is signed here")))?;
    let identity = format!("{}/{repository}", reference.registry);
    let signed = Signed::new(signer, &identity, &digest)?;
    let own = TrustedKey::of_signer(signer)?;
    let mut all: Vec<Signed> = signatures_in(&registry, repository, &digest)
        .await
        .map_err(|e| failed(format!("reading the signatures there: {e}")))?
        .into_iter()
        .filter(|earlier| !own.verifies(earlier))
        .collect();
    if all.len() >= signature::MAX_SIGNATURES {
        return Err(failed(format!(
            "{} holds {} signatures already, the most read",
            signature::tag(&digest),
            all.len()
        )));
    }
    all.push(signed);
    let (config, listing) = signature::manifest(&all);
    for blob in all
        .iter()
        .map(|s| s.payload.clone().into_bytes())
        .chain([config])
    {
        registry
            .push_blob(repository, Bytes::from(blob))
            .await
            .map_err(failed)?;
    }
    registry
        .push_manifest(repository, &signature::tag(&digest), Bytes::from(listing))
        .await
        .map_err(failed)?;
    Ok(reference.pinned(digest))
}

/// Check the manifest `reference` pins is signed as `trust` asks, before
/// anything of it is compiled: by a signature an earlier check kept in
/// `cache`, when one of `trust`'s keys still verifies it; else by those the
/// registry holds now (the one that verifies is kept). Where a signature
/// is not required, no signature (or no registry) is a
/// [`Verdict::Unsigned`] saying why.
pub async fn verify(
    network: &Network,
    reference: &Reference,
    trust: &Trust,
    cache: &Cache,
) -> Result<Verdict, String> {
    let manifest = reference
        .digest
        .as_ref()
        .ok_or_else(|| format!("{reference} is not pinned to a digest"))?;
    if let Ok(verdict) = trust.check(manifest, &cache.signatures(manifest)) {
        return Ok(verdict);
    }
    let read = async {
        let credentials = Credentials::for_registry(&reference.registry).await?;
        let registry = RegistryClient::new(network.clone(), reference, credentials)?;
        signatures_in(&registry, &reference.repository, manifest).await
    };
    let read = tokio::time::timeout(SIGNATURES_TIMEOUT, read)
        .await
        .unwrap_or_else(|_| Err(format!("they did not arrive in {SIGNATURES_TIMEOUT:?}")));
    let verdict = match read {
        Ok(signatures) => trust.verdict(manifest, &signatures),
        Err(e) if trust.required => Err(format!("reading its signatures: {e}")),
        Err(e) => Ok(Verdict::Unsigned(format!("reading its signatures: {e}"))),
    }
    .map_err(|e| format!("{reference}: {e}"))?;
    if let Verdict::Signed { signature, .. } = &verdict {
        cache.keep_signatures(manifest, std::slice::from_ref(signature))?;
    }
    Ok(verdict)
}

/// The signatures `registry` holds for `manifest` in `repository` (none
/// when it has no signature tag), each payload checked against its
/// digest.
async fn signatures_in(
    registry: &RegistryClient,
    repository: &str,
    manifest: &Digest,
) -> Result<Vec<Signed>, String> {
    let Some((listing, _)) = registry
        .manifest_if_any(
            repository,
            &signature::tag(manifest),
            &[artifact::MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE],
        )
        .await?
    else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for layer in signature::layers(&listing)? {
        let payload = registry
            .blob(repository, &layer.payload, layer.size)
            .await?;
        let payload = String::from_utf8(payload)
            .map_err(|_| format!("the signed payload {} is not UTF-8", layer.payload))?;
        found.push(Signed {
            payload,
            signature: layer.signature,
        });
    }
    Ok(found)
}
