//! Load benchmark of the shared-state path: `echo` (no state) and `counter`
//! (one key-value increment), outside a session and in one (each client
//! its own: the session bound, its write slot taken for `counter`, its
//! events recorded), through one server on the embedded store, and
//! through two servers sharing one Redis, clients alternating between them.
//!
//! The servers run in this process on one 2-thread runtime, the clients on
//! another, and `redis-server` (Debian's, started here on a random port with
//! `appendonly yes`) in its own process: all share the machine's cores.
//! Redis runs once with `appendfsync always` (every write on disk before
//! its reply, as the embedded store commits) and once with `everysec`.
//!
//! Run with `cargo bench -p toolhost-serve --bench fleet_load` (optional
//! arg: seconds per run, default 5); figures go in bench/RESULTS.md.

#[path = "common/load.rs"]
mod load;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use load::{Call, create_session, load_each, start_server};
use tempfile::TempDir;
use toolhost_test_artifacts::redis::RedisServer;

const ECHO: Call = Call {
    path: "/toolhost/v1/tools/echo",
    body: Bytes::from_static(br#"{"input":{"text":"hello"}}"#),
    expect: br#""hello""#,
};

const COUNTER: Call = Call {
    path: "/toolhost/v1/tools/counter",
    body: Bytes::from_static(br#"{"input":{"name":"hits"}}"#),
    expect: br#""isError":false"#,
};

/// One server on `state` (a `[state]` section, or empty for the embedded
/// store), serving `echo` and `counter`; its address.
async fn start_in(dirs: &mut Vec<TempDir>, state: &str) -> anyhow::Result<SocketAddr> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    for slug in ["echo", "counter"] {
        let path = toolhost_test_artifacts::find(slug).expect("a built artifact");
        std::fs::copy(path, dir.path().join(format!("tools/{slug}.wasm")))?;
    }
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!("{state}\n[tools.counter]\nkv = [\"default\"]\n"),
    )?;
    let addr = start_server(dir.path()).await?;
    dirs.push(dir);
    Ok(addr)
}

fn main() -> anyhow::Result<()> {
    let seconds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut dirs = Vec::new();
    let mut setups: Vec<(String, Vec<SocketAddr>, Option<RedisServer>)> = Vec::new();
    let embedded = server_rt.block_on(start_in(&mut dirs, ""))?;
    setups.push(("1 server, embedded".into(), vec![embedded], None));
    for fsync in ["always", "everysec"] {
        let redis = RedisServer::start_with(&["--appendfsync", fsync])
            .ok_or_else(|| anyhow::anyhow!("redis-server is not installed"))?;
        let workspaces = tempfile::tempdir()?;
        let state = format!(
            "[state]\nbackend = \"redis\"\nredis_url = \"{}\"\nworkspaces_dir = \"{}\"\n",
            redis.url(),
            workspaces.path().display()
        );
        dirs.push(workspaces);
        let servers = server_rt.block_on(async {
            let a = start_in(&mut dirs, &state).await?;
            let b = start_in(&mut dirs, &state).await?;
            anyhow::Ok(vec![a, b])
        })?;
        setups.push((
            format!("2 servers, Redis (appendfsync {fsync})"),
            servers,
            Some(redis),
        ));
    }

    println!("| setup | tool | in | clients | calls/s | p50 | p99 |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (name, servers, _redis) in &setups {
        for (tool, call) in [("echo", ECHO), ("counter", COUNTER)] {
            for in_session in [false, true] {
                for clients in [1, 32] {
                    // Each client its own session (a write holds its slot),
                    // made on the server it calls.
                    let calls = (0..clients)
                        .map(|i| match in_session {
                            false => Ok(call.clone()),
                            true => {
                                let id = client_rt
                                    .block_on(create_session(servers[i % servers.len()]))?;
                                call.in_session(&id)
                            }
                        })
                        .collect::<anyhow::Result<Vec<Call>>>()?;
                    client_rt.block_on(load_each(servers, &calls, Duration::from_millis(500)))?;
                    let run = client_rt.block_on(load_each(
                        servers,
                        &calls,
                        Duration::from_secs(seconds),
                    ))?;
                    let within = if in_session { "session" } else { "-" };
                    println!(
                        "| {name} | {tool} | {within} | {clients} | {:.0} | {:.3} ms | {:.3} ms |",
                        run.rate(),
                        run.ms(0.50),
                        run.ms(0.99),
                    );
                }
            }
        }
    }
    Ok(())
}
