//! The built-in toolset: each tool on a real workspace (paths that try to
//! leave it, binary files), its configuration forms with their accept and
//! reject rules, `enabled` resolution, approvals and implied grants.

use crate::common;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use common::server::{Server, reply};
use serde_json::{Value, json};
use toolhost::{CallOptions, CallResult, Host, PreApproved, SessionSpec};

const TOOLSET: &str = "[toolset]\ntype = \"agent_toolset\"\n";

/// A host with the toolset (and `extra` config) and a session whose
/// workspace is a temporary directory.
struct Fixture {
    _dir: tempfile::TempDir,
    workspace: tempfile::TempDir,
    host: Host,
}

impl Fixture {
    async fn new(config: &str) -> Self {
        let (dir, host) = common::host(&[], config).await;
        let workspace = tempfile::tempdir().unwrap();
        Self {
            _dir: dir,
            workspace,
            host,
        }
    }

    fn options(&self) -> CallOptions {
        common::session(SessionSpec {
            workspace: Some(self.workspace.path().to_path_buf()),
            ..SessionSpec::default()
        })
    }

    fn path(&self, relative: &str) -> std::path::PathBuf {
        self.workspace.path().join(relative)
    }

    fn put(&self, relative: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    async fn call(&self, tool: &str, input: Value) -> Arc<CallResult> {
        self.host
            .call(tool, input, &self.options())
            .await
            .unwrap_or_else(|e| panic!("{tool} refused: {e}"))
    }

    /// A call that must succeed; its structured result.
    async fn ok(&self, tool: &str, input: Value) -> Value {
        let result = self.call(tool, input.clone()).await;
        assert!(!result.is_error, "{tool} {input} failed: {}", result.result);
        result.result.clone()
    }

    /// A call that must fail as a tool error; its message.
    async fn fails(&self, tool: &str, input: Value) -> String {
        let result = self.call(tool, input.clone()).await;
        assert!(
            result.is_error,
            "{tool} {input} succeeded: {}",
            result.result
        );
        result.result.to_string()
    }
}

fn names(host: &Host) -> Vec<String> {
    host.registry()
        .tools()
        .map(|t| t.name().to_string())
        .collect()
}

#[tokio::test]
async fn read_shows_text_by_line_range() {
    let fx = Fixture::new(TOOLSET).await;
    let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    fx.put("src/notes.txt", &text);

    let whole = fx.ok("read", json!({"path": "src/notes.txt"})).await;
    assert_eq!(whole["content"], json!(text));
    assert_eq!(whole["total_lines"], json!(30));
    assert_eq!(whole["truncated"], json!(false));

    let part = fx
        .ok(
            "read",
            json!({"path": "/workspace/src/notes.txt", "offset": 10, "limit": 3}),
        )
        .await;
    assert_eq!(part["content"], json!("line 10\nline 11\nline 12\n"));
    assert_eq!(part["start_line"], json!(10));
    assert_eq!(part["end_line"], json!(12));
    assert_eq!(part["truncated"], json!(true));

    let past = fx
        .fails("read", json!({"path": "src/notes.txt", "offset": 99}))
        .await;
    assert!(
        past.contains("past the end") && past.contains("30"),
        "{past}"
    );
    let missing = fx.fails("read", json!({"path": "nope.txt"})).await;
    assert!(missing.contains("nope.txt"), "{missing}");
    let dir = fx.fails("read", json!({"path": "src"})).await;
    assert!(dir.contains("list"), "a directory points to `list`: {dir}");
}

#[tokio::test]
async fn binary_files_are_refused_by_read_and_edit_and_skipped_by_grep() {
    let fx = Fixture::new(TOOLSET).await;
    fx.put("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR needle");
    fx.put("notes.txt", "a needle here\n");
    let read = fx.fails("read", json!({"path": "logo.png"})).await;
    assert!(read.contains("binary"), "{read}");
    let edit = fx
        .fails(
            "edit",
            json!({"path": "logo.png", "old_string": "IHDR", "new_string": "X"}),
        )
        .await;
    assert!(edit.contains("binary"), "{edit}");
    let grep = fx.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        grep["matches"],
        json!([{"path": "notes.txt", "line": 1, "text": "a needle here"}])
    );
    assert_eq!(fs::read(fx.path("logo.png")).unwrap()[..4], *b"\x89PNG");
}

