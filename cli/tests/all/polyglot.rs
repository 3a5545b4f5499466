//! The example tools written in Rust, Python and TypeScript (on both JS
//! engines) pass the same tests: `word_count` (a read of the workspace),
//! `counter` (a write to KV with a dry-run result), `fetch_url` (outbound
//! HTTP), `greet` (asking mid-call) and `journal` (the state root). The Python and TypeScript ones are built from `plugins/python` and
//! `plugins/ts` by `toolhost build`, so these tests also cover the command.
//!
//! Without componentize-py or the npm toolchain on `PATH` (`scripts/test`
//! installs both) a language is skipped with a message; with `CI=true` that is
//! a failure.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use common::asker::{Scripted, accept};
use common::server::Server;
use common::{dry_run, live};
use toolhost::artifacts::SessionArtifacts;
use toolhost::ask::ElicitAnswer;
use toolhost::call::UnattendedReminderCalls;
use toolhost::output::ContentBlock;
use toolhost::prompts::{PromptMessage, PromptResult, Role};
use toolhost::resources::ResourceData;
use toolhost::session::{EventKind, NewSession, SessionStore};
use toolhost::tool_metrics::SeriesValue;
use toolhost::{CallOptions, CallWatcher, Host, Progress};

/// One language's build of the examples.
struct Lang {
    /// For messages: `rust`, `python`, `ts (quickjs)`, ….
    label: &'static str,
    /// The tools' name prefix: `""`, `py_` or `ts_`.
    prefix: &'static str,
    /// `(slug, path)` of each of the components.
    tools: Vec<(String, PathBuf)>,
}

const EXAMPLES: [&str; 5] = ["word_count", "counter", "fetch_url", "greet", "journal"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every language whose toolchain is here, built once per test run.
fn languages() -> Vec<&'static Lang> {
    static RUST: OnceLock<Lang> = OnceLock::new();
    static PYTHON: OnceLock<Option<Lang>> = OnceLock::new();
    static QUICKJS: OnceLock<Option<Lang>> = OnceLock::new();
    static STARLINGMONKEY: OnceLock<Option<Lang>> = OnceLock::new();
    let rust = RUST.get_or_init(|| Lang {
        label: "rust",
        prefix: "",
        tools: EXAMPLES
            .iter()
            .map(|slug| (slug.to_string(), PathBuf::from(common::artifact(slug))))
            .collect(),
    });
    let built = [
        PYTHON.get_or_init(|| built("python", "py_", "python", &[])),
        QUICKJS.get_or_init(|| built("ts (quickjs)", "ts_", "ts", &["--js-engine", "quickjs"])),
        STARLINGMONKEY.get_or_init(|| {
            built(
                "ts (starlingmonkey)",
                "ts_",
                "ts",
                &["--js-engine", "starlingmonkey"],
            )
        }),
    ];
    std::iter::once(rust)
        .chain(built.into_iter().flatten())
        .collect()
}

/// `toolhost build plugins/<folder>` into a folder of its own; `None` (or a
/// panic under `CI=true`) when the toolchain is missing.
fn built(label: &'static str, prefix: &'static str, folder: &str, args: &[&str]) -> Option<Lang> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("polyglot")
        .join(label.replace([' ', '(', ')'], ""));
    let output = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("build")
        .arg(repo().join("plugins").join(folder))
        .arg("--out")
        .arg(&out)
        .args(args)
        .output()
        .expect("run toolhost build");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        if common::skip_missing_toolchain(label, &stderr) {
            return None;
        }
        panic!("toolhost build of {label} failed:\n{stderr}");
    }
    let tools = EXAMPLES
        .iter()
        .map(|slug| {
            let name = format!("{prefix}{slug}");
            let path = out.join(format!("{name}.wasm"));
            assert!(path.is_file(), "{label}: no {}\n{stderr}", path.display());
            (name, path)
        })
        .collect();
    Some(Lang {
        label,
        prefix,
        tools,
    })
}

