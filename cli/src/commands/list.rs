//! `toolhost tools list`.

use std::path::Path;
use std::process::ExitCode;

use toolhost::Host;

use super::{load, permission_name, source_name, warn_failures};
use crate::print::{print_json, print_table, summary};

/// List the enabled tools of `agent` (the default agent when `None`), the
/// unavailable ones and the files that failed.
pub(crate) async fn list(
    dir: &Path,
    as_json: bool,
    agent: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let host = load(dir).await?;
    let version = host.resolve(agent, None).await?;
    let registry = version.registry();
    if as_json {
        let mut listing = Host::listing_of(&version);
        listing["failures"] = serde_json::to_value(registry.failures())?;
        print_json(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    let unavailable = registry.unavailable().iter().map(|u| {
        [
            u.name.clone(),
            "-".to_string(),
            "-".to_string(),
            "toolset".to_string(),
            summary(&format!("unavailable: {}", u.reason), 70),
        ]
    });
    let rows: Vec<[String; 5]> = registry
        .tools()
        .map(|t| {
            [
                t.name().to_string(),
                t.metadata().effect.to_string(),
                permission_name(t.policy().permission).to_string(),
                source_name(t),
                summary(&t.metadata().description, 70),
            ]
        })
        .chain(unavailable)
        .collect();
    let header = ["NAME", "EFFECT", "PERMISSION", "FROM", "DESCRIPTION"].map(str::to_string);
    print_table(&header, &rows);
    if rows.is_empty() {
        println!("(no tools in {})", host.tools_dir().display());
    }
    warn_failures(&host);
    Ok(ExitCode::SUCCESS)
}