#[tokio::test]
async fn paths_that_leave_the_workspace_are_refused() {
    let fx = Fixture::new(TOOLSET).await;
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.path("door")).unwrap();
    let escape = format!(
        "../{}/secret.txt",
        outside.path().file_name().unwrap().to_str().unwrap()
    );

    for path in [
        "../secret.txt",
        escape.as_str(),
        "a/../../secret.txt",
        "/etc/passwd",
        "door/secret.txt",
    ] {
        let message = fx.fails("read", json!({"path": path})).await;
        assert!(!message.contains("secret\""), "{path}: {message}");
        fx.fails("write", json!({"path": path, "content": "x"}))
            .await;
        fx.fails("delete", json!({"path": path})).await;
    }
    let named = fx.fails("read", json!({"path": "../secret.txt"})).await;
    assert!(named.contains("outside the workspace"), "{named}");
    assert_eq!(
        fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
    let listed = fx.fails("list", json!({"path": "door"})).await;
    assert!(!listed.contains("secret.txt"), "{listed}");
    let grep = fx.ok("grep", json!({"pattern": "secret"})).await;
    assert_eq!(
        grep["matches"],
        json!([]),
        "grep does not follow the link out"
    );
}

#[tokio::test]
async fn write_and_edit_change_files_with_clear_failures() {
    let fx = Fixture::new(TOOLSET).await;
    let created = fx
        .ok(
            "write",
            json!({"path": "docs/a.md", "content": "one\ntwo\none\n"}),
        )
        .await;
    assert_eq!(created["created"], json!(true));
    assert_eq!(created["bytes"], json!(12));
    assert_eq!(
        fs::read_to_string(fx.path("docs/a.md")).unwrap(),
        "one\ntwo\none\n"
    );
    let replaced = fx
        .ok(
            "write",
            json!({"path": "docs/a.md", "content": "one\ntwo\none\n"}),
        )
        .await;
    assert_eq!(replaced["created"], json!(false));

    let ambiguous = fx
        .fails(
            "edit",
            json!({"path": "docs/a.md", "old_string": "one", "new_string": "1"}),
        )
        .await;
    assert!(
        ambiguous.contains("2 times") && ambiguous.contains("lines 1, 3"),
        "{ambiguous}"
    );
    let absent = fx
        .fails(
            "edit",
            json!({"path": "docs/a.md", "old_string": "three", "new_string": "3"}),
        )
        .await;
    assert!(absent.contains("not found"), "{absent}");
    assert_eq!(
        fs::read_to_string(fx.path("docs/a.md")).unwrap(),
        "one\ntwo\none\n"
    );

    let unique = fx
        .ok(
            "edit",
            json!({"path": "docs/a.md", "old_string": "two", "new_string": "2"}),
        )
        .await;
    assert_eq!(unique["replacements"], json!(1));
    let all = fx
        .ok(
            "edit",
            json!({"path": "docs/a.md", "old_string": "one", "new_string": "1", "replace_all": true}),
        )
        .await;
    assert_eq!(all["replacements"], json!(2));
    assert_eq!(
        fs::read_to_string(fx.path("docs/a.md")).unwrap(),
        "1\n2\n1\n"
    );
}