impl Lang {
    fn name(&self, example: &str) -> String {
        format!("{}{example}", self.prefix)
    }

    /// A host with this language's three tools and `config`, where `{p}`
    /// stands for the prefix.
    async fn host(&self, config: &str) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        std::fs::create_dir(&tools).unwrap();
        for (name, path) in &self.tools {
            std::fs::copy(path, tools.join(format!("{name}.wasm"))).unwrap();
        }
        std::fs::write(
            dir.path().join("toolhost.toml"),
            config.replace("{p}", self.prefix),
        )
        .unwrap();
        let host = common::load(dir.path()).await;
        let registry = host.registry();
        let failures = registry.failures();
        assert!(failures.is_empty(), "{}: {failures:?}", self.label);
        (dir, host)
    }
}

/// The progress reports a call made, as (done, total, message).
#[derive(Default)]
struct Reports(Mutex<Vec<(f64, Option<f64>, String)>>);

impl Reports {
    fn take(&self) -> Vec<(f64, Option<f64>, String)> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

impl CallWatcher for Reports {
    fn progress(&self, report: &Progress) {
        let message = report.message.clone().unwrap_or_default();
        self.0
            .lock()
            .unwrap()
            .push((report.progress, report.total, message));
    }
}

fn text_of(result: &Value) -> String {
    match result {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn word_count_reads_the_workspace_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let (_dir, host) = lang
            .host("[tools.{p}word_count]\nworkspace = \"read\"\n")
            .await;
        let tool = lang.name("word_count");
        let reports = Arc::new(Reports::default());
        let options = live().with_watcher(reports.clone());
        let workspace = options.session.workspace().unwrap();
        std::fs::create_dir_all(workspace.join("docs")).unwrap();
        std::fs::write(workspace.join("docs/a.txt"), "one two\nthree  four\n\nfive").unwrap();

        let counted = host
            .call(&tool, json!({"path": "docs/a.txt"}), &options)
            .await
            .unwrap();
        assert!(!counted.is_error, "{label}: {:?}", counted.result);
        assert_eq!(
            counted.result,
            json!({"path": "docs/a.txt", "lines": 3, "words": 5, "bytes": 25}),
            "{label}"
        );
        assert_eq!(
            reports.take(),
            [
                (1.0, Some(2.0), "read the file".to_string()),
                (2.0, Some(2.0), "counted".to_string())
            ],
            "{label}: the SDK's progress helper"
        );

        let missing = host
            .call(&tool, json!({"path": "nope.txt"}), &options)
            .await
            .unwrap();
        assert!(missing.is_error, "{label}");
        let text = text_of(&missing.result);
        assert!(
            text.contains("no file named nope.txt in the workspace"),
            "{label}: {text}"
        );

        for escape in ["../secret", "/etc/passwd", "docs/../../x"] {
            let refused = host
                .call(&tool, json!({"path": escape}), &options)
                .await
                .unwrap();
            assert!(refused.is_error, "{label}: {escape}");
            let text = text_of(&refused.result);
            assert!(
                text.contains("invalid input") && text.contains(escape),
                "{label}: {text}"
            );
        }

        for bad in [json!({"path": 5}), json!({}), json!({"path": ""})] {
            let err = host.call(&tool, bad.clone(), &options).await.unwrap_err();
            assert!(
                err.to_string().contains("invalid_tool_input") || err.to_string().contains("input"),
                "{label}: {bad}: {err}"
            );
        }

        // A read runs in a dry-run session.
        let dry = dry_run();
        let ran = host
            .call(&tool, json!({"path": "nope.txt"}), &dry)
            .await
            .unwrap();
        assert!(!ran.stubbed && ran.is_error, "{label}: {:?}", ran.result);
    }
}

#[tokio::test]
async fn word_count_offers_a_prompt_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let (_dir, host) = lang.host("").await;
        let tool = lang.name("word_count");
        let name = lang.name("word_count_report");
        let registry = host.registry();
        let offered: Vec<_> = registry
            .prompts()
            .filter(|(tool, _)| tool.name().ends_with("word_count"))
            .map(|(tool, prompt)| (tool.name().to_string(), prompt.clone()))
            .collect();
        assert_eq!(offered.len(), 1, "{label}: {offered:?}");
        let (offered_by, prompt) = &offered[0];
        assert_eq!(offered_by, &tool, "{label}");
        assert_eq!(prompt.name, name, "{label}");
        let arguments: Vec<_> = prompt
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(arguments, [("path", true), ("style", false)], "{label}");

