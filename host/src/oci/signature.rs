//! Cosign's key-based signatures of a component's manifest, in cosign's
//! tag scheme (the one a registry without the referrers API holds): the
//! signatures of manifest `sha256:<hex>` are the layers of the manifest
//! tagged `sha256-<hex>.sig` in the same repository, each a simple-signing
//! payload (`application/vnd.dev.cosign.simplesigning.v1+json`) whose
//! signature is the layer's `dev.cosignproject.cosign/signature`
//! annotation. A signature counts when one of the keys a [`Trust`] names
//! verifies it over the payload's bytes *and* the payload claims the very
//! manifest digest that is pinned; the manifest names the component by its
//! digest, so the signature covers the component's bytes.
//!
//! The keys and the signing are `sigstore`'s (cosign's key formats,
//! ECDSA, Ed25519 and RSA); what is read from a registry is bounded
//! before it is looked at ([`MAX_SIGNATURES`], [`MAX_PAYLOAD_BYTES`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{CosignVerificationKey, SigStoreSigner, SigningScheme};

use super::Digest;
use super::artifact::{Descriptor, MANIFEST_MEDIA_TYPE, Manifest};

/// A signature layer's media type: a simple-signing payload.
pub const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// The annotation of a signature layer holding the signature (base64).
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The claim a cosign payload makes.
const CLAIM_TYPE: &str = "cosign container image signature";

/// The config blob's media type in a signature manifest.
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The most signature layers of one manifest looked at.
pub const MAX_SIGNATURES: usize = 16;

/// The largest payload read from a registry.
pub const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// The longest signature (base64) taken: an RSA-8192 signature is 1 368.
const MAX_SIGNATURE_CHARS: usize = 2048;

/// The tag the signatures of `manifest` are kept under.
pub fn tag(manifest: &Digest) -> String {
    format!("sha256-{}.sig", manifest.hex())
}

/// One signature: a simple-signing payload, and a signature over its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signed {
    /// The payload, as signed (JSON).
    pub payload: String,
    /// The signature over `payload`, base64.
    pub signature: String,
}

impl Signed {
    /// Sign that `manifest` is what `repository` (`host/name`) holds, with
    /// `signer`.
    pub fn new(
        signer: &SigStoreSigner,
        repository: &str,
        manifest: &Digest,
    ) -> Result<Self, String> {
        let payload = json!({
            "critical": {
                "identity": {"docker-reference": repository},
                "image": {"docker-manifest-digest": manifest.as_str()},
                "type": CLAIM_TYPE,
            },
            "optional": null,
        })
        .to_string();
        let signature = signer
            .sign(payload.as_bytes())
            .map_err(|e| format!("signing {manifest}: {e}"))?;
        use base64::Engine as _;
        Ok(Self {
            payload,
            signature: base64::engine::general_purpose::STANDARD.encode(signature),
        })
    }

    /// The manifest digest the payload claims, when it is a cosign claim.
    fn claimed(&self) -> Result<Digest, String> {
        #[derive(Deserialize)]
        struct Payload {
            critical: Critical,
        }
        #[derive(Deserialize)]
        struct Critical {
            image: Image,
            #[serde(rename = "type")]
            kind: String,
        }
        #[derive(Deserialize)]
        struct Image {
            #[serde(rename = "docker-manifest-digest")]
            digest: String,
        }
        let payload: Payload = serde_json::from_str(&self.payload)
            .map_err(|e| format!("its payload is not a simple-signing claim: {e}"))?;
        if payload.critical.kind != CLAIM_TYPE {
            return Err(format!(
                "its payload claims a {}, not a {CLAIM_TYPE:?}",
                crate::shown::quoted(&payload.critical.kind)
            ));
        }
        Digest::parse(&payload.critical.image.digest).map_err(|e| format!("its payload's {e}"))
    }
}

/// A public key a [`Trust`] accepts, with the name errors and receipts
/// give it (its file, as written in `toolhost.toml`).
#[derive(Debug, Clone)]
pub struct TrustedKey {
    /// Where it came from.
    pub name: String,
    key: CosignVerificationKey,
}

impl TrustedKey {
    /// The public key in `pem` (a `PUBLIC KEY` block: ECDSA P-256/384/521,
    /// Ed25519 or RSA), named `name`.
    pub fn from_pem(name: &str, pem: &[u8]) -> Result<Self, String> {
        let key = CosignVerificationKey::try_from_pem(pem)
            .map_err(|e| format!("{name} is not a PEM public key cosign uses: {e}"))?;
        Ok(Self {
            name: name.to_string(),
            key,
        })
    }