#[tokio::test]
async fn list_glob_grep_and_delete_walk_the_workspace() {
    let fx = Fixture::new(TOOLSET).await;
    fx.put("src/main.rs", "fn main() {\n    todo!()\n}\n");
    fx.put("src/lib/mod.rs", "// TODO: more\npub fn x() {}\n");
    fx.put("README.md", "todo list\n");
    fx.put(".git/config", "todo in git\n");

    let listing = fx.ok("list", json!({})).await;
    let entries: Vec<(String, String)> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        entries.contains(&("README.md".into(), "file".into())),
        "{listing}"
    );
    assert!(entries.contains(&("src".into(), "dir".into())), "{listing}");

    let globbed = fx.ok("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(globbed["matches"], json!(["src/lib/mod.rs", "src/main.rs"]));
    let bad = fx.fails("glob", json!({"pattern": "src/[a"})).await;
    assert!(bad.contains("src/[a"), "{bad}");

    let grep = fx
        .ok("grep", json!({"pattern": "todo", "case_insensitive": true}))
        .await;
    let hits: Vec<String> = grep["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect();
    assert_eq!(hits, ["README.md:1", "src/lib/mod.rs:1", "src/main.rs:2"]);
    let only_rs = fx
        .ok(
            "grep",
            json!({"pattern": "(?i)todo", "glob": "*.rs", "max_results": 1}),
        )
        .await;
    assert_eq!(only_rs["matches"].as_array().unwrap().len(), 1);
    assert_eq!(only_rs["truncated"], json!(true));
    let bad = fx.fails("grep", json!({"pattern": "(unclosed"})).await;
    assert!(bad.contains("(unclosed"), "{bad}");

    let not_recursive = fx.fails("delete", json!({"path": "src"})).await;
    assert!(not_recursive.contains("recursive"), "{not_recursive}");
    fx.ok("delete", json!({"path": "README.md"})).await;
    assert!(!fx.path("README.md").exists());
    let tree = fx
        .ok("delete", json!({"path": "src", "recursive": true}))
        .await;
    assert_eq!(tree["deleted_files"], json!(2));
    assert!(!fx.path("src").exists());
    let root = fx
        .fails("delete", json!({"path": ".", "recursive": true}))
        .await;
    assert!(root.contains("root"), "{root}");
}

#[tokio::test]
async fn web_fetch_extracts_text_from_the_allow_list_only() {
    let server = Server::start(|head| {
        if head.starts_with("GET /page ") {
            reply(
                "200 OK",
                "content-type: text/html; charset=utf-8\r\n",
                b"<html><head><title>Docs &amp; more</title><style>p{}</style></head>\
                  <body><h1>Hello</h1><p>Fish &lt;3 chips</p><script>evil()</script></body></html>",
            )
        } else if head.starts_with("GET /image ") {
            reply("200 OK", "content-type: image/png\r\n", b"\x89PNG")
        } else {
            reply("404 Not Found", "", b"no")
        }
    })
    .await;
    let config = format!("{TOOLSET}http = [{:?}]\n", server.grant());
    let fx = Fixture::new(&config).await;

    let page = fx
        .ok("web_fetch", json!({"url": server.url("/page")}))
        .await;
    assert_eq!(page["title"], json!("Docs & more"));
    let text = page["text"].as_str().unwrap();
    assert!(
        text.contains("Hello") && text.contains("Fish <3 chips"),
        "{text}"
    );
    assert!(!text.contains("evil") && !text.contains("p{}"), "{text}");

    let image = fx
        .fails("web_fetch", json!({"url": server.url("/image")}))
        .await;
    assert!(image.contains("image/png"), "{image}");
    let missing = fx
        .fails("web_fetch", json!({"url": server.url("/gone")}))
        .await;
    assert!(missing.contains("404"), "{missing}");
    let denied = fx
        .fails("web_fetch", json!({"url": "http://127.0.0.2:9/"}))
        .await;
    assert!(denied.contains("allow-list"), "{denied}");
}

#[tokio::test]
async fn enabled_resolves_per_tool_and_disabled_tools_are_absent() {
    let config = "[toolset]\ntype = \"agent_toolset_20260401\"\n\
                  default_config = { enabled = false }\n\
                  [toolset.configs]\nlist = { enabled = true }\nread = { enabled = true }\n\
                  someday = { enabled = true }\n";
    let fx = Fixture::new(config).await;
    assert_eq!(names(&fx.host), ["list", "read"]);
    let err = fx
        .host
        .call("grep", json!({"pattern": "x"}), &fx.options())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unknown_tool");
    assert!(
        fx.host.registry().unavailable().is_empty(),
        "bash is disabled too"
    );

    let listing = fx.host.listing();
    assert_eq!(
        listing["toolsets"][0]["type"],
        json!("agent_toolset_20260401")
    );
    assert_eq!(
        listing["toolsets"][0]["default_config"]["enabled"],
        json!(false)
    );
    assert_eq!(
        listing["toolsets"][0]["configs"]["someday"],
        json!({"enabled": true}),
        "unknown keys are kept"
    );
    assert!(fx.host.config().toolset.agent.is_some());
}

#[tokio::test]
async fn web_search_without_an_engine_is_listed_as_unavailable_and_refused() {
    let fx = Fixture::new(TOOLSET).await;
    let mut expected = vec![
        "delete",
        "edit",
        "glob",
        "grep",
        "list",
        "read",
        "web_fetch",
        "write",
    ];
    let unavailable = fx.host.listing()["unavailable"].clone();
    let unavailable = unavailable.as_array().unwrap();
    // bash is a tool where its sandbox works (CI installs bubblewrap), and
    // listed as unavailable, saying why, where it does not.
    match unavailable.iter().find(|u| u["name"] == "bash") {
        Some(bash) => {
            let reason = bash["reason"].as_str().unwrap();
            assert!(reason.contains("sandbox does not work here"), "{reason}");
        }
        None => expected.insert(0, "bash"),
    }
    assert_eq!(names(&fx.host), expected);
    let web_search = unavailable
        .iter()
        .find(|u| u["name"] == "web_search")
        .unwrap();
    let reason = web_search["reason"].as_str().unwrap();
    assert!(
        reason.contains("no search engine is configured"),
        "{reason}"
    );
    let err = fx
        .host
        .call("web_search", json!({"query": "x"}), &fx.options())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool_not_callable");
    assert!(err.to_string().contains("web_search = {"), "{err}");
}

/// A SearXNG answer of `hits` results, the documented shape.
fn searxng_answer(hits: usize) -> Vec<u8> {
    let results: Vec<Value> = (0..hits)
        .map(|i| {
            json!({ "url": format!("https://example.org/{i}"), "title": format!("Hit {i}"),
                    "content": format!("about {i}"), "engine": "duckduckgo", "score": 1.0 })
        })
        .collect();
    let body = json!({ "query": "q", "number_of_results": hits, "results": results });
    reply(
        "200 OK",
        "content-type: application/json\r\n",
        body.to_string().as_bytes(),
    )
}

#[tokio::test]
async fn web_search_asks_the_configured_searxng_and_returns_its_hits() {
    let server = Server::start(|head| {
        let target = head.split(' ').nth(1).unwrap_or_default();
        if target.starts_with("/searx/search?q=odd&") {
            // Hits of every shape an engine might send: only web URLs count.
            let body = json!({ "results": [
                { "url": "javascript:alert(1)", "title": "x" },
                { "url": 7, "title": "x" },
                "not an object",
                { "url": "https://example.org/ok", "title": ["not", "text"],
                  "content": "x".repeat(10_000) },
            ] });
            reply("200 OK", "", body.to_string().as_bytes())
        } else if target.starts_with("/searx/search?q=forbidden&") {
            reply("403 Forbidden", "", b"format json not allowed")
        } else if target.starts_with("/searx/search?q=html&") {
            reply(
                "200 OK",
                "content-type: text/html\r\n",
                b"<html>results</html>",
            )
        } else if target.starts_with("/searx/search?q=huge&") {
            reply("200 OK", "", &vec![b' '; 3 << 20])
        } else if target.starts_with("/searx/search?") {
            searxng_answer(30)
        } else {
            reply("404 Not Found", "", b"no")
        }
    })
    .await;
    let config = format!(
        "{TOOLSET}web_search = {{ provider = \"searxng\", url = {:?} }}\n",
        server.url("/searx/")
    );
    let fx = Fixture::new(&config).await;
    assert!(names(&fx.host).contains(&"web_search".to_string()));
    let unavailable = fx.host.listing()["unavailable"].to_string();
    assert!(!unavailable.contains("web_search"), "{unavailable}");

    // The query is encoded, never spliced: `&format=html` stays in `q`.
    let asked = "rust wasm &format=html";
    let result = fx.call("web_search", json!({"query": asked})).await;
    assert!(!result.is_error, "{}", result.result);
    let hits = result.result["results"].as_array().unwrap();
    assert_eq!(hits.len(), 5, "five by default");
    assert_eq!(hits[0]["url"], "https://example.org/0");
    assert_eq!(hits[0]["snippet"], "about 0");
    let heads = server.heads();
    assert!(
        heads[0].starts_with("GET /searx/search?q=rust%20wasm%20%26format%3Dhtml&format=json "),
        "{}",
        heads[0]
    );
    let blocks = serde_json::to_string(&result.output.content).unwrap();
    assert!(blocks.contains("https://example.org/4"), "{blocks}");
    let two = fx
        .ok("web_search", json!({"query": "x", "max_results": 2}))
        .await;
    assert_eq!(two["results"].as_array().unwrap().len(), 2);
    let twenty = fx
        .ok("web_search", json!({"query": "x", "max_results": 20}))
        .await;
    assert_eq!(twenty["results"].as_array().unwrap().len(), 20);

    let odd = fx.ok("web_search", json!({"query": "odd"})).await;
    let odd = odd["results"].as_array().unwrap();
    assert_eq!(odd.len(), 1, "{odd:?}");
    assert_eq!(odd[0]["title"], "");
    assert!(odd[0]["snippet"].as_str().unwrap().len() <= 2_000);

    for (query, expected) in [
        ("forbidden", "search.formats"),
        ("html", "did not answer JSON"),
        ("huge", "more than"),
    ] {
        let failed = fx.fails("web_search", json!({"query": query})).await;
        assert!(failed.contains(expected), "{query}: {failed}");
    }
    for input in [
        json!({"query": "  "}),
        json!({"query": "x", "max_results": 0}),
        json!({"query": "x", "max_results": 21}),
        json!({"query": "x".repeat(2_001)}),
    ] {
        let refused = fx
            .host
            .call("web_search", input.clone(), &fx.options())
            .await;
        let refused = match refused {
            Ok(result) => {
                assert!(result.is_error, "{input}: {}", result.result);
                result.result.to_string()
            }
            Err(err) => err.to_string(),
        };
        assert!(
            refused.contains("query") || refused.contains("max_results"),
            "{input}: {refused}"
        );
    }
}

#[tokio::test]
async fn a_search_engine_that_never_answers_ends_at_the_calls_deadline() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let config = format!(
        "{TOOLSET}web_search = {{ provider = \"searxng\", url = {url:?} }}\n\
         [tools.web_search]\ntimeout_ms = 1500\n"
    );
    let fx = Fixture::new(&config).await;
    let started = std::time::Instant::now();
    let outcome = fx
        .host
        .call("web_search", json!({"query": "x"}), &fx.options())
        .await;
    let elapsed = started.elapsed();
    let message = match outcome {
        Ok(result) => result.result.to_string(),
        Err(err) => err.to_string(),
    };
    assert!(message.contains("time"), "{message}");
    assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
    drop(silent);
}

