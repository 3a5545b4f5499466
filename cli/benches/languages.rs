//! Benchmarks: the same trivial tool (`toolhost new`'s greeter) written in
//! Rust, Python and TypeScript (QuickJS and StarlingMonkey): one call with a
//! fresh instance and Store each, and a second start (compile cache warm) of
//! a host with no tools, with the tool, and with ten copies of it; a tool's
//! own load is (ten − one) / 9, the rest is the engine's start. And one
//! call of the Python evaluator (`tests/python/py_eval`), issue 25's Python
//! target.
//!
//! Run with `cargo bench -p toolhost --bench languages` after `scripts/test`
//! or `scripts/build-plugins` installed the toolchains (componentize-py on
//! PATH from target/py/bin, npm packages in plugins/ts/node_modules);
//! figures go in bench/RESULTS.md.

#![allow(
    missing_docs,
    reason = "criterion_main! makes an undocumented `pub fn main`"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use toolhost::{CallOptions, Host, Session};

/// The greeter in each language: (label, tool name, `new --lang`, engine).
const VARIANTS: &[(&str, &str, &str, &str)] = &[
    ("rust", "greet_rust", "rust", ""),
    ("python", "greet_python", "python", ""),
    ("ts quickjs", "greet_qjs", "ts", "quickjs"),
    ("ts starlingmonkey", "greet_sm", "ts", "starlingmonkey"),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn work_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-languages")
}

fn toolhost(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .current_dir(work_dir())
        .args(args)
        .env("CARGO_TARGET_DIR", repo().join("target/guests"))
        .env("TOOLHOST_JS_DEPS", repo().join("plugins/ts/node_modules"))
        .output()
        .expect("run toolhost");
    assert!(
        out.status.success(),
        "toolhost {args:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Scaffolds and builds every variant into `work_dir()/tools`.
fn build_all() {
    let _ = std::fs::remove_dir_all(work_dir());
    std::fs::create_dir_all(work_dir()).expect("work dir");
    for (_, name, lang, engine) in VARIANTS {
        toolhost(&["new", name, "--lang", lang]);
        let mut args = vec!["build", name];
        if !engine.is_empty() {
            args.extend(["--js-engine", engine]);
        }
        toolhost(&args);
    }
}

/// A host directory holding `copies` copies of `name` (`name`, `name_1`,
/// …): the same content, so one cache entry, but each file loaded on its own.
fn host_dir_of(name: &str, copies: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("tools")).expect("tools");
    for n in 0..copies {
        let copy = match n {
            0 => name.to_string(),
            n => format!("{name}_{n}"),
        };
        std::fs::copy(
            work_dir().join(format!("tools/{name}.wasm")),
            dir.path().join(format!("tools/{copy}.wasm")),
        )
        .expect("copy");
    }
    dir
}

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")
}

fn languages(c: &mut Criterion) {
    build_all();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let input = serde_json::json!({"name": "Ada"});
    // What a start costs before any tool: engine, pooling allocator, state.
    let empty = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(empty.path().join("tools")).expect("tools");
    c.bench_function("second start: no tools (baseline)", |b| {
        b.iter(|| {
            rt.block_on(Host::builder(empty.path()).cache_dir(cache_dir()).build())
                .expect("host")
        })
    });
    for (label, name, _, _) in VARIANTS {
        let dir = host_dir_of(name, 1);
        let load = || Host::builder(dir.path()).cache_dir(cache_dir()).build();
        // The first load compiles and fills the cache.
        let host = rt.block_on(load()).expect("host");
        assert!(host.registry().failures().is_empty(), "{label}");
        let options = CallOptions::new(Arc::new(Session::ephemeral().expect("session")));
        c.bench_function(
            &format!("call greet: {label} (fresh instance + Store)"),
            |b| {
                b.iter(|| {
                    let result = rt
                        .block_on(host.call(name, input.clone(), &options))
                        .expect("call");
                    assert!(!result.is_error, "{label}: {:?}", result.result);
                })
            },
        );
        c.bench_function(
            &format!("second start: load greet: {label} (warm cache)"),
            |b| b.iter(|| rt.block_on(load()).expect("host")),
        );
        // Ten files: the difference from one is nine tools' own load.
        let ten = host_dir_of(name, 10);
        let load_ten = || Host::builder(ten.path()).cache_dir(cache_dir()).build();
        let loaded = rt.block_on(load_ten()).expect("host");
        assert_eq!(loaded.registry().all().count(), 10, "{label}");
        c.bench_function(
            &format!("second start: load 10 copies of greet: {label}"),
            |b| b.iter(|| rt.block_on(load_ten()).expect("host")),
        );
    }
}

/// The Python evaluator (`tests/python/py_eval`, componentize-py), the tool
/// issue 25's Python target is measured with: `python_eval` of a small
/// expression, a fresh instance and Store each call.
fn python_eval(c: &mut Criterion) {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-guests");
    let wasm = toolhost_test_artifacts::python::componentize("py_eval", "evaluator", &out)
        .expect("componentize-py on PATH (run with PATH=$PWD/target/py/bin:$PATH)");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("tools")).expect("tools");
    std::fs::copy(&wasm, dir.path().join("tools/python.wasm")).expect("copy");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let host = rt
        .block_on(Host::builder(dir.path()).cache_dir(cache_dir()).build())
        .expect("host");
    assert!(host.registry().failures().is_empty());
    let options = CallOptions::new(Arc::new(Session::ephemeral().expect("session")));
    let input = serde_json::json!({"expression": "sum(range(10)) * 2"});
    c.bench_function("call eval: python (fresh instance + Store)", |b| {
        b.iter(|| {
            let result = rt
                .block_on(host.call("python_eval", input.clone(), &options))
                .expect("call");
            assert!(!result.is_error, "{:?}", result.result);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = languages, python_eval
}
criterion_main!(benches);
