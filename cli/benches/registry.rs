//! Tools from a registry: a Python component (componentize-py's, the
//! largest kind a tool author ships) published to Debian's
//! `docker-registry` on loopback, then
//! - **pull**: `oci::pull` into an empty cache (manifest, component
//!   streamed and hashed, kept);
//! - **cold add**: `toolhost add` in a fresh host directory, as a user runs
//!   it (pull, signature check, load and compile, pin);
//! - **warm start**: a host whose `[sources]` names it, built again with
//!   the cache and the compile cache warm (digests checked, nothing
//!   pulled), beside the same component as a file in `tools/`;
//! - the same warm start with a `[trust]` entry (its kept signature
//!   verified again).
//!
//! Each row gives the median and the slowest of its runs. Run with
//! `cargo bench -p toolhost-cli --bench registry` (optional: runs per row,
//! default 5); figures go in bench/RESULTS.md.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use toolhost::caps::http::Network;
use toolhost::oci::{self, Cache, Reference};

/// The component: the Python example with the most code.
const COMPONENT: &str = "py_journal";

fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run(runs))
}

/// `docker-registry` on a random loopback port; killed when dropped.
struct Registry {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: info, accesslog: {{disabled: true}}}}\n\
                 storage: {{filesystem: {{rootdirectory: {}}}}}\nhttp: {{addr: 127.0.0.1:0}}\n",
                dir.path().join("data").display()
            ),
        )?;
        let log = dir.path().join("log");
        let mut child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("docker-registry (apt-get install docker-registry)")?;
        let started = Instant::now();
        let port = loop {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(port) = said
                .split("listening on 127.0.0.1:")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|port| port.parse().ok())
            {
                break port;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                anyhow::bail!("docker-registry did not start: {said}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Ok(Self {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolhost` with `args` and `env`; its stdout, or the error with stderr.
fn toolhost(args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .env("DOCKER_CONFIG", "/nonexistent")
        .envs(env.iter().copied())
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "toolhost {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The median and the slowest of `times`.
fn row(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let median = times[times.len() / 2];
    let slowest = times[times.len() - 1];
    println!(
        "{name:<44} median {:>9.1} ms   slowest {:>9.1} ms",
        median.as_secs_f64() * 1e3,
        slowest.as_secs_f64() * 1e3
    );
}

/// Build the host of `dir` and check `name` loaded: how long it took.
async fn start(dir: &Path, name: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let host = toolhost::Host::builder(dir).build().await?;
    let took = started.elapsed();
    anyhow::ensure!(
        host.registry().get(name).is_some(),
        "{name} did not load: {:?}",
        host.registry().failures()
    );
    Ok(took)
}

async fn run(runs: usize) -> anyhow::Result<()> {
    // Built as an author builds it (componentize-py on PATH:
    // `source scripts/toolchains`).
    let built = tempfile::tempdir()?;
    let project = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../plugins/python/",
        "py_journal"
    );
    toolhost(
        &[
            "build",
            project,
            "--out",
            built.path().to_str().unwrap_or("."),
        ],
        &[],
    )?;
    let component = built.path().join(format!("{COMPONENT}.wasm"));
    let component = component.to_str().context("a UTF-8 path")?;
    let size = std::fs::metadata(component)
        .with_context(|| component.to_string())?
        .len();
    let registry = Registry::start()?;
    let tag = format!("oci://127.0.0.1:{}/bench/{COMPONENT}:v1", registry.port);
    let scratch = tempfile::tempdir()?;
    let pinned = toolhost(
        &[
            "publish",
            component,
            &tag,
            "-d",
            scratch.path().to_str().unwrap_or("."),
        ],
        &[],
    )?;
    let keys = tempfile::tempdir()?;
    let prefix = keys.path().join("bench");
    let prefix = prefix.to_str().unwrap_or("bench");
    toolhost(&["keygen", prefix], &[])?;
    toolhost(&["sign", &pinned, "--key", &format!("{prefix}.key")], &[])?;
    println!(
        "{COMPONENT}: {:.1} MB, from docker-registry on 127.0.0.1:{} ({runs} runs a row)",
        size as f64 / 1e6,
        registry.port
    );

    let reference = Reference::parse(&pinned).map_err(anyhow::Error::msg)?;
    let mut pulls = Vec::new();
    for _ in 0..runs {
        let cache = tempfile::tempdir()?;
        let started = Instant::now();
        oci::pull(
            Network::system(),
            &reference,
            reference.digest.as_ref(),
            &Cache::new(cache.path()),
            None,
            |_, _| {},
        )
        .await
        .map_err(anyhow::Error::msg)?;
        pulls.push(started.elapsed());
    }
    row("pull into an empty cache", pulls);

    let trust = format!(
        "[trust.\"127.0.0.1:{}/bench\"]\nkeys = [\"{prefix}.pub\"]\n",
        registry.port
    );
    let mut adds = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..runs {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("tools"))?;
        std::fs::write(dir.path().join("toolhost.toml"), &trust)?;
        let started = Instant::now();
        toolhost(
            &[
                "add",
                &pinned,
                "--as",
                "tool",
                "-d",
                dir.path().to_str().unwrap_or("."),
            ],
            &[],
        )?;
        adds.push(started.elapsed());
        dirs.push(dir);
    }
    row("cold add (pull, verify, compile, pin)", adds);

    // Warm: the first host directory, its cache and compile cache filled.
    let from_registry = dirs.remove(0);
    start(from_registry.path(), "tool").await?;
    let from_file = tempfile::tempdir()?;
    std::fs::create_dir(from_file.path().join("tools"))?;
    std::fs::copy(component, from_file.path().join("tools/tool.wasm"))?;
    start(from_file.path(), "tool").await?;
    let untrusted = tempfile::tempdir()?;
    std::fs::create_dir(untrusted.path().join("tools"))?;
    let config = std::fs::read_to_string(from_registry.path().join("toolhost.toml"))?;
    let sources = &config[config.find("[sources]").context("[sources]")?..];
    std::fs::write(untrusted.path().join("toolhost.toml"), sources)?;
    std::fs::create_dir_all(untrusted.path().join(".toolhost"))?;
    copy_dir(
        &from_registry.path().join(".toolhost"),
        &untrusted.path().join(".toolhost"),
    )?;
    // No registry from here on. Rows take turns, so a slower stretch of
    // the machine falls on each alike.
    drop(registry);
    let (mut file, mut pinned_rows, mut signed) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        file.push(start(from_file.path(), "tool").await?);
        pinned_rows.push(start(untrusted.path(), "tool").await?);
        signed.push(start(from_registry.path(), "tool").await?);
    }
    row("warm start, the component a file in tools/", file);
    row("warm start, from [sources] (cache)", pinned_rows);
    row("warm start, from [sources] under [trust]", signed);
    Ok(())
}

/// Copy the folder `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
