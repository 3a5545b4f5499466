//! The toolset's `grep`, run inside the sandbox through `Host::call`, over
//! a workspace of 10 000 files of 4 KiB (100 folders of 100), for a pattern
//! that matches one line in every hundredth file. Target: under a second.
//!
//! Run with `cargo bench -p toolhost --bench toolset_grep`; figures go in
//! bench/RESULTS.md.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use toolhost::{CallOptions, Host, Session, SessionSpec};

const FOLDERS: usize = 100;
const FILES_PER_FOLDER: usize = 100;
const FILE_BYTES: usize = 4096;
const RUNS: usize = 10;

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[toolset]\ntype = \"agent_toolset\"\n",
    )?;
    let workspace = dir.path().join("workspace");
    for folder in 0..FOLDERS {
        let folder_dir = workspace.join(format!("mod_{folder:03}"));
        std::fs::create_dir_all(&folder_dir)?;
        for file in 0..FILES_PER_FOLDER {
            let n = folder * FILES_PER_FOLDER + file;
            std::fs::write(folder_dir.join(format!("file_{file:03}.rs")), contents(n))?;
        }
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let host = runtime.block_on(Host::builder(dir.path()).build())?;
    let session = Arc::new(Session::open(SessionSpec {
        workspace: Some(workspace.clone()),
        ..SessionSpec::default()
    })?);
    let options = CallOptions::new(session);
    let input = json!({ "pattern": "needle_[0-9]+", "max_results": 1000 });

    let mut times = Vec::with_capacity(RUNS);
    for run in 0..=RUNS {
        let started = Instant::now();
        let result = runtime.block_on(host.call("grep", input.clone(), &options))?;
        let took = started.elapsed();
        anyhow::ensure!(!result.is_error, "grep failed: {}", result.result);
        let hits = result.result["matches"].as_array().map_or(0, Vec::len);
        anyhow::ensure!(hits == FOLDERS * FILES_PER_FOLDER / 100, "{hits} hits");
        if run > 0 {
            times.push(took);
        }
    }
    times.sort();
    println!(
        "grep over {} files of {FILE_BYTES} B: p50 {:.0} ms, min {:.0} ms, max {:.0} ms ({RUNS} runs)",
        FOLDERS * FILES_PER_FOLDER,
        times[RUNS / 2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[RUNS - 1].as_secs_f64() * 1e3,
    );
    Ok(())
}

/// 4 KiB of source-like lines; every hundredth file has one `needle_<n>`.
fn contents(n: usize) -> String {
    let mut text = String::with_capacity(FILE_BYTES);
    let mut line = 0;
    while text.len() < FILE_BYTES - 64 {
        if n.is_multiple_of(100) && line == 20 {
            let _ = writeln!(text, "    let found = needle_{n};");
        } else {
            let _ = writeln!(
                text,
                "    let value_{line} = compute({n}, {line}); // filler"
            );
        }
        line += 1;
    }
    while text.len() < FILE_BYTES {
        text.push(' ');
    }
    text
}
