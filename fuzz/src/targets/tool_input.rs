//! The tool-input path: arbitrary bytes as a call's JSON input, validated
//! against the example tools' schemas and run through the whole pipeline.
//!
//! An input is `<tool>\n<JSON text>`. A first line that names no example
//! tool picks one by its bytes, so every input reaches a schema. Calls run
//! in dry-run sessions (reads run, idempotent and write calls are stubbed
//! with the tool's dry-run result), half of them frozen at an `asOf`
//! instant so time arguments are checked too.
//!
//! Promises checked: the call returns a result or a refusal naming the
//! problem (never a panic, never an internal error), the envelope
//! serializes, and the host still answers a valid call afterwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::json;
use toolhost::{CallError, CallInput, CallOptions, CallResult, Host, Session, SessionSpec};

use crate::fixture::{self, EXAMPLE_GRANTS as CONFIG, EXAMPLE_TOOLS as TOOLS};

/// JSON keywords and the examples' field names and values.
pub(super) const DICTIONARY: &[&[&[u8]]] = &[
    super::JSON_TOKENS,
    &[
        b"0",
        b"-1",
        b"1e999",
        b"-0.0",
        b"18446744073709551616",
        b"\"\\ud800\"",
        b"\"\\u0000\"",
        b"text",
        b"uppercase",
        b"name",
        b"by",
        b"url",
        b"max_bytes",
        b"key",
        b"fail_times",
        b"action",
        b"number",
        b"title",
        b"body",
        b"version",
        b"notes",
        b"since",
        b"until",
        b"metric",
        b"path",
        b"view",
        b"merge",
        b"add",
        b"list",
        b"read",
        b"delete",
        b"cpu",
        b"memory",
        b"2026-01-01T00:00:00Z",
        b"2026-01-01T00:00:00+25:00",
        b"1.0.0-rc.1",
        b"../",
        b"/",
        b"\n",
    ],
];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    host: Arc<Host>,
    /// A plain dry-run session, and one frozen at an instant.
    options: [CallOptions; 2],
    execs: AtomicU64,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = fixture::runtime("tool_input");
        let dir = fixture::host_dir("tool_input", TOOLS, CONFIG);
        let host = fixture::load_host(&runtime, &dir);
        // A workspace the process removes at exit, with a file to count words in.
        let workspace = fixture::scratch_dir("tool_input-workspace");
        std::fs::write(workspace.join("README.md"), "Some words to count.\n")
            .expect("fixture: a file in the workspace");
        let session = |as_of: Option<&str>| {
            let spec = SessionSpec {
                mode: toolhost::SessionMode::DryRun,
                as_of: as_of.map(|t| {
                    toolhost::session::parse_instant(t).expect("fixture: a valid instant")
                }),
                workspace: Some(workspace.clone()),
                ..SessionSpec::default()
            };
            let session = Session::open(spec).expect("fixture: a dry-run session");
            CallOptions::new(Arc::new(session))
        };
        Fixture {
            runtime,
            host,
            options: [session(None), session(Some("2026-02-01T00:00:00Z"))],
            execs: AtomicU64::new(0),
        }
    })
}

/// Run one input: see the module documentation.
pub fn tool_input(data: &[u8]) {
    let fixture = fixture();
    let (line, json) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&data[..0], data),
    };
    let tool = pick_tool(line);
    // Every surface hands the pipeline text it decoded as UTF-8.
    let input = String::from_utf8_lossy(json).into_owned();
    let options = &fixture.options[data.len() % 2];
    let outcome =
        fixture
            .runtime
            .block_on(fixture.host.call(tool, CallInput::Text(input), options));
    let reached_tool = check(tool, &outcome);
    let n = fixture.execs.fetch_add(1, Ordering::Relaxed);
    if reached_tool || n.is_multiple_of(64) {
        still_answers(fixture);
    }
}

/// The tool a first line names, or one picked by its bytes.
fn pick_tool(line: &[u8]) -> &'static str {
    TOOLS
        .iter()
        .find(|t| t.as_bytes() == line)
        .copied()
        .unwrap_or_else(|| {
            let sum = line.iter().map(|&b| usize::from(b)).sum::<usize>();
            TOOLS[sum % TOOLS.len()]
        })
}

/// Check one call's outcome; whether the call reached the tool's code.
fn check(tool: &str, outcome: &Result<std::sync::Arc<CallResult>, CallError>) -> bool {
    match outcome {
        Ok(result) => {
            assert!(result.ok, "`ok` is false in a result: {result:?}");
            assert_eq!(result.call.tool, tool, "the envelope names another tool");
            assert!(
                result.stubbed || result.attempts >= 1,
                "a result that neither ran nor was stubbed: {result:?}"
            );
            if let Err(e) = serde_json::to_string(result) {
                panic!("the envelope does not serialize: {e}");
            }
            if result.is_error {
                assert!(
                    !result.result.is_null() && result.result != json!(""),
                    "an error result says nothing: {result:?}"
                );
            }
            true
        }
        Err(CallError::InvalidInput { errors, .. }) => {
            assert!(!errors.is_empty(), "invalid_tool_input without errors");
            for error in errors {
                assert!(
                    !error.message.trim().is_empty(),
                    "an input error without a message: {errors:?}"
                );
                assert!(
                    error.pointer.is_empty() || error.pointer.starts_with('/'),
                    "an input error's pointer is not a JSON pointer: {errors:?}"
                );
            }
            false
        }
        Err(CallError::Internal(e)) => panic!("an internal error for a tool input: {e:#}"),
        Err(e @ CallError::UnknownTool { .. }) => panic!("an example tool is unknown: {e}"),
        Err(other) => {
            assert!(
                !other.to_string().trim().is_empty(),
                "a refusal without a message: {other:?}"
            );
            true
        }
    }
}

/// The host still answers a valid call with the right result.
fn still_answers(fixture: &Fixture) {
    let call = fixture
        .host
        .call("echo", json!({"text": "still here"}), &fixture.options[0]);
    match fixture.runtime.block_on(call) {
        Ok(result) if !result.is_error && result.result == json!("still here") => {}
        other => panic!("the host no longer answers a valid call: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_line_names_the_tool_or_picks_one() {
        assert_eq!(pick_tool(b"notes"), "notes");
        assert_eq!(pick_tool(b""), TOOLS[0]);
        assert!(TOOLS.contains(&pick_tool(b"no such tool")));
    }
}
