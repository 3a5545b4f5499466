//! `toolhost lock`.

use std::path::Path;
use std::process::ExitCode;

use toolhost::Host;
use toolhost::lock::Lockfile;

/// Write `tools.lock` for the folder as it is, keeping the entries of tools
/// that fail now, and print what changed.
pub(crate) async fn lock(dir: &Path) -> anyhow::Result<ExitCode> {
    let host = Host::builder(dir).ignore_lock().build().await?;
    let registry = host.registry();
    let previous = Lockfile::load(dir).unwrap_or_else(|e| {
        eprintln!("warning: {e:#}; writing a new one");
        None
    });
    let (next, failures) = Lockfile::merged(&registry, previous.as_ref());
    for (failure, kept) in failures {
        if kept {
            eprintln!("warning: {failure}; its entry is kept as it was");
        } else {
            eprintln!("warning: not locked: {failure}");
        }
    }
    let changes = previous.unwrap_or_default().diff(&next);
    let path = next.write(dir)?;
    for line in &changes {
        println!("{line}");
    }
    println!(
        "{}: {} tools locked, {} changed",
        path.display(),
        next.tools.len(),
        changes.len()
    );
    Ok(if registry.failures().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