    /// The public key of `signer`, named `your key`.
    pub fn of_signer(signer: &SigStoreSigner) -> Result<Self, String> {
        let key = signer
            .to_verification_key()
            .map_err(|e| format!("the signing key's public key: {e}"))?;
        Ok(Self {
            name: "your key".into(),
            key,
        })
    }

    /// Whether this key made `signed`'s signature over its payload.
    pub fn verifies(&self, signed: &Signed) -> bool {
        let signature = sigstore::crypto::Signature::Base64Encoded(signed.signature.as_bytes());
        self.key
            .verify_signature(signature, signed.payload.as_bytes())
            .is_ok()
    }
}

/// Which keys components from one place must be signed with.
#[derive(Debug, Clone)]
pub struct Trust {
    /// What it applies to, as `[trust]` names it (`*`, a registry, or a
    /// registry and repository prefix).
    pub scope: String,
    /// The keys a signature must be made with (one of them).
    pub keys: Vec<TrustedKey>,
    /// Whether a component no key signed is refused (else loaded, and the
    /// reason logged).
    pub required: bool,
}

/// How a signature check of a manifest ended, when it did not refuse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// One of the keys signed it.
    Signed {
        /// Which key.
        key: String,
        /// The signature that verified.
        signature: Signed,
    },
    /// None did, and none had to: why.
    Unsigned(String),
}

impl Trust {
    /// The first of `signatures` one of the keys made for `manifest`, or
    /// why there is none.
    pub fn check(&self, manifest: &Digest, signatures: &[Signed]) -> Result<Verdict, String> {
        if signatures.is_empty() {
            return Err(format!(
                "{manifest} has no signature (none in a {} tag), and [trust.{:?}] asks for one",
                tag(manifest),
                self.scope
            ));
        }
        let mut why = Vec::new();
        for (n, signed) in signatures.iter().enumerate() {
            let Some(key) = self.keys.iter().find(|key| key.verifies(signed)) else {
                why.push(format!("signature {}: made by none of its keys", n + 1));
                continue;
            };
            match signed.claimed() {
                Ok(claimed) if claimed == *manifest => {
                    return Ok(Verdict::Signed {
                        key: key.name.clone(),
                        signature: signed.clone(),
                    });
                }
                Ok(claimed) => why.push(format!(
                    "signature {}: {} signed {claimed}, another manifest",
                    n + 1,
                    key.name
                )),
                Err(e) => why.push(format!("signature {}: {e}", n + 1)),
            }
        }
        Err(format!(
            "{manifest} is not signed by a key of [trust.{:?}] ({}): {}",
            self.scope,
            self.keys
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            why.join("; ")
        ))
    }

    /// [`Trust::check`], where a signature `required` is not asked for
    /// turning into [`Verdict::Unsigned`].
    pub fn verdict(&self, manifest: &Digest, signatures: &[Signed]) -> Result<Verdict, String> {
        match self.check(manifest, signatures) {
            Err(why) if !self.required => Ok(Verdict::Unsigned(why)),
            checked => checked,
        }
    }
}

/// The signing key in `pem`: cosign's encrypted private key (`ENCRYPTED
/// SIGSTORE PRIVATE KEY` or `ENCRYPTED COSIGN PRIVATE KEY`, opened with
/// `password`), or a PKCS#8 `PRIVATE KEY`.
pub fn signer_from_pem(pem: &[u8], password: &[u8]) -> Result<SigStoreSigner, String> {
    let text = String::from_utf8_lossy(pem);
    let pair = if text.contains("-----BEGIN ENCRYPTED") {
        SigStoreKeyPair::from_encrypted_pem(pem, password).map_err(|e| {
            format!("cannot open the encrypted key (is COSIGN_PASSWORD right?): {e}")
        })?
    } else {
        SigStoreKeyPair::from_pem(pem).map_err(|e| format!("not a private key: {e}"))?
    };
    [
        SigningScheme::ECDSA_P256_SHA256_ASN1,
        SigningScheme::ECDSA_P384_SHA384_ASN1,
        SigningScheme::ED25519,
        SigningScheme::RSA_PKCS1_SHA256(0),
    ]
    .iter()
    .find_map(|scheme| pair.to_sigstore_signer(scheme).ok())
    .ok_or_else(|| "the key is of no kind cosign signs with".to_string())
}

