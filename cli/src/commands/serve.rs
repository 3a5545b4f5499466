//! `toolhost serve` and `toolhost mcp`: the long-running commands.

use std::num::NonZeroUsize;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use clap::Args;
use toolhost::call::UnattendedReminderCalls;
use toolhost::engine::Tiering;
use toolhost::session::parse_instant;
use toolhost::{Host, reload};
use toolhost_serve::http;
use toolhost_serve::mcp::{McpOptions, ToolServer};
use toolhost_serve::telemetry::Telemetry;

use super::DirArgs;
use super::hard_stop;
use super::{cli_principal, warn_failures};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub(crate) dir: DirArgs,
    /// Run every call in this session (one made through the HTTP API).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Run calls in dry-run sessions: reads run, writes are stubbed.
    #[arg(long, conflicts_with = "session")]
    pub(crate) dry_run: bool,
    /// Bound time arguments by this instant (RFC 3339).
    #[arg(long, value_name = "INSTANT", conflicts_with = "session", value_parser = parse_instant)]
    pub(crate) as_of: Option<DateTime<FixedOffset>>,
    /// Serve the tools of this agent (`[agents.<name>]`, or one made over
    /// the API) instead of the tools folder's.
    #[arg(long, value_name = "NAME", conflicts_with = "session")]
    pub(crate) agent: Option<String>,
    /// That agent's version (default: its latest; only the latest is
    /// loaded at start).
    #[arg(long, value_name = "N", conflicts_with = "session")]
    pub(crate) version: Option<u64>,
    /// Threads running calls. The default, 1, serves the one client with
    /// the fewest hand-offs between threads; more let CPU-heavy calls the
    /// client makes at once run side by side.
    #[arg(long, value_name = "N", default_value_t = NonZeroUsize::MIN)]
    pub(crate) threads: NonZeroUsize,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) dir: DirArgs,
    /// The address to listen on (default: `[server] listen`, else 127.0.0.1:3000).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// Require `Authorization: Bearer <TOKEN>` on every route but /healthz.
    #[arg(long, env = "TOOLHOST_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
}

/// Load a host that will keep running (`serve`, `mcp`): a tool the compile
/// cache does not hold serves baseline code until its optimized code is in.
async fn load_to_serve(dir: &Path) -> anyhow::Result<Host> {
    Host::builder(dir)
        .tiering(Tiering::BaselineFirst)
        .build()
        .await
}

/// Serve the HTTP API (and MCP at /mcp) until Ctrl-C or SIGTERM.
pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let host = Arc::new(load_to_serve(&args.dir.dir).await?);
    warn_failures(&host);
    let mut options = http::ServeOptions::from_config(&host)?;
    if let Some(listen) = args.listen {
        options.listen = listen;
    }
    if args.token.is_some() {
        options.token = args.token;
    }
    let listener = http::bind(&options).await?;
    let (_watcher, _hangups) = hot_reload(&host);
    let telemetry = Telemetry::start(&host, &host.config().telemetry)?;
    let upstreams = host.clone();
    let app = http::App::new(host, options)?;
    let addr = listener.local_addr()?;
    eprintln!(
        "toolhost: serving {} tools at http://{addr}/{}/v1 (health: http://{addr}/healthz)",
        app.host.registry().tools().count(),
        app.slug
    );
    hard_stop::arm(app.options.shutdown_grace + hard_stop::AFTER_GRACE)?;
    let grace = app.options.shutdown_grace.as_secs();
    let stopping = async move {
        shutdown_signal().await;
        eprintln!(
            "toolhost: stopping: no new connections; calls in flight have {grace} s to finish"
        );
    };
    http::run(listener, app, stopping).await?;
    upstreams.stop_upstreams().await;
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    eprintln!("toolhost: stopped");
    Ok(ExitCode::SUCCESS)
}

/// Serve MCP on stdin/stdout until stdin closes.
pub(crate) async fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let host = Arc::new(load_to_serve(&args.dir.dir).await?);
    warn_failures(&host);
    let sessions = Arc::new(http::ServeOptions::from_config(&host)?.session_store(&host)?);
    if let Some(id) = &args.session {
        sessions
            .bind(Some(id), None, Some(&cli_principal()))
            .await
            .map_err(|e| anyhow::anyhow!("--session: {e}"))?;
    }
    host.pin_for(args.agent.as_deref(), args.version).await?;
    let (_watcher, _hangups) = hot_reload(&host);
    let telemetry = Telemetry::start(&host, &host.config().telemetry)?;
    let options = McpOptions {
        session: args.session,
        dry_run: args.dry_run,
        as_of: args.as_of,
        caller: Some(cli_principal()),
        agent: args.agent,
        version: args.version,
    };
    let server = ToolServer::new(host.clone(), sessions, options);
    let restoring = host.clone();
    tokio::spawn(async move { restoring.restore_pinned_versions().await });
    let reminders = tokio::spawn(
        host.clone()
            .fire_reminders(Arc::new(UnattendedReminderCalls(
                "`toolhost mcp` has no approvals API: run the server with `toolhost serve` to \
             approve a reminder's call"
                    .into(),
            ))),
    );
    server.serve_stdio().await?;
    reminders.abort();
    host.stop_upstreams().await;
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// Reload the tools folder when it changes and on SIGHUP (clients are told
/// when the tools change). The returned guards stop both when dropped.
fn hot_reload(host: &Arc<Host>) -> (Option<reload::ReloadWatcher>, tokio::task::JoinHandle<()>) {
    let watcher = reload::watch(host.clone())
        .inspect_err(|e| {
            eprintln!(
                "warning: not watching {}: {e:#}",
                host.tools_dir().display()
            )
        })
        .ok();
    let host = host.clone();
    let hangups = tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut hangups) = signal(SignalKind::hangup()) else {
                return;
            };
            while hangups.recv().await.is_some() {
                reload::reload_and_report(&host).await;
            }
        }
        #[cfg(not(unix))]
        drop(host);
    });
    (watcher, hangups)
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
