//! The web console in a real browser (Debian's headless Chromium): the
//! page lists the tools, calls one from the form generated from its input
//! schema, shows a field's validation error beside it and a dry run's stub,
//! renders whatever a tool supplies as text only, and loads no data before
//! login when the server has a token. Screenshots go to
//! `target/console-screenshots`.

use crate::common;
use crate::serve::{self, Server};

use common::browser::{Browser, eval, screenshot, until};
use serde_json::Value;

/// A custom tool whose description tries to run script in the page.
const HOSTILE: &str = r#"
[custom_tools.hostile]
description = "<script>window.__ran = 1</script><img src=x onerror=\"window.__ran = 2\"> look"
input_schema = { type = "object", properties = { text = { type = "string" } } }
effect = "read"
"#;

/// Tools of the examples the page is tried with.
const TOOLS: &[&str] = &["echo", "counter", "publish_release"];

/// The config the examples run with, and the hostile tool.
fn config() -> String {
    format!(
        "[tools.counter]\nkv = [\"default\"]\n\n[tools.publish_release]\nworkspace = \
         \"write\"\npermission = \"always_ask\"\n{HOSTILE}"
    )
}

/// Show the console page `hash` (a change of the fragment: no navigation).
async fn go(page: &chromiumoxide::Page, hash: &str) {
    eval::<bool>(page, &format!("(location.hash = {hash:?}, true)")).await;
}