/// A new ECDSA P-256 key pair, as cosign makes it: the private key
/// encrypted with `password` (`ENCRYPTED SIGSTORE PRIVATE KEY`), and the
/// public key, both PEM.
pub fn generate(password: &[u8]) -> Result<(String, String), String> {
    let signer = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .map_err(|e| format!("making a key: {e}"))?;
    let pair = signer
        .to_sigstore_keypair()
        .map_err(|e| format!("making a key: {e}"))?;
    let private = pair
        .private_key_to_encrypted_pem(password)
        .map_err(|e| format!("encrypting the key: {e}"))?;
    let public = pair
        .public_key_to_pem()
        .map_err(|e| format!("the public key: {e}"))?;
    Ok((private.to_string(), public))
}

/// One signature layer a manifest lists: the payload's digest and size,
/// and the signature.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The payload blob.
    pub payload: Digest,
    /// Its size, at most [`MAX_PAYLOAD_BYTES`].
    pub size: u64,
    /// The signature (base64).
    pub signature: String,
}

/// The signature layers of a signature manifest read from a registry: the
/// first [`MAX_SIGNATURES`] simple-signing layers that carry a signature
/// (others are not looked at), each payload at most
/// [`MAX_PAYLOAD_BYTES`].
pub fn layers(manifest: &[u8]) -> Result<Vec<Layer>, String> {
    let manifest: Manifest = serde_json::from_slice(manifest)
        .map_err(|e| format!("the signature manifest is not an image manifest: {e}"))?;
    let mut found = Vec::new();
    for layer in &manifest.layers {
        if found.len() == MAX_SIGNATURES {
            break;
        }
        if layer.media_type != PAYLOAD_MEDIA_TYPE {
            continue;
        }
        let Some(signature) = layer.annotations.get(SIGNATURE_ANNOTATION) else {
            continue;
        };
        if signature.len() > MAX_SIGNATURE_CHARS {
            return Err(format!(
                "a signature is {} characters, over {MAX_SIGNATURE_CHARS}",
                signature.len()
            ));
        }
        if layer.size > MAX_PAYLOAD_BYTES {
            return Err(format!(
                "a signed payload is {} bytes, over {MAX_PAYLOAD_BYTES}",
                layer.size
            ));
        }
        found.push(Layer {
            payload: Digest::parse(&layer.digest)
                .map_err(|e| format!("a signature layer's {e}"))?,
            size: layer.size,
            signature: signature.clone(),
        });
    }
    Ok(found)
}

