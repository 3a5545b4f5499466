//! What the targets build once per process and share between inputs: a
//! tokio runtime per target, scratch directories removed when the process
//! exits, the compile cache, and hosts loaded with the example tools built
//! by `toolhost-test-artifacts`.
//!
//! A fixture that cannot be built (a missing artifact, a full disk) panics
//! with what went wrong: that is the machine's fault, not an input's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once, PoisonError};

use toolhost::Host;

/// A multi-threaded runtime whose threads are named `fuzz-<target>`, so
/// The example tools the call-path targets serve.
pub const EXAMPLE_TOOLS: &[&str] = &[
    "counter",
    "echo",
    "fetch_url",
    "flaky_lookup",
    "manage_pr",
    "notes",
    "publish_release",
    "query_telemetry",
    "word_count",
];

/// The grants [`EXAMPLE_TOOLS`] need (no HTTP: nothing leaves the machine).
pub const EXAMPLE_GRANTS: &str = r#"
[defaults]
timeout_ms = 5000

[tools.counter]
kv = ["default"]

[tools.notes]
workspace = "write"

[tools.manage_pr]
workspace = "write"

[tools.publish_release]
workspace = "write"
permission = "always_ask"

[tools.word_count]
workspace = "read"
"#;

/// [`crate::panics`] can tell whose a panic is.
pub fn runtime(target: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(format!("fuzz-{target}"))
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("fixture: cannot start the {target} runtime: {e}"))
}

static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A fresh directory under the system's temporary folder, removed when
/// the process exits normally.
pub fn scratch_dir(label: &str) -> PathBuf {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: `remove_scratch` is an `extern "C"` function that takes
        // no arguments and never unwinds (it ignores every error).
        unsafe {
            libc::atexit(remove_scratch);
        }
    });
    let dir = tempfile::Builder::new()
        .prefix(&format!("toolhost-fuzz-{label}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("fixture: cannot make a scratch directory: {e}"))
        .keep();
    SCRATCH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(dir.clone());
    dir
}

extern "C" fn remove_scratch() {
    let dirs = std::mem::take(&mut *SCRATCH.lock().unwrap_or_else(PoisonError::into_inner));
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The compile cache the example tools are kept in between runs:
/// `$TOOLHOST_FUZZ_CACHE`, else `target/fuzz-cache` in the workspace.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_FUZZ_CACHE").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-cache"),
        PathBuf::from,
    )
}

/// The `.wasm` of an example tool or test guest, by slug.
pub fn artifact(slug: &str) -> &'static str {
    toolhost_test_artifacts::find(slug)
        .unwrap_or_else(|| panic!("fixture: toolhost-test-artifacts has no `{slug}`"))
}

/// A scratch host directory holding `tools/<slug>.wasm` for each of
/// `tools` and `config` as its `toolhost.toml`.
pub fn host_dir(label: &str, tools: &[&str], config: &str) -> PathBuf {
    let dir = scratch_dir(label);
    let tools_dir = dir.join("tools");
    let made = std::fs::create_dir(&tools_dir).and_then(|()| {
        for slug in tools {
            std::fs::copy(artifact(slug), tools_dir.join(format!("{slug}.wasm")))?;
        }
        std::fs::write(dir.join("toolhost.toml"), config)
    });
    made.unwrap_or_else(|e| panic!("fixture: cannot lay out {}: {e}", dir.display()));
    dir
}

/// Load the host in `dir` with the shared compile cache; every tool must load.
pub fn load_host(runtime: &tokio::runtime::Runtime, dir: &Path) -> Arc<Host> {
    let host = runtime
        .block_on(Host::builder(dir).cache_dir(cache_dir()).build())
        .unwrap_or_else(|e| {
            panic!(
                "fixture: the host in {} does not load: {e:#}",
                dir.display()
            )
        });
    let registry = host.registry();
    let failures = registry.failures();
    assert!(
        failures.is_empty(),
        "fixture: tools failed to load: {failures:?}"
    );
    Arc::new(host)
}
