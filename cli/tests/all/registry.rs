//! Loading a tools folder: every check at load, reported by file and reason
//! while the good tools still load.

use crate::common;

use common::{artifact, cache_dir, fresh_copy, host, host_dir, live, load};
use serde_json::json;
use toolhost::Host;
use toolhost::engine::{CodeTier, Tiering};

fn failure_for(host: &Host, tool: &str) -> String {
    host.registry()
        .failures()
        .iter()
        .find(|f| f.tool.as_deref() == Some(tool))
        .unwrap_or_else(|| panic!("no failure for {tool}: {:?}", host.registry().failures()))
        .to_string()
}

#[tokio::test]
async fn bad_tools_are_reported_and_good_ones_load() {
    let dir = host_dir(
        &[
            "echo",
            "bad_schema",
            "bad_time_args",
            "not_object_schema",
            "long_description",
            "no_contract",
        ],
        "",
    );
    let tools = dir.path().join("tools");
    std::fs::write(tools.join("garbage.wasm"), b"this is not wasm").unwrap();
    std::fs::write(tools.join("core.wasm"), [0, b'a', b's', b'm', 1, 0, 0, 0]).unwrap();
    std::fs::copy(artifact("echo"), tools.join("read.wasm")).unwrap();
    std::fs::copy(artifact("echo"), tools.join("bad name.wasm")).unwrap();
    std::fs::copy(
        artifact("echo"),
        tools.join(format!("{}.wasm", "x".repeat(65))),
    )
    .unwrap();
    let host = load(dir.path()).await;

    let names: Vec<_> = host
        .registry()
        .tools()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(names, ["echo"]);
    let expectations = [
        ("bad_schema", "input schema does not compile"),
        ("bad_time_args", "time argument"),
        ("not_object_schema", "\"type\": \"object\""),
        ("long_description", "at most 4096"),
        ("no_contract", "toolhost:tool/tool@0.2.2"),
        ("garbage", "not a WebAssembly file"),
        ("core", "core WebAssembly module"),
        ("read", "reserved for the built-in toolset"),
        ("bad name", "is invalid"),
    ];
    for (tool, needle) in expectations {
        let failure = failure_for(&host, tool);
        assert!(failure.contains(needle), "{tool}: {failure}");
        assert!(failure.contains(".wasm"), "names the file: {failure}");
    }
    failure_for(&host, &"x".repeat(65));

    assert_echoes(&host, "fine").await;
}

#[tokio::test]
async fn a_prompt_name_offered_twice_refuses_the_second_file() {
    let dir = host_dir(&["word_count"], "");
    std::fs::copy(
        artifact("word_count"),
        dir.path().join("tools/word_count_copy.wasm"),
    )
    .unwrap();
    let host = load(dir.path()).await;
    let failure = failure_for(&host, "word_count_copy");
    assert!(
        failure.contains("offers the prompt `word_count_report`")
            && failure.contains("word_count.wasm already offers"),
        "{failure}"
    );
    let registry = host.registry();
    let offered: Vec<_> = registry
        .prompts()
        .map(|(tool, prompt)| (tool.name(), prompt.name.as_str()))
        .collect();
    assert_eq!(offered, [("word_count", "word_count_report")]);
}

#[tokio::test]
async fn more_than_128_tools_is_a_load_error() {
    let dir = host_dir(&[], "");
    let tools = dir.path().join("tools");
    for n in 0..129 {
        std::fs::copy(artifact("echo"), tools.join(format!("echo{n}.wasm"))).unwrap();
    }
    let err = Host::builder(dir.path())
        .cache_dir(cache_dir())
        .build()
        .await
        .err()
        .expect("129 tools must not load");
    assert!(format!("{err:#}").contains("at most 128"), "{err:#}");
}

#[tokio::test]
async fn config_for_a_missing_tool_is_an_error() {
    let dir = host_dir(&["echo"], "[tools.ehco]\npermission = \"always_ask\"\n");
    let err = Host::builder(dir.path())
        .cache_dir(cache_dir())
        .build()
        .await
        .err()
        .expect("a grant for a missing tool must not load");
    let message = format!("{err:#}");
    assert!(
        message.contains("[tools.ehco]") && message.contains("does not exist"),
        "{message}"
    );
    assert!(
        matches!(
            err.downcast_ref::<toolhost::LoadError>(),
            Some(toolhost::LoadError::UnknownConfigured { names, .. }) if names == &["ehco"]
        ),
        "a typed error the caller can match: {err:?}"
    );
}

