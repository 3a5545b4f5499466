//! Hot reload: watch the tools folder and the host directory, and reload
//! the host when a component is added, replaced or removed, when
//! `toolhost.toml` or `tools.lock` changes, or when an MCP server says its
//! tools changed (see [`Host::reload`] for what a reload keeps and swaps).

use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::config::CONFIG_FILE;
use crate::host::Host;
use crate::tools::lock::LOCK_FILE;

/// How long the folder must be quiet before a reload, so a file being
/// copied in is read once it is whole.
pub const SETTLE: Duration = Duration::from_millis(200);

/// Watches a host's tools folder while it lives.
pub struct ReloadWatcher {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
    upstream_task: tokio::task::JoinHandle<()>,
    fleet_task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for ReloadWatcher {
    fn drop(&mut self) {
        self.task.abort();
        self.upstream_task.abort();
        if let Some(task) = &self.fleet_task {
            task.abort();
        }
    }
}

/// Reload `host` whenever a `.wasm` file in its tools folder, or its
/// `toolhost.toml` or `tools.lock`, changes, or an MCP server announces
/// that its tools changed; and, in a fleet, its named agents whenever
/// another server changes one (and the fleet's resource updates are
/// shared: [`Host::follow_fleet`]).
pub fn watch(host: Arc<Host>) -> anyhow::Result<ReloadWatcher> {
    // Started first: if the folder cannot be watched below, the fleet's
    // changes are still followed (the task lives as long as the host).
    let fleet_task = Host::follow_fleet(&host);
    let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel();
    let mut upstream_changes = host.upstream_changes();
    let upstream_changed = changed.clone();
    let upstream_task = tokio::spawn(async move {
        while upstream_changes.changed().await.is_ok() {
            if upstream_changed.send(()).is_err() {
                return;
            }
        }
    });
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // Reads (including the reload's own) are not changes.
        let edits = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
        );
        let relevant = event.paths.iter().any(|p| {
            p.extension().is_some_and(|e| e == "wasm")
                || p.file_name()
                    .is_some_and(|n| n == CONFIG_FILE || n == LOCK_FILE)
        });
        if edits && relevant {
            let _ = changed.send(());
        }
    })?;
    watcher.watch(host.tools_dir(), RecursiveMode::NonRecursive)?;
    if host.dir() != host.tools_dir() {
        watcher.watch(host.dir(), RecursiveMode::NonRecursive)?;
    }
    let task = tokio::spawn(async move {
        while changes.recv().await.is_some() {
            loop {
                match tokio::time::timeout(SETTLE, changes.recv()).await {
                    Ok(Some(())) => {}
                    Ok(None) => return,
                    Err(_settled) => break,
                }
            }
            reload_and_report(&host).await;
        }
    });
    Ok(ReloadWatcher {
        _watcher: watcher,
        task,
        upstream_task,
        fleet_task,
    })
}

/// Reload `host`, logging what failed to load; a failed reload keeps the
/// tools loaded before.
pub async fn reload_and_report(host: &Host) {
    match host.reload().await {
        Ok(registry) => {
            tracing::info!("reloaded: {} tools", registry.tools().count());
            for failure in registry.failures() {
                tracing::warn!("not loaded: {failure}");
            }
        }
        Err(e) => tracing::error!("reload failed, keeping the tools loaded before: {e:#}"),
    }
}
