//! The `toolhost` binary, run as a user would.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::host_dir;
use serde_json::{Value, json};

fn toolhost(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run toolhost")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn call_prints_the_result_and_exits_zero() {
    let dir = host_dir(&["echo"], "");
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"hi"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hi\n");

    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "echo",
            "--input",
            r#"{"text":"hi"}"#,
            "--json",
        ],
    );
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["result"], "hi");
    assert_eq!(envelope["toolName"], "echo");
}

#[test]
fn refused_calls_exit_two_with_a_message() {
    let dir = host_dir(&["echo"], "");
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--input", r#"{"text":1}"#],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("`echo`") && err.contains("/text"), "{err}");

    let out = toolhost(dir.path(), &["tool", "call", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown tool `nope`"),
        "{}",
        stderr(&out)
    );

    let out = toolhost(dir.path(), &["tool", "call", "echo", "--input", "{bad"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not valid JSON"));
}

#[test]
fn refused_calls_print_json_with_json() {
    let dir = host_dir(&["echo"], "");
    let refused = |args: &[&str]| {
        let out = toolhost(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let body: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
        assert_eq!(body["ok"], false, "{body}");
        body["error"].clone()
    };
    let error = refused(&["tool", "call", "nope", "--json"]);
    assert_eq!(error["code"], "unknown_tool");
    assert!(error["message"].as_str().unwrap().contains("`nope`"));
    assert_eq!(error["availableTools"], serde_json::json!(["echo"]));

    let error = refused(&["tool", "call", "echo", "-i", r#"{"text":1}"#, "--json"]);
    assert_eq!(error["code"], "invalid_tool_input");
    assert_eq!(error["errors"][0]["pointer"], "/text", "{error}");
}

/// The index of the compile cache's files with the tool names each gave.
fn recorded_names(dir: &Path) -> Vec<String> {
    let index = dir.join(".toolhost/cache/files");
    let mut names: Vec<String> = std::fs::read_dir(&index)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .flat_map(|text| {
                    text.lines()
                        .filter_map(|l| l.strip_prefix("names:"))
                        .flat_map(|l| l.split_whitespace().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn compilations(dir: &Path) -> usize {
    std::fs::read_dir(dir.join(".toolhost/cache"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_one_shot_call_compiles_only_the_file_that_gives_the_tool() {
    let dir = host_dir(&["echo", "counter", "plain_shapes", "bad_schema"], "");
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "-i", r#"{"text":"hi"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hi\n");
    assert!(
        !stderr(&out).contains("bad_schema"),
        "the broken file was not loaded: {}",
        stderr(&out)
    );
    assert_eq!(compilations(dir.path()), 1, "echo alone was compiled");
    assert_eq!(recorded_names(dir.path()), ["echo"]);

    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "plain_shapes_sum_list",
            "-i",
            r#"{"items":[1,2]}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(compilations(dir.path()), 2, "and then the plain component");
    let out = toolhost(dir.path(), &["inspect", "counter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(compilations(dir.path()), 3);

    // A name no file can give loads everything, so the error lists every tool.
    let out = toolhost(dir.path(), &["tool", "call", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad_schema"), "the whole folder loaded: {err}");
    for tool in ["counter", "echo", "plain_shapes_sum_list"] {
        assert!(err.contains(tool), "{tool}: {err}");
    }
    let names = recorded_names(dir.path());
    assert_eq!(names.len(), 15, "every file's names: {names:?}");

    // The folder-wide checks see the files a call leaves out.
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[tools.plain_shapes_nope]\nenabled = false\n",
    )
    .unwrap();
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "-i", r#"{"text":"hi"}"#],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("[tools.plain_shapes_nope]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tool_errors_exit_one() {
    let dir = host_dir(&["trap"], "");
    let out = toolhost(dir.path(), &["tool", "call", "trap"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("trapped"), "{}", stdout(&out));
}

#[test]
fn approval_comes_from_the_flag() {
    let dir = host_dir(&["echo"], "[tools.echo]\npermission = \"always_ask\"\n");
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"x"}"#],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--approve"), "{}", stderr(&out));
    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "echo",
            "--input",
            r#"{"text":"x"}"#,
            "--approve",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn dry_run_and_as_of_flags() {
    let dir = host_dir(&["publish_release", "query_telemetry"], "");
    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "publish_release",
            "--input",
            r#"{"version":"2.0.0"}"#,
            "--dry-run",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["stubbed"], true);
    assert_eq!(envelope["result"]["published"], false);

    let input = r#"{"since":"2026-01-01T00:00:00Z","until":"2026-03-01T00:00:00Z"}"#;
    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "query_telemetry",
            "--input",
            input,
            "--as-of",
            "2026-02-01T00:00:00Z",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("later than"), "{}", stderr(&out));

    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "query_telemetry",
            "--input",
            input,
            "--as-of",
            "yesterday",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--as-of"), "{}", stderr(&out));
}

#[test]
fn workspace_flag_keeps_files() {
    let dir = host_dir(&["notes"], "[tools.notes]\nworkspace = \"write\"\n");
    let ws = dir.path().join("ws");
    let ws_arg = ws.to_str().unwrap();
    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "notes",
            "--workspace",
            ws_arg,
            "--input",
            r#"{"action":"add","title":"a","body":"b"}"#,
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(ws.join("notes/a.md").is_file());
}

/// One-shot calls in fresh sessions share the state root, which lives
/// under the host directory's state folder; `inspect` shows the grant.
#[test]
fn one_shot_calls_share_the_state_root() {
    let dir = host_dir(&["journal"], "[tools.journal]\nstate = \"write\"\n");
    for entry in ["first", "second"] {
        let input = json!({ "entry": entry }).to_string();
        let out = toolhost(dir.path(), &["tool", "call", "journal", "--input", &input]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
    let out = toolhost(
        dir.path(),
        &["tool", "call", "journal", "--input", "{}", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let texts: Vec<&Value> = envelope["result"]["latest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| &entry["text"])
        .collect();
    assert_eq!(texts, [&json!("first"), &json!("second")], "{envelope}");
    assert_eq!(envelope["result"]["stateRoot"], "/state");
    assert!(
        dir.path()
            .join(".toolhost/state-root/journal.txt")
            .is_file()
    );

    let out = toolhost(dir.path(), &["inspect", "journal"]);
    let text = stdout(&out);
    assert!(
        text.contains("granted: state read-write (read-only for read calls)"),
        "{text}"
    );
}

#[test]
fn tool_output_never_reaches_host_stdout() {
    let dir = host_dir(&["chatty"], "");
    let out = toolhost(
        dir.path(),
        &["tool", "call", "chatty", "--input", r#"{"bytes":1000}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
}

#[test]
fn list_check_and_inspect() {
    let dir = host_dir(
        &["echo", "manage_pr", "bad_schema", "word_count", "counter"],
        "[tools.manage_pr]\nworkspace = \"read\"\n",
    );
    let out = toolhost(dir.path(), &["tools", "list"]);
    assert!(out.status.success());
    let table = stdout(&out);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(
        table.contains("manage_pr") && table.contains("by-input"),
        "{table}"
    );
    assert!(
        stderr(&out).contains("bad_schema"),
        "load failures are reported"
    );

    let out = toolhost(dir.path(), &["tools", "list", "--json"]);
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listing["tools"].as_array().unwrap().len(), 4);
    assert_eq!(listing["failures"][0]["tool"], "bad_schema");

    let out = toolhost(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("FAIL") && stdout(&out).contains("bad_schema.wasm"));

    let out = toolhost(dir.path(), &["inspect", "manage_pr"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("wasi:filesystem") && text.contains("workspace read-only"),
        "{text}"
    );
    assert!(text.contains("by-input"));
    assert!(!text.contains("prompts"), "{text}");
    assert!(!text.contains("resources"), "{text}");

    let out = toolhost(dir.path(), &["inspect", "word_count"]);
    let text = stdout(&out);
    assert!(
        text.contains("word_count_report(path*, style) Ask for a file's word count"),
        "{text}"
    );
    let out = toolhost(dir.path(), &["inspect", "counter"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "resources (for MCP clients):\n  counter://{name} [text/plain] A counter's value."
        ),
        "{text}"
    );

    let file = dir.path().join("tools/echo.wasm");
    let out = toolhost(dir.path(), &["inspect", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let inspected: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inspected["name"], "echo");
    assert_eq!(inspected["prompts"], json!([]));
    assert_eq!(inspected["resources"], json!([]));
    assert_eq!(inspected["resourceTemplates"], json!([]));
    assert_eq!(inspected["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn config_errors_name_key_and_line() {
    let dir = host_dir(&["echo"], "name = \"demo\"\n[tools.echo]\ntimout_ms = 5\n");
    let out = toolhost(dir.path(), &["tools", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("timout_ms") && err.contains("line 3"), "{err}");
}

#[test]
fn inspect_a_bare_file_name_loads_only_that_file() {
    // The folder also holds a broken tool and the config names another tool:
    // inspecting one file must not depend on either.
    let dir = host_dir(
        &["echo", "bad_schema"],
        "[tools.elsewhere]\nenabled = false\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["inspect", "echo.wasm", "--dir", ".."])
        .current_dir(dir.path().join("tools"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("tool:        echo"),
        "{}",
        stdout(&out)
    );
}

fn serve(dir: &Path, token: &str) -> common::process::Served {
    common::process::serve(dir, &[("TOOLHOST_TOKEN", token)])
}

/// One HTTP/1.1 request with `Connection: close`; returns the body.
fn http_post(url: &str, path: &str, token: &str, body: &str) -> String {
    use std::io::{Read as _, Write as _};
    let addr = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut response = String::new();
    // A connection the server drops mid-call reads as an empty answer.
    let _ = stream.read_to_string(&mut response);
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// `serve` raises its soft open-file limit to the hard one (connections,
/// tools' files and the stores share it), from a soft limit of 256.
#[test]
fn serve_raises_its_open_file_limit() {
    use std::os::unix::process::CommandExt as _;
    let dir = host_dir(&["echo"], "");
    let served = common::process::serve_with(dir.path(), &[], |command| {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let mut limit = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                    limit.rlim_cur = limit.rlim_max.min(256);
                    libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
                }
                Ok(())
            });
        }
    });
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", served.pid())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a Max open files line");
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers[0], numbers[1], "soft = hard: {line}");
}

#[test]
fn serve_answers_url_calls_and_stops_on_sigterm() {
    let token = "test-token-0123456789";
    let dir = host_dir(&["echo", "notes"], "[tools.notes]\nworkspace = \"write\"\n");
    let mut served = serve(dir.path(), token);
    let remote = |args: &[&str], token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .args(["tool", "call"])
            .args(args)
            .args(["--url", &served.url])
            .env("USER", "tester")
            .env_remove("TOOLHOST_TOKEN");
        if let Some(token) = token {
            command.env("TOOLHOST_TOKEN", token);
        }
        command.output().expect("run toolhost")
    };

    let out = remote(&["echo", "-i", r#"{"text":"over http"}"#], Some(token));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "over http");
    let out = remote(&["echo", "-i", r#"{"text":"x"}"#], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unauthorized"), "{}", stderr(&out));
    let out = remote(&["nope"], Some(token));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown_tool"), "{}", stderr(&out));

    // A session made over HTTP is usable in-process (--session) and remotely.
    let session: Value = serde_json::from_str(&http_post(
        &served.url,
        "/toolhost/v1/sessions",
        token,
        r#"{"auth": {"type": "cli", "user": "tester"}}"#,
    ))
    .expect("a session");
    let id = session["id"].as_str().expect("an id");
    let add = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tool", "call", "notes", "--session", id, "--dir"])
        .arg(dir.path())
        .args([
            "-i",
            r#"{"action":"add","title":"t","body":"from the cli"}"#,
        ])
        .env("USER", "tester")
        .output()
        .expect("run toolhost");
    assert!(add.status.success(), "{}", stderr(&add));
    let read = remote(
        &[
            "notes",
            "--session",
            id,
            "-i",
            r#"{"action":"read","title":"t"}"#,
        ],
        Some(token),
    );
    assert!(stdout(&read).contains("from the cli"), "{}", stderr(&read));
    let missing = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--session", "ses_none"],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("not found"),
        "{}",
        stderr(&missing)
    );

    let pid = served.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = served.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "SIGTERM is a clean stop");
}

#[test]
fn check_lints_and_lists_the_toolset() {
    let config = "[toolset]\ntype = \"agent_toolset\"\n\
                  [toolset.configs]\nweb_fetch = { enabled = false }\nsomeday = { enabled = true }\n\
                  [custom_tools.lookup]\ndescription = \"Looks things up\"\n\
                  input_schema = { type = \"object\", properties = { q = { type = \"string\" } } }\n";
    let dir = host_dir(&["echo"], config);
    let out = toolhost(dir.path(), &["check"]);
    assert!(
        out.status.success(),
        "warnings alone pass: {}",
        stdout(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("ok    grep") && !text.contains("web_fetch"),
        "{text}"
    );
    assert!(
        text.contains("warn  lookup:") && text.contains("[short-description]"),
        "{text}"
    );
    assert!(
        text.contains("`q`") && text.contains("[undocumented-parameter]"),
        "{text}"
    );
    assert!(
        text.contains("configs.someday names no toolset tool"),
        "{text}"
    );
    assert!(
        !text.contains("warn  grep") && !text.contains("warn  echo"),
        "{text}"
    );

    let out = toolhost(dir.path(), &["check", "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));

    let out = toolhost(dir.path(), &["tools", "list"]);
    let table = stdout(&out);
    assert!(
        table.contains("web_search") && table.contains("unavailable"),
        "{table}"
    );
    let out = toolhost(dir.path(), &["tools", "list", "--json"]);
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listing["toolsets"][0]["type"], "agent_toolset_20260401");
    let unavailable = listing["unavailable"].as_array().unwrap();
    assert!(
        unavailable.iter().any(|u| u["name"] == "web_search"),
        "{listing}"
    );

    let out = toolhost(
        dir.path(),
        &["tool", "call", "web_search", "--input", r#"{"query":"x"}"#],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no search engine is configured"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn lock_writes_the_lock_and_reports_changes() {
    let dir = host_dir(&["echo"], "");
    let out = toolhost(dir.path(), &["lock"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("+ echo") && text.contains("1 tools locked, 1 changed"),
        "{text}"
    );
    assert!(dir.path().join("tools.lock").is_file());

    let out = toolhost(dir.path(), &["lock"]);
    assert!(stdout(&out).contains("0 changed"), "{}", stdout(&out));

    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[tools.echo]\nkv = [\"cache\"]\n",
    )
    .unwrap();
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"hi"}"#],
    );
    assert_eq!(out.status.code(), Some(2), "refused while the lock differs");
    assert!(stderr(&out).contains("+ kv cache"), "{}", stderr(&out));
    let out = toolhost(dir.path(), &["lock"]);
    assert!(
        stdout(&out).contains("~ echo: grants: + kv cache"),
        "{}",
        stdout(&out)
    );
    let out = toolhost(
        dir.path(),
        &["tool", "call", "echo", "--input", r#"{"text":"hi"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_plain_component_is_inspected_and_called() {
    let dir = host_dir(&["plain_shapes"], "");
    let file = dir.path().join("tools/plain_shapes.wasm");
    let out = toolhost(dir.path(), &["inspect", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("is a plain component: 13 tools"), "{text}");
    assert!(
        text.contains("function:    test:shapes/text@0.1.0#upper (plain component)"),
        "{text}"
    );
    let out = toolhost(dir.path(), &["inspect", file.to_str().unwrap(), "--json"]);
    let inspected: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inspected["tools"].as_array().unwrap().len(), 13);

    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "plain_shapes_sum_list",
            "-i",
            r#"{"items":[1,2,3]}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"result\": 6"), "{}", stdout(&out));
    let out = toolhost(
        dir.path(),
        &[
            "tool",
            "call",
            "plain_shapes_sum_list",
            "-i",
            r#"{"items":["x"]}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/items/0"), "{}", stderr(&out));
}

/// A server with `shutdown_grace_secs = grace_secs`, running a call of the
/// `slow` tool that takes `ms`; the thread answers the call's response body.
fn serve_a_slow_call(
    grace_secs: u64,
    ms: u64,
) -> (
    tempfile::TempDir,
    common::process::Served,
    std::thread::JoinHandle<String>,
) {
    let token = "test-token-0123456789";
    let config =
        format!("[server]\nshutdown_grace_secs = {grace_secs}\n[tools.slow]\ntimeout_ms = 30000\n");
    let dir = host_dir(&["slow"], &config);
    let served = serve(dir.path(), token);
    let url = served.url.clone();
    let running = std::thread::spawn(move || {
        let body = format!(r#"{{"input": {{"ms": {ms}}}}}"#);
        http_post(&url, "/toolhost/v1/tools/slow", token, &body)
    });
    std::thread::sleep(std::time::Duration::from_millis(400));
    (dir, served, running)
}

#[test]
fn sigterm_lets_running_calls_finish_then_exits_zero() {
    let (_dir, mut served, running) = serve_a_slow_call(20, 1500);
    served.signal(libc::SIGTERM);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let addr = served.url.trim_start_matches("http://").to_string();
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "no new connection is accepted once SIGTERM arrived"
    );
    let answer: Value = serde_json::from_str(&running.join().expect("the call's thread"))
        .expect("the running call got its answer");
    assert_eq!(answer["result"], "slow", "{answer}");
    let status = served
        .wait_for_exit(std::time::Duration::from_secs(10))
        .expect("the server exits once the call is done");
    assert_eq!(status.code(), Some(0), "{}", served.stderr());
    assert!(served.stderr().contains("stopping"), "{}", served.stderr());
}

#[test]
fn calls_still_running_after_the_grace_period_are_dropped() {
    let (_dir, mut served, running) = serve_a_slow_call(1, 20_000);
    let signalled = std::time::Instant::now();
    served.signal(libc::SIGTERM);
    let status = served
        .wait_for_exit(std::time::Duration::from_secs(10))
        .expect("the server exits after the grace period");
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0), "{}", served.stderr());
    assert!(
        took >= std::time::Duration::from_secs(1) && took < std::time::Duration::from_secs(8),
        "exited after {took:?}, grace 1 s"
    );
    assert_eq!(running.join().expect("the call's thread"), "", "no answer");
    assert!(
        served.stderr().contains("shutdown grace"),
        "{}",
        served.stderr()
    );
}