#[tokio::test]
async fn always_ask_on_a_toolset_tool_needs_an_approval() {
    let config = format!(
        "{TOOLSET}configs = [{{ name = \"write\", permission_policy = {{ type = \"always_ask\" }} }}]\n"
    );
    let fx = Fixture::new(&config).await;
    let input = json!({"path": "a.txt", "content": "x"});
    let err = fx
        .host
        .call("write", input.clone(), &fx.options())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "approval_required");
    assert!(!fx.path("a.txt").exists());
    let approved = fx
        .options()
        .with_approver(Arc::new(PreApproved(json!({"user": "ops"}))));
    let result = fx.host.call("write", input, &approved).await.unwrap();
    assert!(!result.is_error, "{}", result.result);
    assert!(fx.path("a.txt").exists());
    fx.ok("read", json!({"path": "a.txt"})).await;
}

#[tokio::test]
async fn a_tools_entry_overrides_the_implied_grants() {
    let config = format!(
        "{TOOLSET}[tools.write]\nworkspace = \"read\"\n[tools.read]\nworkspace = \"none\"\n"
    );
    let fx = Fixture::new(&config).await;
    fx.put("a.txt", "x");
    let write = fx
        .fails("write", json!({"path": "a.txt", "content": "y"}))
        .await;
    assert!(
        write.to_lowercase().contains("read-only") || write.contains("permission"),
        "{write}"
    );
    assert_eq!(fs::read_to_string(fx.path("a.txt")).unwrap(), "x");
    fx.fails("read", json!({"path": "a.txt"})).await;
    let policy = fx
        .host
        .registry()
        .get("edit")
        .unwrap()
        .policy()
        .grants
        .workspace;
    assert_eq!(policy, toolhost::caps::workspace::DirAccess::Write);
}

