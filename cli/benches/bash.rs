//! `bash`'s cost over a plain shell: `echo hi` run by the toolset's `bash`
//! (`Host::call`: a sandbox made by bubblewrap, the workspace handed over,
//! the output returned) beside `bash -c 'echo hi'` started directly, and
//! beside `bash` with a way out (the toolset's `http` allow-list: the
//! host's proxy bound inside the sandbox's network namespace for the
//! call), in the same run; the rows take turns in rounds, so a slower
//! stretch of the machine falls on each alike. Issue 48's target: p50 at
//! most 10 ms over the plain shell's.
//!
//! Run with `cargo bench -p toolhost-cli --bench bash` (optional: the number
//! of runs per row, default 500) on a machine with `bwrap`; figures go in
//! bench/RESULTS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::json;
use toolhost::{CallOptions, Host, Session, SessionSpec};

const ROUNDS: usize = 10;

fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run(runs))
}

/// p50 and p99 of `times`.
fn quantiles(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |q: f64| {
        let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        sorted.get(i).copied().unwrap_or_default()
    };
    (at(0.5), at(0.99))
}

/// A host whose toolset is declared with `toolset` (TOML lines), and
/// its folder.
async fn host_with(toolset: &str) -> anyhow::Result<(tempfile::TempDir, Host)> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!("[toolset]\ntype = \"agent_toolset\"\n{toolset}\n"),
    )?;
    let host = Host::builder(dir.path()).build().await?;
    anyhow::ensure!(
        host.registry().get("bash").is_some(),
        "bash is unavailable here: {}",
        host.listing()["unavailable"]
    );
    Ok((dir, host))
}

async fn run(runs: usize) -> anyhow::Result<()> {
    let (_dir, host) = host_with("").await?;
    // A way out (the proxy is made for every call, whether it is used).
    let (_dir_out, host_out) = host_with("http = [\"https://example.org\"]").await?;
    let workspace = tempfile::tempdir()?;
    let session = Session::open(SessionSpec {
        workspace: Some(workspace.path().to_path_buf()),
        ..SessionSpec::default()
    })
    .context("session")?;
    let options = CallOptions::new(Arc::new(session));
    let input = json!({ "command": "echo hi" });
    for _ in 0..10 {
        host.call("bash", input.clone(), &options).await?;
        host_out.call("bash", input.clone(), &options).await?;
    }
    let (mut sandboxed, mut plain, mut with_way_out) = (Vec::new(), Vec::new(), Vec::new());
    let per_round = runs.div_ceil(ROUNDS);
    for _ in 0..ROUNDS {
        for _ in 0..per_round {
            let started = Instant::now();
            let result = host.call("bash", input.clone(), &options).await?;
            sandboxed.push(started.elapsed());
            anyhow::ensure!(!result.is_error, "bash failed: {}", result.result);
        }
        for _ in 0..per_round {
            let started = Instant::now();
            let result = host_out.call("bash", input.clone(), &options).await?;
            with_way_out.push(started.elapsed());
            anyhow::ensure!(!result.is_error, "bash failed: {}", result.result);
        }
        for _ in 0..per_round {
            let started = Instant::now();
            let out = tokio::process::Command::new("/bin/bash")
                .args(["-c", "echo hi"])
                .output()
                .await?;
            plain.push(started.elapsed());
            anyhow::ensure!(out.stdout == b"hi\n", "bash -c failed");
        }
    }
    println!("| path | runs | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for (label, times) in [
        ("`bash -c 'echo hi'`, started directly", &plain),
        ("`bash` (`Host::call`, sandboxed)", &sandboxed),
        (
            "`bash` with a way out (the proxy made for the call)",
            &with_way_out,
        ),
    ] {
        let (p50, p99) = quantiles(times);
        println!(
            "| {label} | {} | {:.2} ms | {:.2} ms |",
            times.len(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
    let over = quantiles(&sandboxed).0.saturating_sub(quantiles(&plain).0);
    println!(
        "bash's p50 over the plain shell's: {:.2} ms",
        over.as_secs_f64() * 1e3
    );
    let way_out = quantiles(&with_way_out)
        .0
        .saturating_sub(quantiles(&sandboxed).0);
    println!(
        "a way out's p50 over bash's without: {:.2} ms",
        way_out.as_secs_f64() * 1e3
    );
    Ok(())
}
