//! Hostile tools against the host's own resources: what the host allocates
//! or holds because a guest asked. Each attack ends with `isError` naming
//! the limit, the process's RSS stays bounded, another tool's call runs
//! during the attack, and the next normal call succeeds. Every result
//! carries its receipt (`usage`).

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

mod common;

use common::{host, live};
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost::{CallResult, Host};

/// How far above idle the process's RSS may go during one attack.
const RSS_BOUND_BYTES: u64 = 512 << 20;

const CONFIG: &str = "[tools.host_bomb]\nkv = [\"default\"]\nworkspace = \"write\"\nmemory_mb = 256\ntimeout_ms = 30000\n";

/// The attacks share one process: run them one at a time so each one's
/// RSS is its own.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    kib << 10
}

async fn echo(host: &Host) -> Arc<CallResult> {
    let result = host
        .call("echo", json!({"text": "still here"}), &live())
        .await
        .expect("echo runs");
    assert!(!result.is_error, "{:?}", result.result);
    result
}

/// Run `attack` with `count`, with an `echo` call in flight beside it; the
/// attack's result once both are done.
async fn attack(attack: &str, count: u32) -> Arc<CallResult> {
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, host) = host(&["host_bomb", "echo"], CONFIG).await;
    echo(&host).await;
    let idle = rss_bytes();
    let options = live();
    let bomb = host.call(
        "host_bomb",
        json!({"attack": attack, "count": count}),
        &options,
    );
    let beside = async {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        echo(&host).await
    };
    let (result, _) = tokio::join!(bomb, beside);
    let result = result.expect("the attack is a call that ran");
    let grew = rss_bytes().saturating_sub(idle);
    println!(
        "{attack} x{count}: RSS +{} MiB; {}",
        grew >> 20,
        serde_json::to_string(&result.usage).unwrap_or_default()
    );
    assert!(
        grew < RSS_BOUND_BYTES,
        "{attack}: RSS grew {} MiB during the attack",
        grew >> 20
    );
    echo(&host).await;
    result
}

