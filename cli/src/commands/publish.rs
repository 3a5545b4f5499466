//! `toolhost publish`: a component pushed to an OCI registry as a wasm
//! artifact, its tool's metadata in the manifest's annotations.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::caps::http::Network;
use toolhost::config::Config;
use toolhost::oci::{self, Artifact, Credentials};
use toolhost::registry;

use super::DirArgs;

/// The longest description written into an annotation.
const MAX_DESCRIPTION_BYTES: usize = 4096;

#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// The component (`.wasm`) to publish.
    pub(crate) file: PathBuf,
    /// Where: `oci://HOST[:PORT]/REPOSITORY[:TAG]` (`latest` when no tag).
    pub(crate) reference: String,
    /// Where the tool's source lives (`org.opencontainers.image.source`).
    #[arg(long)]
    pub(crate) source: Option<String>,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
}

/// Check the component loads as a tool, then push it; print the reference
/// pinned to what was pushed.
pub(crate) async fn publish(args: PublishArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(&args.dir.dir)?;
    let reference = config
        .registry_rules()
        .reference(&args.reference)
        .map_err(anyhow::Error::msg)?;
    let component = std::fs::read(&args.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.file.display()))?;
    let name = registry::slug(&args.file);
    let engine = super::file_engine(&args.dir.dir, &config)?;
    let tools = match registry::load_tool(&engine, &args.file, &name, &config).await {
        Ok(tools) => tools,
        Err(reason) => {
            eprintln!(
                "error: {} does not load as a tool (`{name}`): {reason}",
                args.file.display()
            );
            return Ok(ExitCode::from(1));
        }
    };
    let mut annotations = BTreeMap::new();
    if let [tool] = tools.as_slice() {
        let metadata = tool.metadata();
        let mut description = metadata.description.clone();
        if description.len() > MAX_DESCRIPTION_BYTES {
            let mut end = MAX_DESCRIPTION_BYTES;
            while !description.is_char_boundary(end) {
                end -= 1;
            }
            description.truncate(end);
        }
        annotations.insert("org.opencontainers.image.description".into(), description);
        annotations.insert("dev.toolhost.effect".into(), metadata.effect.to_string());
    }
    annotations.insert("dev.toolhost.tool".into(), name.clone());
    annotations.insert(
        "org.opencontainers.image.created".into(),
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    if let Some(source) = args.source {
        annotations.insert("org.opencontainers.image.source".into(), source);
    }
    let title = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{name}.wasm"));
    let compiled = engine.compile(component.clone()).await?;
    let (imports, exports) = oci::artifact::world(&compiled.component);
    let artifact = Artifact {
        component,
        title,
        imports,
        exports,
        annotations,
    };
    let credentials = Credentials::for_registry(&reference.registry)
        .await
        .map_err(anyhow::Error::msg)?;
    let pinned = oci::publish(Network::system(), &reference, artifact, credentials)
        .await
        .map_err(anyhow::Error::msg)?;
    println!("{pinned}");
    Ok(ExitCode::SUCCESS)
}
