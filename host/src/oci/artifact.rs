//! The wasm OCI artifact layout, as wasm-pkg-tools (`wkg oci push`) and the
//! `oci-wasm` crate write it: an OCI image manifest whose config blob is
//! `application/vnd.wasm.config.v0+json` (the component's imports and
//! exports, `architecture: "wasm"`, `os: "wasip2"`) and whose one layer is
//! the component, `application/wasm`, titled with its file name. What is
//! read back from a registry is checked against the same shape, with
//! bounded sizes, before any blob is fetched.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Digest;

/// An OCI image manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// The wasm config blob's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";

/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The annotation a layer's file name is written in.
pub const TITLE: &str = "org.opencontainers.image.title";

/// The largest manifest read from a registry (the distribution spec's
/// suggested limit).
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;

/// The names `component` imports and exports, as its config lists them.
pub fn world(component: &wasmtime::component::Component) -> (Vec<String>, Vec<String>) {
    let engine = component.engine();
    let ty = component.component_type();
    let imports = ty
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let exports = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    (imports, exports)
}

/// The config blob of a component whose layer is `layer`, which imports
/// and exports what it names.
pub fn config(layer: &Digest, imports: &[String], exports: &[String]) -> Vec<u8> {
    let config = json!({
        "created": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "author": null,
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer.as_str()],
        "component": {
            "exports": exports,
            "imports": imports,
            "target": null,
        },
    });
    config.to_string().into_bytes()
}

/// One blob a manifest names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the blob is.
    pub media_type: String,
    /// Its digest, as the registry sent it (checked before use).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// What is said about it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The part of an image manifest a component is read from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`] (older writers leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers: for a component, one.
    pub layers: Vec<Descriptor>,
    /// What is said about the whole.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The manifest of a component of `size` bytes with `layer` digest, its
/// `config` blob, the layer titled `title`, and `annotations` on the whole.
pub fn manifest(
    config: &[u8],
    layer: &Digest,
    size: u64,
    title: &str,
    annotations: BTreeMap<String, String>,
) -> Vec<u8> {
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: Digest::of(config).to_string(),
            size: config.len() as u64,
            annotations: BTreeMap::new(),
        },
        layers: vec![Descriptor {
            media_type: LAYER_MEDIA_TYPE.into(),
            digest: layer.to_string(),
            size,
            annotations: BTreeMap::from([(TITLE.to_string(), title.to_string())]),
        }],
        annotations,
    };
    // A manifest of plain strings and numbers always serializes.
    serde_json::to_vec(&manifest).unwrap_or_default()
}

/// The component a manifest read from a registry names: the one
/// `application/wasm` layer's digest and size, checked to be a wasm
/// artifact whose component is at most `max_component` bytes.
pub fn component_layer(manifest: &[u8], max_component: u64) -> Result<(Digest, u64), String> {
    let manifest: Manifest = serde_json::from_slice(manifest)
        .map_err(|e| format!("the manifest is not an OCI image manifest: {e}"))?;
    if manifest.schema_version != 2 {
        return Err(format!(
            "the manifest's schemaVersion is {}, not 2",
            manifest.schema_version
        ));
    }
    if let Some(media_type) = &manifest.media_type
        && media_type != MANIFEST_MEDIA_TYPE
    {
        return Err(format!(
            "the manifest is {media_type}, not an OCI image manifest ({MANIFEST_MEDIA_TYPE})"
        ));
    }
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "the artifact's config is {}, not a wasm component's ({CONFIG_MEDIA_TYPE})",
            manifest.config.media_type
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!(
            "the manifest has {} layers; a wasm component's has one",
            manifest.layers.len()
        ));
    };
    if layer.media_type != LAYER_MEDIA_TYPE {
        return Err(format!(
            "the layer is {}, not {LAYER_MEDIA_TYPE}",
            layer.media_type
        ));
    }
    let digest = Digest::parse(&layer.digest).map_err(|e| format!("the layer's {e}"))?;
    if layer.size > max_component {
        return Err(format!(
            "the component is {} bytes, over the {max_component} this host takes",
            layer.size
        ));
    }
    Ok((digest, layer.size))
}
