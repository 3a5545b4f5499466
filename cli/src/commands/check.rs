//! `toolhost check`.

use std::process::ExitCode;

use clap::Args;
use toolhost::lint;

use super::DirArgs;
use super::load;

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) dir: DirArgs,
    /// Fail (exit 1) on lint warnings too.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Load every tool and lint it: each failure and warning on a line.
pub(crate) async fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let host = load(&args.dir.dir).await?;
    let registry = host.registry();
    for tool in registry.all() {
        println!("ok    {} ({})", tool.name(), super::source_name(tool));
    }
    for failure in registry.failures() {
        println!("FAIL  {failure}");
    }
    let config = host.config();
    if let Some(toolset) = config.declared_toolset() {
        for key in toolset.ignored_keys() {
            println!(
                "warn  toolhost.toml: [toolset] configs.{key} names no toolset tool; kept but \
                 ignored"
            );
        }
    }
    let lints = lint::lint(registry.all().map(|t| lint::Subject::from(&**t)));
    for finding in &lints {
        println!(
            "warn  {}: {} [{}]",
            finding.tool, finding.message, finding.rule
        );
    }
    let failed = registry.failures().len();
    println!(
        "{} tools loaded, {failed} failed, {} warnings",
        registry.all().count(),
        lints.len()
    );
    Ok(if failed > 0 || (args.strict && !lints.is_empty()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
