//! `toolhost sign` and `toolhost keygen`: cosign's key-based signatures of
//! tools in OCI registries, made where a `[trust]` entry checks them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use toolhost::caps::http::Network;
use toolhost::config::Config;
use toolhost::oci::{self, Credentials, signature};

use super::DirArgs;

/// The environment variable the signing key's password is read from (as
/// cosign reads it).
const PASSWORD_VARIABLE: &str = "COSIGN_PASSWORD";

#[derive(Debug, Args)]
pub(crate) struct SignArgs {
    /// What to sign: `oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:DIGEST]`
    /// (the manifest a tag names now, when no digest is written).
    pub(crate) reference: String,
    /// The private key: cosign's `cosign.key` (its password in
    /// COSIGN_PASSWORD) or a PKCS#8 PEM key.
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
}

#[derive(Debug, Args)]
pub(crate) struct KeygenArgs {
    /// Where: `<PREFIX>.key` (encrypted with COSIGN_PASSWORD) and
    /// `<PREFIX>.pub`.
    #[arg(default_value = "cosign")]
    pub(crate) prefix: PathBuf,
}

/// The password in COSIGN_PASSWORD (empty when it is not set).
fn password() -> Vec<u8> {
    std::env::var_os(PASSWORD_VARIABLE)
        .map(|p| p.into_encoded_bytes())
        .unwrap_or_default()
}

/// Sign the manifest the reference names; print the reference pinned.
pub(crate) async fn sign(args: SignArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(&args.dir.dir)?;
    let reference = config
        .registry_rules()
        .reference(&args.reference)
        .map_err(anyhow::Error::msg)?;
    let pem = std::fs::read(&args.key)
        .with_context(|| format!("cannot read the key {}", args.key.display()))?;
    let signer = signature::signer_from_pem(&pem, &password())
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.key.display()))?;
    let credentials = Credentials::for_registry(&reference.registry)
        .await
        .map_err(anyhow::Error::msg)?;
    let pinned = oci::sign(Network::system(), &reference, &signer, credentials)
        .await
        .map_err(anyhow::Error::msg)?;
    let digest = pinned
        .digest
        .as_ref()
        .map(signature::tag)
        .unwrap_or_default();
    eprintln!("signed: the signature is tagged {digest}");
    println!("{pinned}");
    Ok(ExitCode::SUCCESS)
}

/// Write a new key pair, refusing to replace one.
pub(crate) fn keygen(args: KeygenArgs) -> anyhow::Result<ExitCode> {
    let with = |extension: &str| {
        let mut path = args.prefix.clone().into_os_string();
        path.push(extension);
        PathBuf::from(path)
    };
    let (private_file, public_file) = (with(".key"), with(".pub"));
    for file in [&private_file, &public_file] {
        anyhow::ensure!(
            !file.exists(),
            "{} exists: remove it, or name another prefix",
            file.display()
        );
    }
    let password = password();
    if password.is_empty() {
        eprintln!(
            "note: {PASSWORD_VARIABLE} is empty, so the private key's password is empty: set it \
             to choose one"
        );
    }
    let (private, public) = signature::generate(&password).map_err(anyhow::Error::msg)?;
    write_new(&private_file, private.as_bytes(), 0o600)?;
    write_new(&public_file, public.as_bytes(), 0o644)?;
    println!("{}", private_file.display());
    println!("{}", public_file.display());
    Ok(ExitCode::SUCCESS)
}

/// Write `bytes` to a file that must not exist yet, with `mode`.
fn write_new(path: &std::path::Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