#[tokio::test]
async fn toolset_names_stay_reserved_and_count_toward_the_limit() {
    let dir = common::host_dir(&["echo"], TOOLSET);
    fs::copy(common::artifact("echo"), dir.path().join("tools/read.wasm")).unwrap();
    let host = common::load(dir.path()).await;
    let registry = host.registry();
    let failure = &registry.failures()[0];
    assert_eq!(failure.tool.as_deref(), Some("read"));
    assert!(failure.reason.contains("reserved"), "{failure}");
    assert!(
        names(&host).contains(&"read".to_string()),
        "the built-in still loads"
    );

    let full = common::host_dir(&[], TOOLSET);
    for n in 0..120 {
        fs::copy(
            common::artifact("echo"),
            full.path().join(format!("tools/echo_{n}.wasm")),
        )
        .unwrap();
    }
    let Err(err) = toolhost::Host::builder(full.path())
        .cache_dir(common::cache_dir())
        .build()
        .await
    else {
        panic!("129 tools loaded");
    };
    let message = format!("{err:#}");
    assert!(
        message.contains("129 in all") && message.contains("toolset"),
        "{message}"
    );
}

#[tokio::test]
async fn bad_toolset_configs_are_load_errors_that_name_the_problem() {
    for (config, expected) in [
        (
            "[toolset]\ntype = \"agent_toolset\"\nconfigs = [{ name = \"list\", enabled = true }]\n",
            "not accepted in the array form",
        ),
        (
            "[toolset]\ntype = \"mcp_toolset\"\n",
            "needs `mcp_server_name`",
        ),
        (
            "[toolset]\ntype = \"agent_toolset\"\n\
             web_search = { provider = \"google\", url = \"https://x.org\" }\n",
            "web_search.provider",
        ),
        (
            "[toolset]\ntype = \"agent_toolset\"\n\
             web_search = { provider = \"searxng\", url = \"https://x.org/?q=1\" }\n",
            "web_search.url",
        ),
        (
            "[toolset]\ntype = \"frobnicate\"\n",
            "expected \"agent_toolset\"",
        ),
        (
            "[toolset]\ntype = \"agent_toolset\"\nhttp = [\"*\"]\n",
            "http",
        ),
    ] {
        let dir = common::host_dir(&[], config);
        let Err(err) = toolhost::Host::builder(dir.path())
            .cache_dir(common::cache_dir())
            .build()
            .await
        else {
            panic!("{config} loaded");
        };
        let message = format!("{err:#}");
        assert!(message.contains(expected), "{config}: {message}");
    }
}

#[tokio::test]
async fn toolset_descriptions_pass_the_lints() {
    let fx = Fixture::new(TOOLSET).await;
    let registry = fx.host.registry();
    let lints = toolhost::lint::lint(registry.all().map(|t| toolhost::lint::Subject::from(&**t)));
    assert!(lints.is_empty(), "{lints:#?}");
    for tool in registry.all() {
        let description = &tool.metadata().description;
        assert!(description.len() > 150, "{}: {description}", tool.name());
    }
}

#[tokio::test]
async fn dry_run_stubs_toolset_writes() {
    let fx = Fixture::new(TOOLSET).await;
    let options = common::session(SessionSpec {
        workspace: Some(fx.workspace.path().to_path_buf()),
        mode: toolhost::SessionMode::DryRun,
        ..SessionSpec::default()
    });
    let result = fx
        .host
        .call(
            "write",
            json!({"path": "a.txt", "content": "xyz"}),
            &options,
        )
        .await
        .unwrap();
    assert!(result.stubbed);
    assert!(
        result.result.to_string().contains("3 bytes"),
        "{}",
        result.result
    );
    assert!(!Path::new(&fx.path("a.txt")).exists());
}
