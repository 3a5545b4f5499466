//! The console's first load over loopback with 128 tools: from navigation
//! to the Tools page on screen (the page's `console-ready` mark, after its
//! script, `/healthz` and `GET …/tools?detail=true` ran and the table is
//! drawn), in Debian's headless Chromium, a fresh tab each time. The tools
//! are `echo`, `counter` and 126 custom tools declared in `toolhost.toml`.
//!
//! Run with `cargo bench -p toolhost-cli --bench console_load` (optional:
//! the number of loads, default 30); figures go in bench/RESULTS.md.

#![allow(
    clippy::unwrap_used,
    reason = "a bench fails by panicking, the test helpers it shares included"
)]

#[path = "../tests/common/browser.rs"]
#[allow(dead_code, reason = "the tests use the rest")]
mod browser;
#[path = "../tests/common/process.rs"]
#[allow(dead_code, reason = "the tests use the rest")]
mod process;

/// The tools the page lists.
const TOOLS: usize = 128;

fn main() -> anyhow::Result<()> {
    let loads: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    for tool in ["echo", "counter"] {
        let path = toolhost_test_artifacts::find(tool).expect("artifact");
        std::fs::copy(path, dir.path().join(format!("tools/{tool}.wasm")))?;
    }
    let mut config = String::from("[tools.counter]\nkv = [\"default\"]\n");
    for i in 0..TOOLS - 2 {
        config.push_str(&format!(
            "\n[custom_tools.lookup_{i:03}]\ndescription = \"Look up record {i} in the \
             inventory. Returns its fields as JSON; it cannot change them. Use it before \
             editing a record.\"\ninput_schema = {{ type = \"object\", properties = {{ id = {{ \
             type = \"string\", description = \"The record's id.\" }}, fields = {{ type = \
             \"array\", items = {{ type = \"string\" }}, description = \"Fields to return.\" \
             }} }}, required = [\"id\"] }}\neffect = \"read\"\n"
        ));
    }
    std::fs::write(dir.path().join("toolhost.toml"), config)?;

    let server = process::serve(dir.path(), &[]);
    let url = server.url.clone();

    let runtime = tokio::runtime::Runtime::new()?;
    let mut times = runtime.block_on(async {
        let browser = browser::Browser::start()
            .await
            .expect("chromium is installed (apt-get install chromium)");
        let mut times = Vec::with_capacity(loads);
        for _ in 0..=loads {
            let page = browser.open(&format!("{url}/#/tools")).await;
            browser::until(
                &page,
                "performance.getEntriesByName('console-ready').length",
            )
            .await;
            let rows: usize = browser::eval(
                &page,
                "document.querySelectorAll('table.tools tbody tr').length",
            )
            .await;
            assert_eq!(rows, TOOLS, "every tool is listed");
            let ms: f64 = browser::eval(
                &page,
                "performance.getEntriesByName('console-ready')[0].startTime",
            )
            .await;
            times.push(ms);
            page.close().await.expect("the tab closes");
        }
        // The first load warms the server and the browser's caches.
        times.remove(0);
        times
    });
    drop(server);
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "console first load, {TOOLS} tools, {} loads: p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        times.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    );
    Ok(())
}