fn message(result: &CallResult) -> String {
    match &result.result {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The attack failed with a message naming `cap` and a receipt naming `limit`.
fn assert_refused(result: &CallResult, cap: &str, limit: &str) {
    let text = message(result);
    assert!(result.is_error, "not refused: {text}");
    assert!(text.contains(cap), "{text}");
    let hit = result.usage.limit.expect("the receipt names the limit");
    assert_eq!(hit.name.name(), limit, "{text}");
    assert!(hit.value > 0);
}

#[tokio::test]
async fn header_maps_are_bounded_by_handles_and_a_per_map_share() {
    let result = attack("headers", 100_000).await;
    assert_refused(&result, "handle cap hit", "handles");
    assert!(message(&result).contains("(max_handles)"));
}

#[tokio::test]
async fn one_header_map_may_hold_only_its_share() {
    let result = attack("header_map", 100_000).await;
    assert_refused(
        &result,
        "a header map grew past its 32 KiB share",
        "host_memory",
    );
}

#[tokio::test]
async fn unsent_bodies_buffer_at_most_their_share() {
    let result = attack("bodies", 100_000).await;
    assert_refused(&result, "handle cap hit", "handles");
}

#[tokio::test]
async fn open_files_are_bounded_by_the_handle_cap() {
    let result = attack("files", 100_000).await;
    assert_refused(&result, "handle cap hit", "handles");
    assert!(
        (1000..=1024).contains(&result.usage.files_opened),
        "{:?}",
        result.usage
    );
    assert_eq!(result.usage.peak_files_open, result.usage.files_opened - 1);
}

/// The host-wide cap on open workspace files in the next test.
const MAX_OPEN_FILES: u32 = 100;

/// Every call together holds at most `max_open_files` workspace files: past
/// it an open gets `busy` and the receipt names `open_files`; a file the
/// guest closes gives its slot back at once, and a call's files give theirs
/// back when it ends.
#[tokio::test]
async fn open_files_are_capped_for_every_call_together_and_given_back() {
    let _one = ONE_AT_A_TIME.lock().await;
    let config = format!("[limits]\nmax_open_files = {MAX_OPEN_FILES}\n\n{CONFIG}");
    let (_dir, host) = host(&["host_bomb", "echo"], &config).await;
    assert_eq!(host.file_slots().cap(), MAX_OPEN_FILES);
    let run = |attack: &'static str, count: u32| {
        let host = &host;
        async move {
            host.call(
                "host_bomb",
                json!({"attack": attack, "count": count}),
                &live(),
            )
            .await
            .expect("the attack is a call that ran")
        }
    };
    for round in 0..2 {
        let held = run("files", 100_000).await;
        let text = message(&held);
        assert!(held.is_error, "round {round}: {text}");
        assert!(text.contains("refused"), "{text}");
        let hit = held.usage.limit.expect("the receipt names the limit");
        assert_eq!(
            (hit.name.name(), hit.value),
            ("open_files", u64::from(MAX_OPEN_FILES))
        );
        assert_eq!(
            held.usage.peak_files_open, MAX_OPEN_FILES,
            "round {round}: {:?}",
            held.usage
        );
        assert!(
            held.trace
                .logs
                .iter()
                .any(|line| line.message.contains("(max_open_files)")),
            "{:?}",
            held.trace.logs
        );
        assert_eq!(host.file_slots().in_use(), 0, "the call's slots are back");
        echo(&host).await;
    }
    let reopened = run("reopen", 10 * MAX_OPEN_FILES).await;
    assert!(!reopened.is_error, "{}", message(&reopened));
    assert!(reopened.usage.files_opened > 10 * MAX_OPEN_FILES);
    assert!(reopened.usage.peak_files_open <= 2, "{:?}", reopened.usage);
    assert!(reopened.usage.limit.is_none());
}

#[tokio::test]
async fn a_batch_read_of_one_large_value_is_charged_per_key() {
    let result = attack("kv_batch", 4000).await;
    assert_refused(&result, "host memory cap hit", "host_memory");
    assert!(message(&result).contains("(host_memory_mb)"));
    assert!(
        result.usage.peak_host_bytes <= 32 << 20,
        "{:?}",
        result.usage
    );
    assert_eq!(result.usage.kv_ops, 4001, "one set, then 4000 keys");
    assert_eq!(result.usage.kv_bytes_written, 1 << 20);
}

#[tokio::test]
async fn compare_and_swap_snapshots_are_charged_while_held() {
    let result = attack("cas", 3000).await;
    assert_refused(&result, "host memory cap hit", "host_memory");
}

#[tokio::test]
async fn tiny_json_objects_under_the_byte_cap_are_refused_by_count() {
    let result = attack("tiny_json", 120_000).await;
    assert_refused(&result, "values and keys", "output");
    assert!(result.usage.output_bytes < 1 << 20, "{:?}", result.usage);
}

#[tokio::test]
async fn a_million_empty_blocks_are_refused() {
    let result = attack("blocks", 1_000_000).await;
    let text = message(&result);
    assert!(result.is_error, "{text}");
    let limit = result.usage.limit.expect("a limit").name.name();
    assert!(
        ["host_memory", "output"].contains(&limit),
        "{limit}: {text}"
    );
}

#[tokio::test]
async fn every_result_carries_its_receipt() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, host) = host(&["host_bomb", "echo"], CONFIG).await;
    let result = echo(&host).await;
    let usage = &result.usage;
    assert_eq!(usage.attempts, 1);
    assert!(usage.wall_us > 0);
    assert!(usage.peak_memory_bytes > 0, "{usage:?}");
    assert_eq!(
        (usage.kv_ops, usage.http_requests, usage.files_opened),
        (0, 0, 0)
    );
    assert_eq!(usage.output_bytes as usize, "still here".len() + 64);
    assert!(usage.limit.is_none());
    let envelope = serde_json::to_value(&result).unwrap();
    assert_eq!(envelope["usage"]["attempts"], json!(1));
    assert!(envelope["usage"]["peakHostBytes"].is_u64());

    let small = host
        .call(
            "host_bomb",
            json!({"attack": "kv_batch", "count": 3}),
            &live(),
        )
        .await
        .unwrap();
    assert!(!small.is_error, "{:?}", small.result);
    assert_eq!(small.usage.kv_ops, 4);
    assert_eq!(small.usage.kv_bytes_read, 3 << 20);
    assert!(small.usage.peak_host_bytes >= 3 << 20, "{:?}", small.usage);
}

/// Files in the directory the listing test lists.
const HUGE_DIRECTORY_FILES: u32 = 300_000;
/// Calls listing it at once.
const CONCURRENT_LISTINGS: usize = 8;
/// How long an `echo` call may take while the listings run.
const ECHO_BOUND: std::time::Duration = std::time::Duration::from_millis(100);

