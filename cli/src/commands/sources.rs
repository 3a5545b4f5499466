//! `toolhost add` and `toolhost update`: tools from OCI registries, each
//! pinned to its manifest's digest in `toolhost.toml`'s `[sources]`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use toolhost::caps::http::Network;
use toolhost::config::Config;
use toolhost::host::STATE_DIR;
use toolhost::oci::signature::Verdict;
use toolhost::oci::{self, Credentials, Pulled, Reference, Rules, Sources};
use toolhost::registry::{self, Tool};

use super::DirArgs;

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// `oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:DIGEST]` (`latest` when
    /// neither is written).
    pub(crate) reference: String,
    /// The tool's name (default: the repository's last part).
    #[arg(long = "as", value_name = "NAME")]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
}

#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// The source to update (default: every one in `[sources]`).
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
}

/// Pull the component, check it loads as a tool, and pin it in
/// `[sources]`.
pub(crate) async fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir.dir;
    let config = Config::load(dir)?;
    let rules = config.registry_rules();
    let reference = rules
        .reference(&args.reference)
        .map_err(anyhow::Error::msg)?;
    let name = match args.name {
        Some(name) => name,
        None => reference
            .repository
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .replace('.', "_"),
    };
    toolhost::tool::check_name(&name).with_context(|| format!("the tool's name `{name}`"))?;
    let file = dir.join("tools").join(format!("{name}.wasm"));
    anyhow::ensure!(
        !file.exists(),
        "the tools folder has {} already: remove it, or add this one --as another name",
        file.display()
    );
    let sources = Sources::new(&dir.join(STATE_DIR), Network::system());
    let pulled = fetch(&sources, &reference).await?;
    let signed = signed(&rules, &sources, &pulled.reference).await?;
    let tool = checked(dir, &config, &pulled, &name).await?;
    write_source(dir, &name, &pulled.reference)?;
    println!("added `{name}` from {}", pulled.reference);
    println!("  {}", summary(&tool));
    if let Some(signed) = signed {
        println!("  {signed}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Read each source's tag again; where it moved, pull what it names now,
/// show what changed, and pin it.
pub(crate) async fn update(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir.dir;
    let config = Config::load(dir)?;
    let rules = config.registry_rules();
    let names: Vec<String> = match args.name {
        Some(name) => {
            anyhow::ensure!(
                config.sources.contains_key(&name),
                "[sources] has no `{name}` (it has: {})",
                config
                    .sources
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            vec![name]
        }
        None => config.sources.keys().cloned().collect(),
    };
    let sources = Sources::new(&dir.join(STATE_DIR), Network::system());
    for name in names {
        let pinned = rules
            .reference(&config.sources[&name])
            .map_err(anyhow::Error::msg)?;
        let floating = Reference {
            digest: None,
            ..pinned.clone()
        };
        let latest = fetch(&sources, &floating).await?;
        if latest.reference.digest == pinned.digest {
            println!("`{name}` is up to date ({pinned})");
            continue;
        }
        let signed = signed(&rules, &sources, &latest.reference).await?;
        let before = fetch(&sources, &pinned).await?;
        let old = checked(dir, &config, &before, &name).await?;
        let new = checked(dir, &config, &latest, &name).await?;
        write_source(dir, &name, &latest.reference)?;
        println!("updated `{name}` to {}", latest.reference);
        for change in changes(&pinned, &latest.reference, &old, &new) {
            println!("  {change}");
        }
        if let Some(signed) = signed {
            println!("  {signed}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The component `reference` names, in the host's cache.
async fn fetch(sources: &Sources, reference: &Reference) -> anyhow::Result<Pulled> {
    let credentials = Credentials::for_registry(&reference.registry)
        .await
        .map_err(anyhow::Error::msg)?;
    let pulled = oci::pull(
        sources.network().clone(),
        reference,
        None,
        sources.cache(),
        credentials,
        |got, total| {
            if got == total {
                eprintln!("pulled {reference} ({total} bytes)");
            }
        },
    )
    .await
    .map_err(anyhow::Error::msg)?;
    Ok(pulled)
}

/// Check the signature of what `pinned` names as the folder's `[trust]`
/// asks, before anything of it is compiled: what to say about it (`None`
/// when no `[trust]` entry covers it), or why it is refused.
async fn signed(
    rules: &Rules,
    sources: &Sources,
    pinned: &Reference,
) -> anyhow::Result<Option<String>> {
    let Some(trust) = rules.trust_for(pinned) else {
        return Ok(None);
    };
    let verdict = oci::verify(sources.network(), pinned, trust, sources.cache())
        .await
        .map_err(|e| anyhow::anyhow!("refused: {e}"))?;
    Ok(Some(match verdict {
        Verdict::Signed { key, .. } => format!("signed by {key} ([trust.{:?}])", trust.scope),
        Verdict::Unsigned(why) => {
            eprintln!("warning: {why}");
            format!(
                "unsigned, allowed by [trust.{:?}] (required = false)",
                trust.scope
            )
        }
    }))
}

/// The tool the pulled component is, loaded under the folder's config.
async fn checked(dir: &Path, config: &Config, pulled: &Pulled, name: &str) -> anyhow::Result<Tool> {
    let engine = super::file_engine(dir, config)?;
    let mut tools = registry::load_tool(&engine, &pulled.path, name, config)
        .await
        .map_err(|reason| {
            anyhow::anyhow!("{} does not load as a tool: {reason}", pulled.reference)
        })?;
    anyhow::ensure!(
        tools.len() == 1,
        "{} is a plain component of {} functions: add it from a file instead",
        pulled.reference,
        tools.len()
    );
    Ok(tools.remove(0))
}

/// Set `[sources] <name>` in the folder's `toolhost.toml` to `pinned`,
/// keeping the rest of the file as it is written.
fn write_source(dir: &Path, name: &str, pinned: &Reference) -> anyhow::Result<()> {
    let path = Config::path_in(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("reading {}", path.display()))?;
    if !document.contains_table("sources") {
        document["sources"] = toml_edit::table();
    }
    document["sources"][name] = toml_edit::value(pinned.to_string());
    let written = document.to_string();
    Config::parse(&written, &path).context("the file as it would be written")?;
    toolhost::files::write_atomically(&path, written.as_bytes())
}

/// What a tool is, in one line.
fn summary(tool: &Tool) -> String {
    let metadata = tool.metadata();
    let description: String = metadata.description.chars().take(120).collect();
    format!("{} · {}", metadata.effect, description)
}

/// What changed from `old` (pinned at `from`) to `new` (at `to`).
fn changes(from: &Reference, to: &Reference, old: &Tool, new: &Tool) -> Vec<String> {
    let digest = |r: &Reference| {
        r.digest
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    let mut changes = vec![format!("manifest {} -> {}", digest(from), digest(to))];
    let (before, after) = (old.metadata(), new.metadata());
    if before.description != after.description {
        changes.push("description changed".into());
    }
    if before.input_schema != after.input_schema {
        changes.push("input schema changed".into());
    }
    if before.effect.to_string() != after.effect.to_string() {
        changes.push(format!("effect {} -> {}", before.effect, after.effect));
    }
    for import in new.imports().iter().filter(|i| !old.imports().contains(i)) {
        changes.push(format!("+ import {import}"));
    }
    for import in old.imports().iter().filter(|i| !new.imports().contains(i)) {
        changes.push(format!("- import {import}"));
    }
    changes
}
