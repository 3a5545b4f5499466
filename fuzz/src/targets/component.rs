//! Component loading: arbitrary bytes as a `.wasm` file in a tools folder,
//! loaded as the tool `fuzzed` the way a host start or reload loads one
//! (`registry::load_tool`: the component check, compile, pre-instantiation
//! against every capability, then the contract's `metadata` or the plain
//! component's functions).
//!
//! The compile cache is emptied before each input, so no input is answered
//! from an earlier one's cache and mutants never pile up on disk.
//!
//! Promises checked: a load gives tools that list, or an error that says
//! something (and no panic behind it); the engine still loads a real
//! component afterwards.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use toolhost::config::Config;
use toolhost::engine::{EngineOptions, ToolEngine};
use toolhost::registry::load_tool;

use crate::fixture;

/// Real components to start from, built from source by `toolhost-test-artifacts`.
const SEEDS: &[&str] = &["no_contract", "plain_shapes", "echo"];

/// How often the fixture checks that a real component still loads.
const CHECK_EVERY: Duration = Duration::from_secs(10);

/// The binary format's preambles, section ids, LEB128 edges and names.
pub(super) const DICTIONARY: &[&[&[u8]]] = &[&[
    b"\0asm",
    b"\x0d\x00\x01\x00",
    b"\x01\x00\x00\x00",
    b"\0asm\x0d\x00\x01\x00",
    b"\0asm\x01\x00\x00\x00",
    b"\x00",
    b"\x01",
    b"\x02",
    b"\x03",
    b"\x04",
    b"\x05",
    b"\x06",
    b"\x07",
    b"\x08",
    b"\x09",
    b"\x0a",
    b"\x0b",
    b"\x0c",
    b"\x7f",
    b"\x80\x01",
    b"\xff\xff\xff\xff\x0f",
    b"\x80\x80\x80\x80\x10",
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
    b"toolhost:tool/tool@0.2.2",
    b"toolhost:tool/tool@0.2.0",
    b"toolhost:tool/types@0.2.2",
    b"toolhost:tool/tool@0.1.0",
    b"wasi:cli/environment@0.2.0",
    b"wasi:io/streams@0.2.0",
    b"metadata",
    b"execute",
    b"effect-for",
    b"cabi_realloc",
    b"memory",
    b"component-type",
]];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    engine: ToolEngine,
    cache_dir: PathBuf,
    file: PathBuf,
    config: Config,
    /// A real component, and when it was last checked to load.
    known_good: (PathBuf, Mutex<Instant>),
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = fixture::runtime("component");
        let dir = fixture::host_dir("component", &["echo"], "");
        let cache_dir = dir.join("cache");
        let config = Config::default();
        let engine = ToolEngine::new(&EngineOptions {
            max_memory_bytes: config.max_memory_bytes(),
            max_instances: 8,
            cache_dir: cache_dir.clone(),
            cache_max_bytes: toolhost::config::DEFAULT_COMPILE_CACHE_MB << 20,
            shared_cache: None,
        })
        .expect("fixture: the engine starts");
        Fixture {
            runtime,
            engine,
            cache_dir,
            file: dir.join("fuzzed.wasm"),
            config,
            known_good: (dir.join("tools/echo.wasm"), Mutex::new(Instant::now())),
        }
    })
}

/// The real components the corpus starts from.
pub(super) fn extra_seeds() -> Vec<Vec<u8>> {
    SEEDS
        .iter()
        .map(|slug| {
            std::fs::read(fixture::artifact(slug))
                .unwrap_or_else(|e| panic!("fixture: cannot read the `{slug}` component: {e}"))
        })
        .collect()
}

/// Run one input: see the module documentation.
pub fn component(data: &[u8]) {
    let fixture = fixture();
    let _ = std::fs::remove_dir_all(&fixture.cache_dir);
    if let Err(e) = std::fs::write(&fixture.file, data) {
        panic!("fixture: cannot write {}: {e}", fixture.file.display());
    }
    let load = load_tool(&fixture.engine, &fixture.file, "fuzzed", &fixture.config);
    match fixture.runtime.block_on(load) {
        Ok(tools) => {
            assert!(!tools.is_empty(), "a component loaded as no tool at all");
            for tool in &tools {
                if let Err(e) = serde_json::to_string(&tool.to_json()) {
                    panic!("tool `{}` does not list: {e}", tool.name());
                }
            }
        }
        Err(reason) => {
            assert!(!reason.trim().is_empty(), "a load error that says nothing");
            assert!(
                !reason.contains("panicked"),
                "a load error hiding a panic: {reason}"
            );
        }
    }
    still_loads(fixture);
}

/// Every [`CHECK_EVERY`], a real component still loads.
fn still_loads(fixture: &Fixture) {
    let (path, checked) = &fixture.known_good;
    let mut checked = checked.lock().unwrap_or_else(PoisonError::into_inner);
    if checked.elapsed() < CHECK_EVERY {
        return;
    }
    let load = load_tool(&fixture.engine, path, "echo", &fixture.config);
    if let Err(e) = fixture.runtime.block_on(load) {
        panic!("the engine no longer loads a real component: {e}");
    }
    *checked = Instant::now();
}