/// A directory of 300 000 files listed by 8 calls at once, each on its own
/// task as the server runs them: the host never holds a listing, and
/// another tool's calls keep answering on the two workers the listings
/// share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_a_huge_directory_streams_and_starves_nobody() {
    let _one = ONE_AT_A_TIME.lock().await;
    let config = "[tools.host_bomb]\nworkspace = \"read\"\ntimeout_ms = 60000\n";
    let (_dir, host) = host(&["host_bomb", "echo"], config).await;
    let host = std::sync::Arc::new(host);
    // Memory-backed where there is one: 300 000 creates on this machine's
    // ext4 take minutes of kernel time.
    let shm = std::path::Path::new("/dev/shm");
    let workspace = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .expect("workspace");
    for i in 0..HUGE_DIRECTORY_FILES {
        std::fs::File::create(workspace.path().join(format!("f{i:06}"))).expect("file");
    }
    echo(&host).await;
    let idle = rss_bytes();

    // One session each: a session runs one write call at a time.
    let listings: Vec<_> = (0..CONCURRENT_LISTINGS)
        .map(|_| {
            let options = common::session(toolhost::SessionSpec {
                workspace: Some(workspace.path().to_path_buf()),
                ..toolhost::SessionSpec::default()
            });
            let host = host.clone();
            tokio::spawn(async move {
                host.call("host_bomb", json!({"attack": "list", "count": 1}), &options)
                    .await
            })
        })
        .collect();
    let mut slowest = std::time::Duration::ZERO;
    let mut peak_rss = 0;
    let mut probes = 0;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    while !listings.iter().all(|listing| listing.is_finished()) {
        let started = std::time::Instant::now();
        let host = host.clone();
        tokio::spawn(async move { echo(&host).await })
            .await
            .expect("echo ran");
        slowest = slowest.max(started.elapsed());
        peak_rss = peak_rss.max(rss_bytes());
        probes += 1;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let grew = peak_rss.saturating_sub(idle);
    println!(
        "{CONCURRENT_LISTINGS} listings of {HUGE_DIRECTORY_FILES} files: slowest of {probes} echo calls {slowest:?}, RSS +{} MiB",
        grew >> 20
    );
    for listing in listings {
        let result = listing.await.expect("no panic").expect("the listing ran");
        assert_eq!(
            message(&result),
            format!("listed {HUGE_DIRECTORY_FILES} entries"),
            "{:?}",
            result.usage
        );
        assert!(result.usage.files_opened >= 1, "{:?}", result.usage);
        assert!(
            result.usage.peak_host_bytes < 1 << 20,
            "a listing is never held whole: {:?}",
            result.usage
        );
    }
    assert!(
        probes >= 3,
        "the listings ended before echo could be measured"
    );
    assert!(slowest < ECHO_BOUND, "an echo call took {slowest:?}");
    assert!(grew < RSS_BOUND_BYTES, "RSS grew {} MiB", grew >> 20);
    echo(&host).await;
}

