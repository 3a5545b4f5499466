//! Benchmarks: one `echo` call through the whole pipeline (fresh instance and
//! Store per call), loading 100 distinct components from a warm cache,
//! reloading a folder of 100 after one of them changed, and the compile that
//! reload pays for.
//!
//! Run with `cargo bench -p toolhost --bench call`; figures go in bench/RESULTS.md.

#![allow(
    missing_docs,
    reason = "criterion_main! makes an undocumented `pub fn main`"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use toolhost::{CallOptions, Host, Session};

/// A compile cache kept between bench runs, so set-up does not recompile.
fn cache_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")
}

fn echo_path() -> &'static str {
    toolhost_test_artifacts::PLUGINS
        .iter()
        .find(|(name, _)| *name == "echo")
        .map(|(_, path)| *path)
        .expect("echo artifact")
}

/// Append a custom section so each copy has its own hash (and cache entry).
fn distinct_copy(bytes: &[u8], n: u32) -> Vec<u8> {
    let name = b"toolhost-bench";
    let payload = n.to_le_bytes();
    let size = 1 + name.len() + payload.len();
    let mut out = bytes.to_vec();
    out.push(0);
    out.push(u8::try_from(size).expect("small section"));
    out.push(u8::try_from(name.len()).expect("short name"));
    out.extend_from_slice(name);
    out.extend_from_slice(&payload);
    out
}

fn call_echo(c: &mut Criterion) {
    c.bench_function("call echo (fresh instance + Store per call)", |b| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("tools")).expect("tools");
        std::fs::copy(echo_path(), dir.path().join("tools/echo.wasm")).expect("copy");
        let host = rt
            .block_on(Host::builder(dir.path()).cache_dir(cache_dir()).build())
            .expect("host");
        let options = CallOptions::new(Arc::new(Session::ephemeral().expect("session")));
        let input = serde_json::json!({"text": "hello"});
        b.iter(|| {
            let result = rt
                .block_on(host.call("echo", input.clone(), &options))
                .expect("call");
            assert!(!result.is_error);
        })
    });
}

/// A host directory with 100 distinct copies of `echo` (`echo000`..`echo099`),
/// and echo's bytes to make more.
fn folder_of_100() -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).expect("tools");
    let echo = std::fs::read(echo_path()).expect("echo");
    for n in 0..100 {
        std::fs::write(
            tools.join(format!("echo{n:03}.wasm")),
            distinct_copy(&echo, n),
        )
        .expect("write");
    }
    (dir, echo)
}

fn load_100(c: &mut Criterion) {
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("100 distinct tools, warm cache", |b| {
        // Set up inside the closure so a filtered run does not pay for it.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let (dir, _echo) = folder_of_100();
        let build = |dir: &Path| rt.block_on(Host::builder(dir).build()).expect("host");
        let warm = build(dir.path());
        assert_eq!(
            warm.registry().tools().count(),
            100,
            "{:?}",
            warm.registry().failures()
        );
        drop(warm);
        b.iter(|| build(dir.path()))
    });
    group.finish();
}

fn reload_one_of_100(c: &mut Criterion) {
    let mut group = c.benchmark_group("reload");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (name, until_optimized) in [
        (
            "1 of 100 tools replaced (compiled anew), then called",
            false,
        ),
        (
            "1 of 100 tools replaced, until its optimized code is in",
            true,
        ),
    ] {
        group.bench_function(name, |b| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let (dir, echo) = folder_of_100();
            let tools = dir.path().join("tools");
            // A cache of its own: every replacement below is new to it.
            let cache = tempfile::tempdir().expect("cache");
            let host = rt
                .block_on(Host::builder(dir.path()).cache_dir(cache.path()).build())
                .expect("host");
            let options = CallOptions::new(Arc::new(Session::ephemeral().expect("session")));
            let input = serde_json::json!({"text": "hello"});
            let mut version = 1000;
            // The reload and the first call (on baseline code); the optimized
            // compile that follows in the background is awaited before the
            // next iteration either way, so it never overlaps one.
            b.iter_custom(|iterations| {
                let mut timed = Duration::ZERO;
                for _ in 0..iterations {
                    version += 1;
                    std::fs::write(tools.join("echo042.wasm"), distinct_copy(&echo, version))
                        .expect("replace");
                    let started = Instant::now();
                    let registry = rt.block_on(host.reload()).expect("reload");
                    assert_eq!(registry.tools().count(), 100);
                    let result = rt
                        .block_on(host.call("echo042", input.clone(), &options))
                        .expect("call");
                    assert!(!result.is_error);
                    if !until_optimized {
                        timed += started.elapsed();
                    }
                    rt.block_on(host.engine().wait_optimized());
                    if until_optimized {
                        timed += started.elapsed();
                    }
                }
                timed
            })
        });
    }
    group.finish();
}

/// The part of a reload that compiling a new component takes: `echo`,
/// never seen before, compiled (and written to the cache).
fn compile_one(c: &mut Criterion) {
    let mut group = c.benchmark_group("reload");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("compile 1 new component", |b| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let cache = tempfile::tempdir().expect("cache");
        let engine = toolhost::engine::ToolEngine::new(&toolhost::engine::EngineOptions {
            max_memory_bytes: 128 << 20,
            max_instances: 4,
            cache_dir: cache.path().to_path_buf(),
            cache_max_bytes: toolhost::config::DEFAULT_COMPILE_CACHE_MB << 20,
            shared_cache: None,
        })
        .expect("engine");
        let echo = std::fs::read(echo_path()).expect("echo");
        let mut version = 5000;
        b.iter(|| {
            version += 1;
            rt.block_on(engine.compile(distinct_copy(&echo, version)))
                .expect("compile")
        })
    });
    group.finish();
}

criterion_group!(benches, call_echo, load_100, reload_one_of_100, compile_one);
criterion_main!(benches);