/// A signature manifest listing `signatures` (payloads and signatures),
/// and its config blob.
pub fn manifest(signatures: &[Signed]) -> (Vec<u8>, Vec<u8>) {
    let payloads: Vec<Digest> = signatures
        .iter()
        .map(|s| Digest::of(s.payload.as_bytes()))
        .collect();
    let config = json!({
        "architecture": "",
        "os": "",
        "config": {},
        "rootfs": {
            "type": "layers",
            "diff_ids": payloads.iter().map(Digest::as_str).collect::<Vec<_>>(),
        },
    })
    .to_string()
    .into_bytes();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: Digest::of(&config).to_string(),
            size: config.len() as u64,
            annotations: BTreeMap::new(),
        },
        layers: signatures
            .iter()
            .zip(&payloads)
            .map(|(signed, digest)| Descriptor {
                media_type: PAYLOAD_MEDIA_TYPE.into(),
                digest: digest.to_string(),
                size: signed.payload.len() as u64,
                annotations: BTreeMap::from([(
                    SIGNATURE_ANNOTATION.to_string(),
                    signed.signature.clone(),
                )]),
            })
            .collect(),
        annotations: BTreeMap::new(),
    };
    // A manifest of plain strings and numbers always serializes.
    (config, serde_json::to_vec(&manifest).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trust(keys: Vec<TrustedKey>) -> Trust {
        Trust {
            scope: "*".into(),
            keys,
            required: true,
        }
    }

    fn key(name: &str) -> (SigStoreSigner, TrustedKey) {
        let (private, public) = generate(b"").unwrap();
        let signer = signer_from_pem(private.as_bytes(), b"").unwrap();
        (
            signer,
            TrustedKey::from_pem(name, public.as_bytes()).unwrap(),
        )
    }

    #[test]
    fn a_signature_counts_only_by_a_trusted_key_for_the_pinned_manifest() {
        let (signer, trusted) = key("acme.pub");
        let (other, untrusted) = key("other.pub");
        let pinned = Digest::of(b"manifest");
        let elsewhere = Digest::of(b"another manifest");
        let good = Signed::new(&signer, "r.example/acme/echo", &pinned).unwrap();
        let policy = trust(vec![trusted.clone()]);
        assert!(matches!(
            policy.check(&pinned, std::slice::from_ref(&good)),
            Ok(Verdict::Signed { ref key, .. }) if key == "acme.pub"
        ));
        // No signature; another key's; the trusted key's for another
        // manifest (replayed); a payload changed after signing.
        let err = policy.check(&pinned, &[]).unwrap_err();
        assert!(
            err.contains("no signature") && err.contains(&tag(&pinned)),
            "{err}"
        );
        let by_other = Signed::new(&other, "r.example/acme/echo", &pinned).unwrap();
        let err = policy.check(&pinned, &[by_other]).unwrap_err();
        assert!(
            err.contains("made by none of its keys") && err.contains("acme.pub"),
            "{err}"
        );
        let replayed = Signed::new(&signer, "r.example/acme/echo", &elsewhere).unwrap();
        let err = policy
            .check(&pinned, std::slice::from_ref(&replayed))
            .unwrap_err();
        assert!(err.contains(&format!("signed {elsewhere}")), "{err}");
        let mut tampered = good.clone();
        tampered.payload = tampered.payload.replace(pinned.hex(), elsewhere.hex());
        assert!(policy.check(&elsewhere, &[tampered]).is_err());
        // The good one counts wherever it is among bad ones.
        assert!(policy.check(&pinned, &[replayed, good.clone()]).is_ok());
        // Not required: unsigned is a verdict, not a refusal.
        let optional = Trust {
            required: false,
            ..trust(vec![untrusted])
        };
        assert!(matches!(
            optional.verdict(&pinned, &[good]),
            Ok(Verdict::Unsigned(why)) if why.contains("none of its keys")
        ));
    }

    #[test]
    fn a_claim_of_another_type_or_shape_is_refused() {
        let (signer, trusted) = key("k");
        let pinned = Digest::of(b"m");
        for payload in [
            json!({"critical": {"image": {"docker-manifest-digest": pinned.as_str()}, "type": "other"}}),
            json!({"critical": {"image": {"docker-manifest-digest": "sha256:XYZ"}, "type": CLAIM_TYPE}}),
            json!({"critical": null}),
            json!([1, 2]),
        ] {
            let payload = payload.to_string();
            let signature = signer.sign(payload.as_bytes()).unwrap();
            use base64::Engine as _;
            let signed = Signed {
                payload,
                signature: base64::engine::general_purpose::STANDARD.encode(signature),
            };
            let err = trust(vec![trusted.clone()])
                .check(&pinned, &[signed])
                .unwrap_err();
            assert!(err.contains("signature 1: its payload"), "{err}");
        }
    }

    #[test]
    fn a_signature_manifest_is_read_within_bounds() {
        let (signer, _) = key("k");
        let pinned = Digest::of(b"m");
        let signed: Vec<Signed> = (0..20)
            .map(|_| Signed::new(&signer, "r/e", &pinned).unwrap())
            .collect();
        let (_, written) = manifest(&signed);
        let read = layers(&written).unwrap();
        assert_eq!(read.len(), MAX_SIGNATURES);
        assert_eq!(read[0].signature, signed[0].signature);
        assert_eq!(read[0].payload, Digest::of(signed[0].payload.as_bytes()));
        let mut value: serde_json::Value = serde_json::from_slice(&written).unwrap();
        value["layers"][0]["size"] = json!(MAX_PAYLOAD_BYTES + 1);
        let err = layers(value.to_string().as_bytes()).unwrap_err();
        assert!(err.contains("over 65536"), "{err}");
        value["layers"][0]["size"] = json!(10);
        value["layers"][0]["annotations"][SIGNATURE_ANNOTATION] = json!("A".repeat(5000));
        assert!(layers(value.to_string().as_bytes()).is_err());
        assert!(layers(b"{}").is_err());
        assert!(layers(b"not json").is_err());
    }

    #[test]
    fn keys_in_other_formats_are_read_or_refused_by_name() {
        let (private, _) = generate(b"secret").unwrap();
        let err = signer_from_pem(private.as_bytes(), b"wrong").unwrap_err();
        assert!(err.contains("COSIGN_PASSWORD"), "{err}");
        assert!(signer_from_pem(private.as_bytes(), b"secret").is_ok());
        let err = TrustedKey::from_pem(
            "keys/x.pub",
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
        )
        .unwrap_err();
        assert!(err.contains("keys/x.pub"), "{err}");
        assert!(signer_from_pem(b"garbage", b"").is_err());
    }
}