#[tokio::test]
async fn a_typo_in_the_config_names_the_key_and_line() {
    let dir = host_dir(
        &["echo"],
        "[defaults]\ntimeout_ms = 100\npermision = \"always_ask\"\n",
    );
    let err = Host::builder(dir.path())
        .build()
        .await
        .err()
        .expect("config error");
    let message = format!("{err:#}");
    assert!(
        message.contains("permision") && message.contains("line 3"),
        "{message}"
    );
}

#[tokio::test]
async fn disabled_tools_are_absent_and_refused() {
    let dir = host_dir(&["echo"], "[tools.echo]\nenabled = false\n");
    let host = load(dir.path()).await;
    assert_eq!(host.registry().tools().count(), 0);
    let err = host
        .call("echo", json!({"text": "x"}), &common::live())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unknown_tool");
}

#[tokio::test]
async fn the_compile_cache_keeps_under_its_cap() {
    let dir = host_dir(&["echo"], "[limits]\ncompile_cache_mb = 3\n");
    let cache = dir.path().join(".toolhost/cache");
    std::fs::create_dir_all(&cache).unwrap();
    let stale = cache.join(format!("{}-{}.cwasm", "0".repeat(64), "0".repeat(16)));
    std::fs::write(&stale, vec![0u8; 5 << 19]).unwrap();
    let a_day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(a_day_ago))
        .unwrap();
    let compiled = || {
        std::fs::read_dir(&cache)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "cwasm")
            })
            .count()
    };

    let host = Host::builder(dir.path()).build().await.unwrap();
    assert!(
        !stale.exists(),
        "2.5 MiB fit under 3 MiB, but not with echo's compilation"
    );
    assert_eq!(compiled(), 1, "echo's compilation, just written, stays");
    assert_echoes(&host, "x").await;
    drop(host);

    std::fs::remove_file(dir.path().join("tools/echo.wasm")).unwrap();
    Host::builder(dir.path()).build().await.unwrap();
    assert_eq!(
        std::fs::read_dir(cache.join("files")).unwrap().count(),
        0,
        "the index entry of a deleted tool file is pruned"
    );
}

#[tokio::test]
async fn compiled_components_are_cached_on_disk() {
    let dir = host_dir(&["echo"], "");
    let _first = Host::builder(dir.path()).build().await.unwrap();
    let cache = dir.path().join(".toolhost/cache");
    let compiled = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .collect()
    };
    let entries = compiled();
    assert_eq!(entries.len(), 1, "one cache entry per component");
    // The stamp index names the file's content, so the next start need not read it.
    assert_eq!(std::fs::read_dir(cache.join("files")).unwrap().count(), 1);
    // A corrupt entry is discarded and rebuilt, never trusted.
    let entry = entries[0].clone();
    std::fs::write(&entry, b"half-written").unwrap();
    let second = Host::builder(dir.path()).build().await.unwrap();
    assert_eq!(second.registry().tools().count(), 1);
    assert!(std::fs::read(&entry).unwrap().len() > 100);

    // A file replaced under the same name is read again, not served from the index.
    let echo = dir.path().join("tools/echo.wasm");
    let described = |host: &Host| {
        host.registry()
            .get("echo")
            .unwrap()
            .metadata()
            .description
            .clone()
    };
    let before = described(&second);
    std::fs::copy(common::artifact("counter"), &echo).unwrap();
    let third = Host::builder(dir.path()).build().await.unwrap();
    assert_ne!(described(&third), before);
    assert_eq!(compiled().len(), 2);
}

#[tokio::test]
async fn metadata_is_read_and_exposed() {
    let dir = host_dir(&["query_telemetry", "manage_pr", "publish_release"], "");
    let host = load(dir.path()).await;
    let registry = host.registry();
    let telemetry = registry.get("query_telemetry").unwrap();
    assert_eq!(telemetry.metadata().time_args, ["since", "until"]);
    assert_eq!(telemetry.metadata().effect.to_string(), "read");
    assert_eq!(telemetry.metadata().input_schema["type"], json!("object"));
    assert_eq!(
        registry
            .get("manage_pr")
            .unwrap()
            .metadata()
            .effect
            .to_string(),
        "by-input"
    );
    assert!(
        registry
            .get("publish_release")
            .unwrap()
            .metadata()
            .has_dry_run_result
    );
    assert!(telemetry.imports().iter().any(|i| i.starts_with("wasi:")));
}