        let args = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let text = |result: &PromptResult| match &result.messages[..] {
            [
                PromptMessage {
                    role: Role::User,
                    content: ContentBlock::Text { text },
                },
            ] => text.clone(),
            other => panic!("{label}: {other:?}"),
        };
        let brief = host
            .get_prompt(&name, &args(&[("path", "notes.md")]))
            .await
            .unwrap();
        assert_eq!(
            text(&brief),
            format!(
                "Use {tool} on `notes.md` and give a brief report of its lines, words and bytes."
            ),
            "{label}"
        );
        let detailed = host
            .get_prompt(&name, &args(&[("path", "a.md"), ("style", "detailed")]))
            .await
            .unwrap();
        assert!(text(&detailed).contains("a detailed report"), "{label}");

        let missing = host.get_prompt(&name, &args(&[])).await.unwrap_err();
        assert_eq!(missing.code(), "invalid_prompt_arguments", "{label}");
        assert!(
            missing.to_string().contains("`path` is required"),
            "{label}: {missing}"
        );
        let unknown = host
            .get_prompt(&name, &args(&[("path", "a"), ("colour", "red")]))
            .await
            .unwrap_err();
        assert!(
            unknown.to_string().contains("no argument `colour`"),
            "{label}: {unknown}"
        );

        let completed = host
            .complete_prompt_argument(&name, "style", "d")
            .await
            .unwrap();
        assert_eq!(completed.values, ["detailed"], "{label}");
        assert!(!completed.has_more(), "{label}");
        let none = host
            .complete_prompt_argument(&name, "path", "no")
            .await
            .unwrap();
        assert!(none.values.is_empty(), "{label}: {none:?}");
    }
}

/// A prompt request gets the tool's grants read-only: `counter`'s prompt
/// reads its bucket when granted, and is refused inside without a grant.
#[tokio::test]
async fn counter_offers_a_prompt_that_reads_its_bucket() {
    let (_dir, host) = common::host(&["counter"], "[tools.counter]\nkv = [\"default\"]\n").await;
    host.call("counter", json!({"name": "visits", "by": 41}), &live())
        .await
        .unwrap();
    let args: BTreeMap<String, String> = [("name".to_string(), "visits".to_string())].into();
    let status = host.get_prompt("counter_status", &args).await.unwrap();
    assert_eq!(
        status.messages[0].content,
        ContentBlock::Text {
            text: "The counter `visits` is at 41. Should it go up?".into()
        }
    );

    let (_dir, ungranted) = common::host(&["counter"], "").await;
    let refused = ungranted
        .get_prompt("counter_status", &args)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "prompt_failed");
    assert!(
        refused.to_string().contains("cannot read the counter"),
        "{refused}"
    );
}