/// Set the form field `id` to `value`, as typing would.
fn fill(id: &str, value: &str) -> String {
    format!(
        "(() => {{ const f = document.getElementById({id:?}); f.value = {value:?}; \
         f.dispatchEvent(new Event('input')); return true; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_lists_tools_calls_one_from_its_form_and_runs_no_tool_supplied_script() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(TOOLS, &config()).await;
    let (_, listed) = server.get("/tools").await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();

    let page = browser.open(&format!("{}/#/tools", server.base)).await;
    until(
        &page,
        "document.querySelectorAll('table.tools tbody tr').length > 0",
    )
    .await;
    let rows: Vec<String> = eval(
        &page,
        "[...document.querySelectorAll('table.tools tbody tr')].map(r => r.dataset.tool)",
    )
    .await;
    assert_eq!(rows, names, "every tool is listed, in the API's order");
    let shown: String = eval(
        &page,
        "document.querySelector('tr[data-tool=hostile] td.description').textContent",
    )
    .await;
    assert!(shown.starts_with("<script>"), "shown as text: {shown}");
    let grants: String = eval(
        &page,
        "document.querySelector('tr[data-tool=counter] td.grants').textContent",
    )
    .await;
    assert_eq!(grants, "kv: default");
    screenshot(&page, "tools").await;

    // A call from the form: the result is shown, as text.
    go(&page, "#/tools/echo").await;
    until(&page, "document.getElementById('field_text')").await;
    let hostile_text = "<img src=x onerror=\"window.__ran = 3\"><script>window.__ran = 4</script>";
    assert!(eval::<bool>(&page, &fill("field_text", hostile_text)).await);
    eval::<bool>(&page, "(document.getElementById('run').click(), true)").await;
    until(&page, "document.querySelector('.envelope .result pre')").await;
    let result: String = eval(
        &page,
        "document.querySelector('.envelope .result pre').textContent",
    )
    .await;
    assert_eq!(result, hostile_text);
    assert!(eval::<bool>(&page, "document.querySelector('.badge.ok') !== null").await);
    assert!(
        eval::<bool>(
            &page,
            "document.querySelector('.envelope details.trace') !== null"
        )
        .await,
        "the call's trace is shown"
    );
    screenshot(&page, "call").await;

    // Invalid input: the error is shown beside its field.
    go(&page, "#/tools/counter").await;
    until(&page, "document.getElementById('field_by')").await;
    eval::<bool>(&page, &fill("field_name", "visits")).await;
    eval::<bool>(&page, &fill("field_by", "1.5")).await;
    eval::<bool>(&page, "(document.getElementById('run').click(), true)").await;
    let beside = "document.querySelector('.field[data-pointer=\"/by\"] ul.errors li')";
    until(&page, beside).await;
    let error: String = eval(&page, &format!("{beside}.textContent")).await;
    assert!(error.contains("integer"), "{error}");
    screenshot(&page, "invalid").await;

    // A dry run of a write tool: stubbed, nothing to approve.
    go(&page, "#/tools/publish_release").await;
    until(&page, "document.getElementById('field_version')").await;
    eval::<bool>(&page, &fill("field_version", "1.0.0")).await;
    eval::<bool>(&page, &fill("session", "dry-run")).await;
    eval::<bool>(&page, "(document.getElementById('run').click(), true)").await;
    until(&page, "document.querySelector('.badge.stubbed')").await;
    screenshot(&page, "dry-run").await;

    let ran: String = eval(&page, "typeof window.__ran").await;
    assert_eq!(ran, "undefined", "no script a tool supplied ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_the_console_loads_no_data_before_login() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server: Server =
        serve::start(&["echo"], "[server]\ntoken = \"a-long-s3cret-token\"\n").await;
    let page = browser.open(&format!("{}/#/tools", server.base)).await;
    until(&page, "document.getElementById('login')").await;
    let rows: usize = eval(&page, "document.querySelectorAll('table.tools tr').length").await;
    assert_eq!(rows, 0, "no tool is shown before login");
    screenshot(&page, "login").await;

    eval::<bool>(&page, &fill("token", "wrong")).await;
    eval::<bool>(
        &page,
        "(document.querySelector('#login button').click(), true)",
    )
    .await;
    until(&page, "document.querySelector('#login .error')").await;
    eval::<bool>(&page, &fill("token", "a-long-s3cret-token")).await;
    eval::<bool>(
        &page,
        "(document.querySelector('#login button').click(), true)",
    )
    .await;
    until(&page, "document.querySelector('tr[data-tool=echo]')").await;
    let url: String = eval(&page, "location.href").await;
    assert!(
        !url.contains("a-long-s3cret-token"),
        "the token is never in the URL: {url}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_served_with_a_strict_policy_and_cross_site_writes_are_refused() {
    let server = serve::start(&["echo"], "").await;
    let page = server
        .client
        .get(format!("{}/", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let header = |name: &str| {
        page.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let policy = header("content-security-policy");
    for rule in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(rule), "{policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(header("x-content-type-options"), "nosniff");
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no third-party asset"
    );
    let script = server
        .client
        .get(format!("{}/console/console.js", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let script = script.text().await.unwrap();
    assert!(
        !script.contains("innerHTML"),
        "the console never parses HTML"
    );

    let echo = |origin: Option<&str>, site: Option<&str>| {
        let mut request = server
            .client
            .post(server.url("/tools/echo"))
            .json(&serde_json::json!({"input": {"text": "x"}}));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(site) = site {
            request = request.header("sec-fetch-site", site);
        }
        request.send()
    };
    let own = server.base.clone();
    assert_eq!(
        echo(Some(&own), Some("same-origin"))
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        echo(None, None).await.unwrap().status(),
        200,
        "a client that is not a browser"
    );
    // Behind a proxy `Host` is the upstream's: the browser's own word stands.
    let proxied = echo(Some("https://tools.example"), Some("same-origin"));
    assert_eq!(proxied.await.unwrap().status(), 200);
    for (origin, site) in [
        (Some("https://evil.example"), None),
        (Some("null"), None),
        (None, Some("cross-site")),
        (Some(own.as_str()), Some("same-site")),
    ] {
        let refused = echo(origin, site).await.unwrap();
        assert_eq!(refused.status(), 403, "{origin:?} {site:?}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "cross_site_request", "{body}");
    }

    let off = serve::start(&["echo"], "[server]\nconsole = false\n").await;
    let gone = off
        .client
        .get(format!("{}/", off.base))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404, "[server] console = false turns it off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_over_the_api_is_given_in_the_console_and_the_call_finishes() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(TOOLS, &config()).await;
    let (_, asked) = server
        .post(
            "/tools/publish_release",
            serde_json::json!({"input": {"version": "2.0.0"}}),
        )
        .await;
    assert_eq!(asked["status"], "awaiting_approval", "{asked}");
    let call_id = asked["callId"].as_str().unwrap().to_string();

    let page = browser.open(&format!("{}/#/approvals", server.base)).await;
    let item = format!("#pending li[data-call={call_id:?}]");
    until(&page, &format!("document.querySelector('{item}')")).await;
    let shown: String = eval(
        &page,
        &format!("document.querySelector('{item}').textContent"),
    )
    .await;
    assert!(
        shown.contains("publish_release") && shown.contains("2.0.0"),
        "{shown}"
    );
    screenshot(&page, "approvals").await;
    eval::<bool>(&page, &fill("claimed-name", "Ada")).await;
    eval::<bool>(
        &page,
        &format!("(document.querySelector('{item} button.approve').click(), true)"),
    )
    .await;
    let done = format!("#resolved li[data-call={call_id:?}][data-decision=approved]");
    until(&page, &format!("document.querySelector('{done}')")).await;

    let (_, finished) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(finished["isError"], false, "the call ran: {finished}");
    let (_, listed) = server.get("/approvals").await;
    let resolved = &listed["resolved"][0];
    assert_eq!(
        resolved["decidedBy"],
        serde_json::json!({"principal": "loopback", "vouchedBy": "toolhost", "claimedName": "Ada"}),
        "the approver is who the server vouches for; the typed name is only claimed: {listed}"
    );
    assert!(
        resolved.get("input").is_none(),
        "a resolved approval keeps no input"
    );
    let forged = serde_json::json!({"decision": "approve",
        "auth": {"principal": "server-token", "vouchedBy": "toolhost"}});
    let (status, _) = server.post("/approvals/call_any", forged).await;
    assert_eq!(
        status, 400,
        "no client passes for an approver the server vouched for"
    );
    screenshot(&page, "approved").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_events_appear_in_the_console_as_calls_are_made() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(TOOLS, &config()).await;
    let (_, made) = server.post("/sessions", serde_json::json!({})).await;
    let id = made["id"].as_str().unwrap().to_string();
    let page = browser.open(&format!("{}/#/sessions", server.base)).await;
    until(
        &page,
        &format!("document.querySelector('tr[data-session={id:?}]')"),
    )
    .await;
    screenshot(&page, "sessions").await;
    go(&page, &format!("#/sessions/{id}")).await;
    until(&page, "document.getElementById('events')").await;

    for text in ["first", "second"] {
        let (called, _) = server
            .post(
                "/tools/echo",
                serde_json::json!({"input": {"text": text}, "sessionId": id}),
            )
            .await;
        assert_eq!(called, 200);
    }
    until(
        &page,
        "document.querySelectorAll('#events li[data-type=\"action.result\"]').length === 2",
    )
    .await;
    let last: String = eval(
        &page,
        "[...document.querySelectorAll('#events li[data-type=\"action.result\"]')].pop().textContent",
    )
    .await;
    assert!(last.contains("second"), "{last}");
    screenshot(&page, "session").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_detail_names_env_values_never_and_says_where_it_stands_with_the_lock() {
    let config = format!(
        "{}\n[tools.echo]\nenv = {{ API_KEY = \"hunter2-secret\" }}\n",
        config()
    );
    let server = serve::start(TOOLS, &config).await;
    let detail = |name: &'static str| {
        let server = &server;
        async move { server.get(&format!("/tools/{name}")).await.1 }
    };
    let echo = detail("echo").await;
    assert_eq!(
        echo["grants"]["env"],
        serde_json::json!(["API_KEY"]),
        "{echo}"
    );
    assert!(
        !echo.to_string().contains("hunter2"),
        "no value, no digest of one: {echo}"
    );
    assert_eq!(echo["lock"]["state"], "no_lock");
    assert!(
        echo["imports"].as_array().is_some_and(|i| !i.is_empty()),
        "{echo}"
    );
    assert_eq!(echo["file"], "echo.wasm", "no server path: {echo}");

    let mut lock = toolhost::lock::Lockfile::of(server.host.registry().all().map(|t| &**t));
    lock.tools.remove("counter");
    if let Some(echo) = lock.tools.get_mut("echo") {
        echo.metadata.effect = "write".into();
    }
    lock.write(server.dir.path()).unwrap();
    assert_eq!(detail("publish_release").await["lock"]["state"], "pinned");
    assert_eq!(detail("counter").await["lock"]["state"], "unlocked");
    let drifted = detail("echo").await;
    assert_eq!(drifted["lock"]["state"], "drifted", "{drifted}");
    assert!(
        drifted["lock"]["changes"][0]
            .as_str()
            .unwrap()
            .contains("effect"),
        "{drifted}"
    );

    let (unknown, _) = server.get("/tools/nope").await;
    assert_eq!(unknown, 404);
    let (_, listed) = server.get("/tools?detail=true").await;
    let hostile = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "hostile")
        .unwrap();
    assert_eq!(
        hostile["lints"].as_array().map(Vec::len),
        Some(2),
        "{hostile}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_result_shows_as_text_an_inert_image_and_a_download() {
    use base64::Engine as _;
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(TOOLS, &config()).await;
    let page = browser
        .open(&format!("{}/#/tools/hostile", server.base))
        .await;
    until(&page, "document.getElementById('field_text')").await;
    eval::<bool>(&page, &fill("session", "new")).await;
    eval::<bool>(&page, "(document.getElementById('run').click(), true)").await;
    until(&page, "document.querySelector('p.status[data-call]')").await;
    let call_id: String = eval(&page, "document.querySelector('p.status').dataset.call").await;
    let session: String = eval(&page, "document.querySelector('p.status').textContent").await;
    assert!(session.contains("awaiting custom tool result"), "{session}");

    // The application answers the custom tool with script in every block.
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" onload="window.__ran = 5"><script>window.__ran = 6</script><rect width="40" height="40" fill="teal"/></svg>"#;
    let base64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let content = serde_json::json!([
        {"type": "text", "text": "<script>window.__ran = 7</script>"},
        {"type": "image", "mediaType": "image/svg+xml", "data": base64(svg)},
        {"type": "document", "mediaType": "text/html", "name": "page.html",
         "data": base64("<script>window.__ran = 8</script>")},
    ]);
    let (_, listed) = server.get(&format!("/calls/{call_id}")).await;
    let session_id = listed["sessionId"].as_str().unwrap();
    let posted = server
        .client
        .post(server.url(&format!("/sessions/{session_id}/events")))
        .json(&serde_json::json!({"events": [{
            "type": "user.custom_tool_result",
            "custom_tool_use_id": call_id,
            "content": content,
        }]}))
        .send()
        .await
        .unwrap();
    assert!(
        posted.status().is_success(),
        "{}",
        posted.text().await.unwrap()
    );

    until(&page, "document.querySelector('.envelope img.image')").await;
    let src: String = eval(&page, "document.querySelector('.envelope img.image').src").await;
    assert!(src.starts_with("blob:"), "{src}");
    let text: String = eval(
        &page,
        "document.querySelector('.envelope pre.text').textContent",
    )
    .await;
    assert_eq!(text, "<script>window.__ran = 7</script>");
    let download: String = eval(
        &page,
        "document.querySelector('.envelope .download a').getAttribute('download')",
    )
    .await;
    assert_eq!(download, "page.html");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let ran: String = eval(&page, "typeof window.__ran").await;
    assert_eq!(ran, "undefined", "no script a tool supplied ran");
    screenshot(&page, "hostile-result").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_workspace_files_are_listed_and_downloaded_never_outside_it() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(&["notes"], "[tools.notes]\nworkspace = \"write\"\n").await;
    // Owned: the console reads it as its owner.
    let alice = serde_json::json!({"user": "alice"});
    let (_, made) = server
        .post("/sessions", serde_json::json!({"auth": alice}))
        .await;
    let id = made["id"].as_str().unwrap().to_string();
    let (added, _) = server
        .post(
            "/tools/notes",
            serde_json::json!({"sessionId": id, "auth": alice, "input": {
            "action": "add", "title": "plan.md", "body": "<script>window.__ran = 9</script>"}}),
        )
        .await;
    assert_eq!(added, 200);
    let as_alice = |path: &str| {
        server
            .client
            .get(server.url(path))
            .header("toolhost-auth", alice.to_string())
    };

    let listed: serde_json::Value = as_alice(&format!("/sessions/{id}/workspace"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let file = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "file")
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    let path = file["path"].as_str().unwrap();
    let download = as_alice(&format!("/sessions/{id}/workspace/{path}"))
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert!(
        download.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment"),
    );
    assert_eq!(download.headers()["content-security-policy"], "sandbox");
    assert!(download.text().await.unwrap().contains("window.__ran = 9"));
    for outside in ["..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "nope.md"] {
        let refused = as_alice(&format!("/sessions/{id}/workspace/{outside}"))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(refused, 404, "{outside}");
    }

    let page = browser
        .open(&format!("{}/#/sessions/{id}", server.base))
        .await;
    until(
        &page,
        &format!("document.querySelector('#workspace li[data-path={path:?}] button')"),
    )
    .await;
    screenshot(&page, "workspace").await;
    let ran: String = eval(&page, "typeof window.__ran").await;
    assert_eq!(ran, "undefined");
}

/// A custom tool whose schema has every kind of field the form makes.
const RICH: &str = r#"
[custom_tools.rich]
description = "Takes every kind of field the console's form makes, and is answered by the test."
input_schema = { type = "object", properties = { mode = { type = "string", enum = ["fast", "slow"], description = "How fast." }, tags = { type = "array", items = { type = "string" } }, limits = { type = "object", properties = { max = { type = "integer" }, strict = { type = "boolean" } }, required = ["strict"] }, note = { type = "string" } }, required = ["mode", "limits"] }
effect = "read"

[agents.reviewer]
components = ["echo"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_builds_enums_arrays_nested_objects_and_booleans_and_agents_can_be_picked() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let server = serve::start(TOOLS, &format!("{}{RICH}", config())).await;
    let page = browser.open(&format!("{}/#/tools/rich", server.base)).await;
    until(&page, "document.getElementById('field_mode')").await;
    for (field, value) in [("field_mode", "1"), ("session", "new")] {
        eval::<bool>(&page, &fill(field, value)).await;
    }
    let add = "document.querySelector('.field[data-pointer=\"/tags\"] > div.array > button')";
    eval::<bool>(
        &page,
        &format!("({add}.click(), {add}.click(), {add}.click(), true)"),
    )
    .await;
    until(&page, "document.getElementById('field_tags_2')").await;
    for (field, value) in [
        ("field_tags_0", "gone"),
        ("field_tags_1", "a"),
        ("field_tags_2", "b"),
        ("field_limits_max", "3"),
    ] {
        eval::<bool>(&page, &fill(field, value)).await;
    }
    // The first item removed: the others move up, pointers and labels too.
    eval::<bool>(
        &page,
        "(document.querySelector('ol.items > li > button.remove').click(), true)",
    )
    .await;
    let moved: Vec<String> = eval(
        &page,
        "[...document.querySelectorAll('ol.items > li > .field')].map(f => f.dataset.pointer + ' ' + f.querySelector('label').textContent)",
    )
    .await;
    assert_eq!(moved, ["/tags/0 item 1 *", "/tags/1 item 2 *"]);
    eval::<bool>(
        &page,
        "(document.getElementById('field_limits_strict').checked = true, true)",
    )
    .await;
    eval::<bool>(&page, "(document.getElementById('run').click(), true)").await;
    until(&page, "document.querySelector('p.status[data-call]')").await;
    let call_id: String = eval(&page, "document.querySelector('p.status').dataset.call").await;
    let (_, call) = server.get(&format!("/calls/{call_id}")).await;
    let session = call["sessionId"].as_str().unwrap();
    let mut events = server.events(session, None).await;
    let asked = events.until("agent.custom_tool_use").await;
    assert_eq!(
        asked["data"]["input"],
        serde_json::json!({"mode": "slow", "tags": ["a", "b"], "limits": {"max": 3, "strict": true}}),
        "{asked}"
    );
    screenshot(&page, "form").await;

    // The agent picker lists the named agent; its tools are its own.
    go(&page, "#/tools").await;
    until(&page, "document.getElementById('agent')").await;
    eval::<bool>(&page, &fill("agent", "reviewer")).await;
    eval::<bool>(
        &page,
        "(document.getElementById('agent').dispatchEvent(new Event('change')), true)",
    )
    .await;
    until(&page, "location.hash === '#/tools?agent=reviewer'").await;
    until(
        &page,
        "document.querySelectorAll('table.tools tbody tr').length === 1 && document.querySelector('tr[data-tool=echo]')",
    )
    .await;
}