#[tokio::test]
async fn a_reload_swaps_tools_and_keeps_the_last_good_version_of_a_broken_one() {
    let (dir, host) = host(&["echo", "trap"], "").await;
    let changes = host.tool_changes();
    let tools = dir.path().join("tools");
    let before = host.registry();

    // A broken replacement: echo keeps working and the failure is reported.
    std::fs::write(tools.join("echo.wasm"), b"not a component").unwrap();
    let registry = host.reload().await.unwrap();
    assert!(registry.get("echo").is_some(), "the last good echo stays");
    assert!(
        failure_for(&host, "echo").contains("not"),
        "{:?}",
        registry.failures()
    );
    assert_echoes(&host, "still").await;
    assert!(!changes.has_changed().unwrap(), "nothing callable changed");
    let kept = |r: &toolhost::Registry| r.get("trap").cloned().unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&kept(&before), &kept(&registry)),
        "an untouched file is not loaded again"
    );

    // A good replacement (another tool under the name) is swapped in.
    std::fs::copy(artifact("context"), tools.join("echo.wasm")).unwrap();
    host.reload().await.unwrap();
    assert!(changes.has_changed().unwrap());
    let result = host.call("echo", json!({}), &live()).await.unwrap();
    assert!(
        result.result.get("callId").is_some(),
        "the new tool answers: {:?}",
        result.result
    );
}

#[tokio::test]
async fn a_reload_reads_the_config_again() {
    let (dir, host) = host(
        &["echo", "counter"],
        "[tools.counter]\nkv = [\"default\"]\n",
    )
    .await;
    let config = dir.path().join("toolhost.toml");
    let before = host.registry();

    std::fs::write(
        &config,
        "[tools.counter]\nkv = [\"default\", \"extra\"]\n[tools.echo]\npermission = \"always_ask\"\n",
    )
    .unwrap();
    let registry = host.reload().await.unwrap();
    let counter = registry.get("counter").unwrap();
    assert_eq!(counter.policy().grants.kv, ["default", "extra"]);
    assert_eq!(
        registry.get("echo").unwrap().policy().permission,
        toolhost::config::Permission::AlwaysAsk
    );
    assert!(
        !std::sync::Arc::ptr_eq(before.get("counter").unwrap(), counter),
        "a new policy is a new tool"
    );
    assert_eq!(
        host.config().tools["counter"].kv.as_deref().unwrap().len(),
        2
    );

    // A config that does not parse, or needs a bigger pool, changes nothing.
    std::fs::write(&config, "[tools.echo]\npermision = \"always_ask\"\n").unwrap();
    let err = host.reload().await.unwrap_err();
    assert!(format!("{err:#}").contains("permision"), "{err:#}");
    std::fs::write(&config, "[defaults]\nmemory_mb = 4000\n").unwrap();
    let err = host.reload().await.unwrap_err();
    assert!(format!("{err:#}").contains("restart"), "{err:#}");
    assert_eq!(
        host.registry().get("echo").unwrap().policy().permission,
        toolhost::config::Permission::AlwaysAsk
    );
    assert_eq!(
        host.config().tools["counter"].kv.as_deref().unwrap().len(),
        2
    );
}