/// A plain component exporting `run: func() -> u32`, instantiating `module`
/// `copies` times.
fn component_of(module: &str, copies: usize) -> Vec<u8> {
    let instances: String = (0..copies)
        .map(|i| format!("(core instance $i{i} (instantiate $m))\n"))
        .collect();
    let text = format!(
        "(component
           (core module $m {module} (func (export \"run\") (result i32) i32.const 7))
           {instances}
           (func (export \"run\") (result u32) (canon lift (core func $i0 \"run\"))))"
    );
    wat::parse_str(&text).expect("the component's text parses")
}

/// A host of `components` (slug and bytes) and no config, compiled afresh
/// on `tiering`.
async fn host_of(
    components: &[(&str, Vec<u8>)],
    tiering: toolhost::engine::Tiering,
) -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).expect("tools dir");
    for (slug, bytes) in components {
        std::fs::write(tools.join(format!("{slug}.wasm")), bytes).expect("write tool");
    }
    std::fs::write(dir.path().join("toolhost.toml"), "").expect("config");
    let host = toolhost::Host::builder(dir.path())
        .cache_dir(tempfile::tempdir().expect("cache").keep())
        .tiering(tiering)
        .build()
        .await
        .expect("host loads");
    (dir, host)
}

/// Components wider than the instance pool's per-component maxima (core
/// instances, memories, tables, table elements) are refused at load with
/// why, on either engine, and one that fits runs: no tool can take the
/// pool's share of another.
#[tokio::test]
async fn components_wider_than_the_pools_maxima_are_refused_at_load() {
    for tiering in [
        toolhost::engine::Tiering::Optimized,
        toolhost::engine::Tiering::BaselineFirst,
    ] {
        wide_components_are_refused(tiering).await;
    }
}

async fn wide_components_are_refused(tiering: toolhost::engine::Tiering) {
    let _one = ONE_AT_A_TIME.lock().await;
    let components = [
        ("fits", component_of("(memory 1) (table 1 funcref)", 8)),
        (
            "two_memories",
            component_of(
                "(memory 1) (memory 1) (table 1 funcref) (table 1 funcref)",
                4,
            ),
        ),
        ("instances", component_of("", 65)),
        ("memories", component_of("(memory 1)", 9)),
        ("tables", component_of("(table 1 funcref)", 17)),
        ("elements", component_of("(table 20001 funcref)", 1)),
    ];
    let (_dir, host) = host_of(&components, tiering).await;
    let registry = host.registry();
    let failures = registry.failures();
    println!("{tiering:?}: {} failures", failures.len());
    // Baseline code is not measured for core instances before it runs
    // (wasmtime has no count of them to ask): the Store refuses them.
    if tiering == toolhost::engine::Tiering::BaselineFirst {
        let wide = host
            .call("instances_run", json!({}), &live())
            .await
            .expect("the call ran");
        println!("instances on baseline code: {}", message(&wide));
        assert!(wide.is_error, "{:?}", wide.result);
        assert!(
            message(&wide).contains("instance count"),
            "{}",
            message(&wide)
        );
    }
    let refused_at_load = [
        ("instances", "65 core module instances"),
        ("memories", "memories"),
        ("tables", "tables"),
        ("elements", "table"),
    ];
    for (slug, why) in refused_at_load
        .into_iter()
        .filter(|(slug, _)| *slug != "instances" || tiering == toolhost::engine::Tiering::Optimized)
    {
        let failure = failures
            .iter()
            .find(|f| f.file.ends_with(format!("{slug}.wasm")))
            .unwrap_or_else(|| panic!("{slug}.wasm loaded: {failures:?}"));
        println!("{slug}: {}", failure.reason);
        assert!(failure.reason.contains(why), "{slug}: {}", failure.reason);
    }
    for fits in ["fits_run", "two_memories_run"] {
        let result = host.call(fits, json!({}), &live()).await.expect("runs");
        assert!(!result.is_error, "{fits}: {:?}", result.result);
        assert_eq!(result.result["result"], json!(7), "{fits}");
    }
}

/// GHSA-rc4p-x33f-vpr2 (fixed in wasmtime 50.0.2): in a build without the
/// `gc` feature, as this one is, an indirect call through a non-final
/// function type reached a runtime subtype check that aborted the whole
/// process. A tool doing so now gets its answer (a subtype) or a trap (an
/// unrelated type), on either compiler, and the host goes on.
#[tokio::test]
async fn indirect_calls_through_subtypes_answer_or_trap_never_abort() {
    for tiering in [
        toolhost::engine::Tiering::Optimized,
        toolhost::engine::Tiering::BaselineFirst,
    ] {
        subtyped_calls(tiering).await;
    }
}

async fn subtyped_calls(tiering: toolhost::engine::Tiering) {
    let _one = ONE_AT_A_TIME.lock().await;
    let component = |slot: u32| {
        let text = format!(
            "(component
               (core module $m
                 (type $run (func (result i32)))
                 (type $a (sub (func (result i32))))
                 (type $b (sub $a (func (result i32))))
                 (type $c (sub final (func (result i32))))
                 (table 2 funcref)
                 (elem (i32.const 0) func $seven $nine)
                 (func $seven (type $b) i32.const 7)
                 (func $nine (type $c) i32.const 9)
                 (func (export \"run\") (type $run) (call_indirect (type $a) (i32.const {slot}))))
               (core instance $i (instantiate $m))
               (func (export \"run\") (result u32) (canon lift (core func $i \"run\"))))"
        );
        wat::parse_str(&text).expect("the component's text parses")
    };
    let (_dir, host) = host_of(
        &[("subtype", component(0)), ("unrelated", component(1))],
        tiering,
    )
    .await;
    assert!(
        host.registry().failures().is_empty(),
        "{:?}",
        host.registry().failures()
    );
    let subtype = host
        .call("subtype_run", json!({}), &live())
        .await
        .expect("the call ran");
    assert!(!subtype.is_error, "{tiering:?}: {}", message(&subtype));
    assert_eq!(subtype.result["result"], json!(7), "{tiering:?}");
    let unrelated = host
        .call("unrelated_run", json!({}), &live())
        .await
        .expect("the call ran");
    assert!(unrelated.is_error, "{tiering:?}: {:?}", unrelated.result);
    println!("{tiering:?}, unrelated type: {}", message(&unrelated));
    let again = host
        .call("subtype_run", json!({}), &live())
        .await
        .expect("the call ran");
    assert_eq!(again.result["result"], json!(7), "{tiering:?}");
}