#[tokio::test]
async fn counter_writes_kv_and_is_stubbed_in_dry_run_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let (_dir, host) = lang.host("[tools.{p}counter]\nkv = [\"default\"]\n").await;
        let tool = lang.name("counter");
        let options = live();
        let first = host
            .call(&tool, json!({"name": "visits"}), &options)
            .await
            .unwrap();
        assert_eq!(
            first.result,
            json!({"name": "visits", "value": 1}),
            "{label}"
        );
        let second = host
            .call(&tool, json!({"name": "visits", "by": -5}), &options)
            .await
            .unwrap();
        assert_eq!(
            second.result,
            json!({"name": "visits", "value": -4}),
            "{label}"
        );

        let dry = dry_run();
        let stubbed = host
            .call(&tool, json!({"name": "visits"}), &dry)
            .await
            .unwrap();
        assert!(stubbed.stubbed, "{label}");
        assert_eq!(
            stubbed.result,
            json!({"name": "visits", "value": null, "dryRun": true}),
            "{label}"
        );
        let after = host
            .call(&tool, json!({"name": "visits", "by": 0}), &options)
            .await
            .unwrap();
        assert_eq!(
            after.result["value"],
            json!(-4),
            "{label}: the stub wrote nothing"
        );

        for bad in [
            json!({"name": ""}),
            json!({"name": "x", "by": "two"}),
            json!({"name": "x", "by": 1.5}),
            json!({"by": 1}),
        ] {
            let err = host.call(&tool, bad.clone(), &options).await.unwrap_err();
            assert!(err.to_string().contains("input"), "{label}: {bad}: {err}");
        }
    }
}

/// Each counter is a resource (`counter://{name}`, `py-counter://…`,
/// `ts-counter://…`) read with the tool's grant, read-only; a call announces
/// its counter's address, percent-encoded, to the host's resource updates.
#[tokio::test]
async fn counter_offers_its_counters_as_resources_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let (_dir, host) = lang.host("[tools.{p}counter]\nkv = [\"default\"]\n").await;
        let tool = lang.name("counter");
        let scheme = format!("{}counter", lang.prefix.replace('_', "-"));
        let registry = host.registry();
        let templates: Vec<_> = registry
            .resource_templates()
            .filter(|(t, _)| t.name() == tool)
            .map(|(_, spec)| (spec.uri_template.clone(), spec.about.media_type.clone()))
            .collect();
        assert_eq!(
            templates,
            [(
                format!("{scheme}://{{name}}"),
                Some("text/plain".to_string())
            )],
            "{label}"
        );
        drop(registry);

        let mut updates = host.resource_updates();
        host.call(&tool, json!({"name": "a b", "by": 41}), &live())
            .await
            .unwrap();
        assert_eq!(
            updates.try_recv().ok(),
            Some(format!("{scheme}://a%20b")),
            "{label}"
        );
        let read = host
            .read_resource(&format!("{scheme}://a%20b"))
            .await
            .unwrap();
        assert_eq!(read.len(), 1, "{label}: {read:?}");
        assert_eq!(read[0].uri, format!("{scheme}://a%20b"), "{label}");
        assert_eq!(read[0].media_type.as_deref(), Some("text/plain"), "{label}");
        assert_eq!(read[0].data, ResourceData::Text("41".into()), "{label}");
        let missing = host
            .read_resource(&format!("{scheme}://nobody"))
            .await
            .unwrap_err();
        assert_eq!(missing.code(), "resource_not_found", "{label}: {missing}");
        assert!(
            missing
                .to_string()
                .contains(&format!("tool `{tool}` found none")),
            "{label}: {missing}"
        );
        let dry = host
            .call(&tool, json!({"name": "a b"}), &dry_run())
            .await
            .unwrap();
        assert!(dry.stubbed, "{label}");
        assert!(
            updates.try_recv().is_err(),
            "{label}: a stubbed call announced"
        );
    }
}

/// Without a grant, reading a counter fails inside the component, and the
/// error names the tool.
#[tokio::test]
async fn a_resource_read_gets_no_grant_the_tool_lacks() {
    let (_dir, host) = common::host(&["counter"], "").await;
    let refused = host.read_resource("counter://visits").await.unwrap_err();
    assert_eq!(refused.code(), "resource_failed", "{refused}");
    assert!(
        refused.to_string().contains("(tool `counter`) failed"),
        "{refused}"
    );
}