#[tokio::test]
async fn a_call_running_through_a_reload_finishes_on_its_version() {
    let (dir, host) = host(&["slow"], "").await;
    let host = std::sync::Arc::new(host);
    let running = {
        let host = host.clone();
        tokio::spawn(async move { host.call("slow", json!({"ms": 1500}), &live()).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // Another tool under the same name: echo, which needs `text`.
    std::fs::copy(artifact("echo"), dir.path().join("tools/slow.wasm")).unwrap();
    let registry = host.reload().await.unwrap();
    assert!(registry.failures().is_empty(), "{:?}", registry.failures());

    let old = running.await.unwrap().unwrap();
    assert!(!old.is_error, "{:?}", old.result);
    assert_eq!(
        old.result,
        json!("slow"),
        "the running call kept its version"
    );
    let new = host
        .call("slow", json!({"text": "new version"}), &live())
        .await
        .unwrap();
    assert_eq!(
        new.result,
        json!("new version"),
        "the next call uses the new one"
    );
}

#[tokio::test]
async fn a_reloaded_tool_runs_baseline_code_until_its_optimized_code_is_swapped_in() {
    let (dir, host) = host(&["echo", "trap"], "").await;
    let mut changes = host.tool_changes();
    assert_eq!(
        host.registry().get("echo").unwrap().code_tier(),
        CodeTier::Optimized,
        "a start compiles with Cranelift"
    );

    // A new version no cache holds: callable at once on baseline code.
    std::fs::write(dir.path().join("tools/echo.wasm"), fresh_copy("echo")).unwrap();
    let registry = host.reload().await.unwrap();
    let echo = registry.get("echo").unwrap().clone();
    assert_eq!(echo.code_tier(), CodeTier::Baseline);
    assert_echoes(&host, "baseline").await;
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();

    // Then its optimized code replaces it in place: same tool, same
    // metadata, no change for listings to announce.
    host.engine().wait_optimized().await;
    assert_eq!(echo.code_tier(), CodeTier::Optimized);
    assert!(std::sync::Arc::ptr_eq(
        &echo,
        host.registry().get("echo").unwrap()
    ));
    assert!(!changes.has_changed().unwrap());
    assert_echoes(&host, "optimized").await;
    // The untouched tool never left its optimized code.
    assert_eq!(
        registry.get("trap").unwrap().code_tier(),
        CodeTier::Optimized
    );
}

#[tokio::test]
async fn a_server_start_serves_baseline_code_for_what_the_cache_lacks() {
    let dir = host_dir(&["trap"], "");
    std::fs::write(dir.path().join("tools/echo.wasm"), fresh_copy("echo")).unwrap();
    let host = Host::builder(dir.path())
        .cache_dir(cache_dir())
        .tiering(Tiering::BaselineFirst)
        .build()
        .await
        .unwrap();
    let registry = host.registry();
    let echo = registry.get("echo").unwrap();
    assert_eq!(echo.code_tier(), CodeTier::Baseline, "no cache held it");
    assert_eq!(
        registry.get("trap").unwrap().code_tier(),
        CodeTier::Optimized,
        "the shared cache holds it"
    );
    assert_echoes(&host, "at once").await;

    host.engine().wait_optimized().await;
    assert_eq!(echo.code_tier(), CodeTier::Optimized);
    assert_echoes(&host, "later").await;
}

#[tokio::test]
async fn baseline_code_keeps_the_sandbox_limits() {
    let config = "[defaults]\ntimeout_ms = 1000\nmemory_mb = 32\n";
    let (dir, host) = host(&["spin", "hog", "echo"], config).await;
    for tool in ["spin", "hog"] {
        std::fs::write(
            dir.path().join(format!("tools/{tool}.wasm")),
            fresh_copy(tool),
        )
        .unwrap();
    }
    let registry = host.reload().await.unwrap();
    for tool in ["spin", "hog"] {
        let tier = registry.get(tool).unwrap().code_tier();
        assert_eq!(tier, CodeTier::Baseline, "{tool}");
    }
    // Both calls instantiate at once, long before a Cranelift compile ends.
    let (hog_session, spin_session) = (live(), live());
    let (hog, spin) = tokio::join!(
        host.call("hog", json!({}), &hog_session),
        host.call("spin", json!({}), &spin_session)
    );
    for (tool, result, needle) in [("hog", hog, "32 MiB"), ("spin", spin, "1000ms")] {
        let result = result.unwrap();
        assert!(result.is_error, "{tool}");
        let text = result.result.as_str().unwrap();
        assert!(text.contains(needle), "{tool}: {text}");
    }
    host.engine().wait_optimized().await;
    assert_echoes(&host, "still here").await;
}

/// Call `echo` with `text` and check it answers with the same text.
async fn assert_echoes(host: &Host, text: &str) {
    let result = host
        .call("echo", json!({ "text": text }), &live())
        .await
        .unwrap_or_else(|e| panic!("echo `{text}`: {e}"));
    assert_eq!(result.result, json!(text));
}

#[tokio::test]
async fn version_numbers_survive_a_restart_and_one_shot_loads_record_none() {
    let dir = host_dir(&["echo", "trap"], "");
    let number = |host: &Host| host.latest().pin().version;
    let first = load(dir.path()).await;
    assert_eq!(number(&first), 1);
    drop(first);
    let again = load(dir.path()).await;
    assert_eq!(number(&again), 1, "the same tools keep their number");
    drop(again);

    // A one-shot load of one tool runs the newest recorded version's echo
    // and records nothing.
    let only = Host::builder(dir.path())
        .cache_dir(cache_dir())
        .only("echo")
        .build()
        .await
        .unwrap();
    assert_eq!(number(&only), 1);
    let result = only
        .call("echo", json!({ "text": "v" }), &live())
        .await
        .unwrap();
    assert_eq!(result.call.agent.version, 1);
    drop(only);

    std::fs::copy(artifact("context"), dir.path().join("tools/echo.wasm")).unwrap();
    let changed = load(dir.path()).await;
    assert_eq!(number(&changed), 2, "changed tools make the next number");
    let records = changed.agent_versions("default").unwrap();
    assert_eq!(
        records.iter().map(|r| r.version).collect::<Vec<_>>(),
        [1, 2]
    );
    let diff = toolhost::agents::VersionDiff::between(&records[0], &records[1]);
    assert_eq!(diff.changed.keys().collect::<Vec<_>>(), ["echo"]);
    assert!(diff.added.is_empty() && diff.removed.is_empty());
}
