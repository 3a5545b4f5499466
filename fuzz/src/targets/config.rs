//! `toolhost.toml` parsing: arbitrary bytes as the config, then what a
//! host does with a config that parses: resolve every tool's policy and
//! load the registry (a tools folder holding `echo`, the built-in toolset,
//! custom tools) with it.
//!
//! Promises checked: parsing returns the config or an error that names the
//! file and says something; a config that parses validates again, gives
//! every tool it names a policy, and loads a registry or fails with a
//! message; every load failure says why.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use toolhost::config::Config;
use toolhost::engine::{EngineOptions, ToolEngine};
use toolhost::registry::Registry;

use crate::fixture;

/// TOML syntax and every key `toolhost.toml` knows.
pub(super) const DICTIONARY: &[&[&[u8]]] = &[&[
    b"[",
    b"]",
    b"[[",
    b"]]",
    b"=",
    b"\"",
    b"'''",
    b"{",
    b"}",
    b",",
    b"\n",
    b"#",
    b".",
    b"true",
    b"false",
    b"-1",
    b"0",
    b"18446744073709551616",
    b"1e999",
    b"nan",
    b"inf",
    b"1979-05-27T07:32:00Z",
    b"name",
    b"[defaults]",
    b"[tools.echo]",
    b"[tools.",
    b"[custom_tools.",
    b"[server]",
    b"[toolset]",
    b"[[toolset]]",
    b"enabled",
    b"permission",
    b"\"always_ask\"",
    b"\"always_allow\"",
    b"timeout_ms",
    b"memory_mb",
    b"workspace",
    b"\"read\"",
    b"\"write\"",
    b"\"none\"",
    b"kv",
    b"http",
    b"env",
    b"max_input_bytes",
    b"max_output_bytes",
    b"max_stdio_bytes",
    b"max_http_requests",
    b"max_http_response_bytes",
    b"description",
    b"effect",
    b"\"idempotent\"",
    b"\"by-input\"",
    b"input_schema",
    b"listen",
    b"token",
    b"approval_timeout_ms",
    b"custom_tool_timeout_ms",
    b"session_retention_secs",
    b"max_body_bytes",
    b"max_sessions",
    b"max_waiting_calls",
    b"session_history_mb",
    b"history_mb",
    b"allowed_origins",
    b"type",
    b"\"agent_toolset\"",
    b"\"agent_toolset_20260401\"",
    b"default_config",
    b"configs",
    b"permission_policy",
    b"\"https://example.com\"",
    b"\"http://[::1]:8080\"",
    b"\"*.example.com\"",
    b"web_fetch",
    b"bash",
    b"list",
    b"delete",
    b"grep",
]];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    engine: ToolEngine,
    tools_dir: PathBuf,
    /// Loaded once with the whole toolset, so unchanged tools are reused.
    previous: Registry,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = fixture::runtime("config");
        let dir = fixture::host_dir("config", &["echo"], "");
        let engine = ToolEngine::new(&EngineOptions {
            max_memory_bytes: Config::default().max_memory_bytes(),
            max_instances: 8,
            cache_dir: fixture::cache_dir(),
            cache_max_bytes: toolhost::config::DEFAULT_COMPILE_CACHE_MB << 20,
            shared_cache: None,
        })
        .expect("fixture: the engine starts");
        let tools_dir = dir.join("tools");
        let full = parse("[toolset]\ntype = \"agent_toolset\"\n").expect("fixture: toolset config");
        let previous = runtime
            .block_on(Registry::load(&engine, &tools_dir, &full))
            .expect("fixture: the registry loads");
        assert!(
            previous.failures().is_empty(),
            "fixture: {:?}",
            previous.failures()
        );
        Fixture {
            runtime,
            engine,
            tools_dir,
            previous,
        }
    })
}

fn parse(text: &str) -> anyhow::Result<Config> {
    Config::parse(text, Path::new("toolhost.toml"))
}

/// Run one input: see the module documentation.
pub fn config(data: &[u8]) {
    // `toolhost.toml` is read as UTF-8; other bytes never reach the parser.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = match parse(text) {
        Ok(config) => config,
        Err(error) => {
            let message = format!("{error:#}");
            assert!(
                message.contains("toolhost.toml") && message.len() > "invalid toolhost.toml".len(),
                "a parse error that does not say what is wrong: {message:?}"
            );
            return;
        }
    };
    if let Err(e) = config.validate() {
        panic!("a parsed config no longer validates: {e:#}");
    }
    let _ = config.max_memory_bytes();
    let names = config
        .tools
        .keys()
        .chain(config.custom_tools.keys())
        .map(String::as_str)
        .chain(["echo", "read", "web_fetch", "bash"]);
    for name in names {
        if let Err(e) = config.policy_for(name) {
            panic!("a valid config gives `{name}` no policy: {e:#}");
        }
    }
    if let Some(toolset) = config.declared_toolset() {
        let _ = toolset.to_json();
    }
    check_registry(fixture(), &config);
}

/// Load the registry with `config` and check what it says.
fn check_registry(fixture: &Fixture, config: &Config) {
    let load = Registry::load_reusing(
        &fixture.engine,
        &fixture.tools_dir,
        config,
        Some(&fixture.previous),
    );
    match fixture.runtime.block_on(load) {
        Ok(registry) => {
            for tool in registry.all() {
                if let Err(e) = serde_json::to_string(&tool.to_json()) {
                    panic!("tool `{}` does not list: {e}", tool.name());
                }
            }
            for failure in registry.failures() {
                assert!(
                    !failure.reason.trim().is_empty(),
                    "a load failure without a reason: {failure:?}"
                );
            }
        }
        Err(e) => {
            let message = format!("{e:#}");
            assert!(
                !message.trim().is_empty(),
                "a registry error without a message"
            );
        }
    }
}