/// `greet` asks the user their name and the model for a greeting, with
/// each SDK's helpers; a declined form ends it politely.
#[tokio::test]
async fn greet_asks_the_user_and_the_model_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let (_dir, host) = lang
            .host("[tools.{p}greet]\nask = [\"user\", \"model\"]\n")
            .await;
        let tool = lang.name("greet");
        let ada = Scripted::after(Duration::ZERO, accept(&[("name", "Ada")]));
        let greeted = host
            .call(&tool, json!({}), &live().with_asker(ada))
            .await
            .unwrap();
        assert!(!greeted.is_error, "{label}: {:?}", greeted.result);
        assert_eq!(
            greeted.result,
            json!("you said: Write a one-line greeting for Ada."),
            "{label}"
        );
        let shy = Scripted::after(Duration::ZERO, ElicitAnswer::Decline);
        let declined = host
            .call(&tool, json!({}), &live().with_asker(shy))
            .await
            .unwrap();
        assert_eq!(declined.result, json!("No name, no greeting."), "{label}");
    }
}

#[tokio::test]
async fn counter_without_a_kv_grant_is_refused_inside_the_tool() {
    for lang in languages() {
        let (_dir, host) = lang.host("").await;
        let denied = host
            .call(&lang.name("counter"), json!({"name": "n"}), &live())
            .await
            .unwrap();
        assert!(denied.is_error, "{}: {:?}", lang.label, denied.result);
        let text = text_of(&denied.result);
        assert!(
            text.contains("key-value: access denied"),
            "{}: {text}",
            lang.label
        );
    }
}

#[tokio::test]
async fn fetch_url_reaches_only_granted_hosts_in_every_language() {
    let server = Server::start(|head| {
        let body = "x".repeat(100);
        if head.starts_with("GET /moved ") {
            b"HTTP/1.1 302 Found\r\nLocation: /page\r\nContent-Length: 0\r\n\r\n".to_vec()
        } else {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
    })
    .await;
    for lang in languages() {
        let label = lang.label;
        let config = format!(
            "[tools.{{p}}fetch_url]\nhttp = [\"{}\"]\nmax_output_bytes = 4000\n",
            server.grant()
        );
        let (_dir, host) = lang.host(&config).await;
        let tool = lang.name("fetch_url");
        let fetched = host
            .call(&tool, json!({"url": server.url("/moved")}), &live())
            .await
            .unwrap();
        assert!(!fetched.is_error, "{label}: {:?}", fetched.result);
        assert_eq!(fetched.result["status"], json!(200), "{label}");
        assert_eq!(fetched.result["url"], json!(server.url("/page")), "{label}");
        assert_eq!(
            fetched.result["contentType"],
            json!("text/plain"),
            "{label}"
        );
        assert_eq!(fetched.result["body"], json!("x".repeat(100)), "{label}");
        assert_eq!(fetched.result["truncated"], json!(false), "{label}");
        // Every SDK's resource-link block arrives as the same content block.
        let link = fetched.output.content.last();
        assert_eq!(
            link,
            Some(&ContentBlock::ResourceLink {
                uri: server.url("/page"),
                name: "page".into(),
                description: Some("The fetched page, at its final URL.".into()),
                media_type: Some("text/plain".into()),
            }),
            "{label}"
        );

        let cut = host
            .call(
                &tool,
                json!({"url": server.url("/page"), "max_bytes": 10}),
                &live(),
            )
            .await
            .unwrap();
        assert_eq!(cut.result["body"], json!("x".repeat(10)), "{label}");
        assert_eq!(cut.result["truncated"], json!(true), "{label}");

        let refused = host
            .call(&tool, json!({"url": "http://127.0.0.1:9/"}), &live())
            .await
            .unwrap();
        assert!(refused.is_error, "{label}: {:?}", refused.result);

        let err = host
            .call(
                &tool,
                json!({"url": server.url("/"), "max_bytes": 0}),
                &live(),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("max_bytes"), "{label}: {err}");
    }
}

#[tokio::test]
async fn limits_apply_to_every_language() {
    let server = Server::start(|_| {
        let body = "y".repeat(5000);
        format!("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n{body}").into_bytes()
    })
    .await;
    for lang in languages() {
        let label = lang.label;
        let config = format!(
            "[tools.{{p}}fetch_url]\nhttp = [\"{}\"]\nmax_output_bytes = 1000\n\
             [tools.{{p}}word_count]\nmax_input_bytes = 64\n",
            server.grant()
        );
        let (_dir, host) = lang.host(&config).await;
        let over = host
            .call(
                &lang.name("fetch_url"),
                json!({"url": server.url("/")}),
                &live(),
            )
            .await
            .unwrap();
        assert!(over.is_error, "{label}");
        let text = text_of(&over.result);
        assert!(text.contains("max_output_bytes"), "{label}: {text}");

        let err = host
            .call(
                &lang.name("word_count"),
                json!({"path": "a".repeat(100)}),
                &live(),
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("max_input_bytes"),
            "{label}: {err}"
        );
    }
}

#[tokio::test]
async fn every_language_declares_the_same_contract() {
    let langs = languages();
    let mut hosts = Vec::new();
    for lang in &langs {
        hosts.push(lang.host("").await);
    }
    let describe = |lang: &Lang, host: &Host, example: &str| {
        let tool = host.registry().get(&lang.name(example)).cloned().unwrap();
        let meta = tool.metadata();
        let schema = &meta.input_schema;
        let mut shape = json!({
            "effect": format!("{:?}", meta.effect),
            "dryRun": meta.has_dry_run_result,
            "required": schema["required"],
        });
        // A tool that takes no input may list no properties at all.
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            let keep = [
                "type",
                "minLength",
                "maxLength",
                "minimum",
                "maximum",
                "default",
            ];
            let mut kept = serde_json::Map::new();
            for key in keep {
                if let Some(value) = property.get(key) {
                    kept.insert(key.to_string(), value.clone());
                }
            }
            assert!(
                property
                    .get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty()),
                "{}: {example}.{name} has no description",
                lang.label
            );
            shape[name] = Value::Object(kept);
        }
        shape
    };
    for example in EXAMPLES {
        let rust = describe(langs[0], &hosts[0].1, example);
        for (lang, (_, host)) in langs.iter().zip(&hosts).skip(1) {
            assert_eq!(
                describe(lang, host, example),
                rust,
                "{}: {example}",
                lang.label
            );
        }
    }
}

/// `journal` keeps its entries in the host's state root: two sessions
/// write to one journal, which outlives the host; the context names the
/// mounts; `export` saves it as an artifact of the session (Rust and
/// Python from the file, TypeScript from its bytes); a `read` grant refuses
/// the append inside the tool, no `artifacts` grant refuses the export, and
/// without a grant the tool has no state root.
#[tokio::test]
async fn journal_keeps_the_state_root_in_every_language() {
    for lang in languages() {
        let label = lang.label;
        let tool = lang.name("journal");
        let grant = |state: &str| format!("[tools.{}]\nworkspace = \"read\"\n{state}", tool);
        let (dir, host) = lang
            .host(&grant(
                "state = \"write\"\nartifacts = \"write\"\nmetrics = true\n",
            ))
            .await;
        let (first, second) = (live(), live());
        for (entry, options) in [("one", &first), ("two\tand a tab", &second)] {
            let added = host
                .call(&tool, json!({"entry": entry}), options)
                .await
                .unwrap();
            assert!(!added.is_error, "{label}: {:?}", added.result);
            assert_eq!(added.result["stateRoot"], "/state", "{label}");
            assert_eq!(added.result["workspaceDir"], "/workspace", "{label}");
        }
        let expected = json!([
            {"session": first.session.id(), "text": "one"},
            {"session": second.session.id(), "text": "two and a tab"},
        ]);
        let read = host.call(&tool, json!({}), &dry_run()).await.unwrap();
        assert!(
            !read.is_error && !read.stubbed,
            "{label}: {:?}",
            read.result
        );
        assert_eq!(read.result["count"], 2, "{label}");
        assert_eq!(read.result["latest"], expected, "{label}");
        // Counted in the tool's metrics, labelled with the tool.
        let counted = host.tool_metrics().snapshot();
        let entries = counted.iter().find(|m| m.name == "journal_entries");
        let entries = entries.unwrap_or_else(|| panic!("{label}: {counted:?}"));
        let series_labels = vec![
            ("tool".to_string(), tool.clone()),
            ("channel".to_string(), "none".to_string()),
        ];
        assert_eq!(
            entries.series,
            [(series_labels, SeriesValue::Counter(2.0))],
            "{label}"
        );
        let timed = counted.iter().find(|m| m.name == "journal_append_seconds");
        assert!(
            matches!(
                &timed.unwrap().series[0].1,
                SeriesValue::Histogram { count: 2, .. }
            ),
            "{label}: {counted:?}"
        );

        let on_disk = host.state_root().join("journal.txt");
        let journal = std::fs::read_to_string(&on_disk).unwrap();
        assert!(journal.ends_with("\ttwo and a tab\n"), "{label}");

        // Exported as an artifact of the session.
        let exported = host
            .call(&tool, json!({"export": true}), &first)
            .await
            .unwrap();
        assert!(!exported.is_error, "{label}: {:?}", exported.result);
        let id = first.session.id();
        assert_eq!(
            exported.result["artifact"],
            format!("toolhost://sessions/{id}/artifacts/journal.txt"),
            "{label}"
        );
        let saved = SessionArtifacts::new(&first.session).list().unwrap();
        assert_eq!(saved.len(), 1, "{label}");
        assert_eq!(
            (saved[0].media_type.as_str(), &saved[0].tags),
            ("text/plain", &vec!["journal".to_string()]),
            "{label}"
        );
        let artifacts_dir = first.session.artifacts_path().unwrap();
        assert_eq!(
            std::fs::read_to_string(artifacts_dir.join("journal.txt")).unwrap(),
            journal,
            "{label}"
        );

        // After a restart, with the grant narrowed to `read`.
        drop(host);
        std::fs::write(
            dir.path().join("toolhost.toml"),
            grant("state = \"read\"\n"),
        )
        .unwrap();
        let host = common::load(dir.path()).await;
        let read = host.call(&tool, json!({}), &live()).await.unwrap();
        assert_eq!(
            read.result["latest"], expected,
            "{label}: {:?}",
            read.result
        );
        let refused = host
            .call(&tool, json!({"entry": "three"}), &live())
            .await
            .unwrap();
        assert!(refused.is_error, "{label}: {:?}", refused.result);
        let text = text_of(&refused.result);
        assert!(
            text.contains("cannot append to /state/journal.txt"),
            "{label}: {text}"
        );
        assert_eq!(
            std::fs::read_to_string(&on_disk).unwrap().lines().count(),
            2,
            "{label}"
        );
        let refused = host
            .call(&tool, json!({"export": true}), &live())
            .await
            .unwrap();
        let text = text_of(&refused.result);
        assert!(
            refused.is_error && text.contains("artifacts are not granted"),
            "{label}: {text}"
        );

        // No `metrics` grant: the entry stands, and the tool heard why it
        // was not counted.
        drop(host);
        std::fs::write(
            dir.path().join("toolhost.toml"),
            grant("state = \"write\"\n"),
        )
        .unwrap();
        let host = common::load(dir.path()).await;
        let added = host
            .call(&tool, json!({"entry": "uncounted"}), &live())
            .await
            .unwrap();
        assert!(!added.is_error, "{label}: {:?}", added.result);
        let warned = added.trace.logs.iter().any(|line| {
            line.message
                .contains("metrics are not granted to this tool")
        });
        assert!(warned, "{label}: {:?}", added.trace.logs);
        assert!(host.tool_metrics().snapshot().is_empty(), "{label}");

        // No grant: no state root.
        drop(host);
        std::fs::write(dir.path().join("toolhost.toml"), grant("")).unwrap();
        let host = common::load(dir.path()).await;
        let refused = host.call(&tool, json!({}), &live()).await.unwrap();
        assert!(refused.is_error, "{label}");
        let text = text_of(&refused.result);
        assert!(text.contains("no state root"), "{label}: {text}");

        // `notify`: the entry also goes, as a `user.message`, to a session
        // of the `journal` channel, started by the first and resumed after.
        drop(host);
        let sessions = format!(
            "state = \"write\"\nsessions = [\"journal\"]\nreminders = {{ tools = [\"{tool}\"] }}\n"
        );
        std::fs::write(dir.path().join("toolhost.toml"), grant(&sessions)).unwrap();
        let host = Arc::new(common::load(dir.path()).await);
        let store = Arc::new(
            SessionStore::open(dir.path().join("sessions"), Duration::from_secs(60)).unwrap(),
        );
        host.attach_sessions(store.clone());
        let kept = store
            .create(NewSession {
                auth: Some(json!({"user": "ada"})),
                ..NewSession::default()
            })
            .await
            .unwrap();
        let ada = CallOptions::new(kept.clone());
        for (entry, started, event_id) in [("first news", true, 1), ("more news", false, 2)] {
            let input = json!({"entry": entry, "notify": "daily"});
            let notified = host.call(&tool, input, &ada).await.unwrap();
            assert!(!notified.is_error, "{label}: {:?}", notified.result);
            let sent = &notified.result["notified"];
            assert_eq!(
                sent["continuationToken"], "journal:daily",
                "{label}: {sent}"
            );
            assert_eq!(
                (&sent["started"], &sent["eventId"]),
                (&json!(started), &json!(event_id)),
                "{label}"
            );
        }
        let daily = store.by_token("journal:daily").await.unwrap().unwrap();
        assert_eq!(daily.auth(), Some(&json!({"user": "ada"})), "{label}");
        let said: Vec<Value> = daily
            .events()
            .kept(None)
            .iter()
            .map(|e| e.to_json()["data"]["message"].clone())
            .collect();
        assert_eq!(said, [json!("first news"), json!("more news")], "{label}");
        let refused = host
            .call(&tool, json!({"notify": "daily"}), &ada)
            .await
            .unwrap();
        let text = text_of(&refused.result);
        assert!(
            refused.is_error && text.contains("`notify` is about the entry"),
            "{label}: {text}"
        );

        // `later_ms`: a reminder appends the entry later, calling the tool
        // through the pipeline in the same session.
        let calls = Arc::new(UnattendedReminderCalls("not asked".into()));
        let firing = tokio::spawn(host.clone().fire_reminders(calls));
        let input = json!({"entry": "later news", "later_ms": 50});
        let scheduled = host.call(&tool, input, &ada).await.unwrap();
        assert!(!scheduled.is_error, "{label}: {:?}", scheduled.result);
        assert!(
            scheduled.result["reminder"]["id"]
                .as_str()
                .unwrap_or("")
                .starts_with("rem_"),
            "{label}: {:?}",
            scheduled.result
        );
        let mut waited = 0;
        let fired = loop {
            waited += 1;
            assert!(waited < 400, "{label}: the reminder did not fire in 20 s");
            let fired: Vec<Value> = kept
                .events()
                .kept(None)
                .iter()
                .filter(|e| e.kind == EventKind::ReminderFired)
                .map(|e| e.to_json()["data"]["outcome"].clone())
                .collect();
            if let Some(outcome) = fired.first() {
                break outcome.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(fired["isError"], false, "{label}: {fired}");
        let journal = std::fs::read_to_string(&on_disk).unwrap();
        let line = format!("{}\tlater news\n", kept.id());
        assert!(journal.ends_with(&line), "{label}: {journal}");
        firing.abort();
    }
}
