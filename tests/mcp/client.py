"""Drive toolhost's MCP server with the official Python `mcp` client.

    client.py stdio TOOLHOST_BIN HOST_DIR SESSION_ID
    client.py http  URL TOKEN SESSION_ID

Runs every scenario over one transport, printing `ok <scenario>` for each;
any failure raises (non-zero exit, with the traceback on stderr). The host
directory must hold the tools this script calls (see cli/tests/all/mcp.rs) and
SESSION_ID an existing session.
"""

import sys
import time

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def check(condition, message):
    if not condition:
        raise AssertionError(message)


LOGS = []


async def on_log(params):
    LOGS.append(params)


async def logged_lines(count):
    """The log lines received once `count` have come (over streamable HTTP
    they come on the standalone stream, so they may trail the result)."""
    deadline = time.monotonic() + 10
    while len(LOGS) < count and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    lines = [(m.level, m.logger, m.data) for m in LOGS]
    LOGS.clear()
    return lines


def by_name(tools):
    return {tool.name: tool for tool in tools}


async def scenarios(session: ClientSession, session_id: str, notices: list):
    init = await session.initialize()
    check(init.server_info.name == "toolhost", init.server_info)
    check(init.capabilities.tools and init.capabilities.tools.list_changed, init.capabilities)
    check(init.capabilities.logging is not None, init.capabilities)
    print("ok initialize", flush=True)

    tools = by_name((await session.list_tools()).tools)
    echo, counter, notes, fetch = tools["echo"], tools["counter"], tools["notes"], tools["fetch_url"]
    check(echo.input_schema["type"] == "object" and "text" in echo.input_schema["properties"], echo.input_schema)
    check(echo.annotations.read_only_hint is True, echo.annotations)
    check(echo.annotations.open_world_hint is False, echo.annotations)
    check(counter.annotations.destructive_hint is True, counter.annotations)
    check(notes.annotations.destructive_hint is True, "by-input effects are advertised as destructive")
    check(fetch.annotations.open_world_hint is True, "a tool granted HTTP is open-world")
    check("get_weather" not in tools, "custom tools are not served over MCP")
    print("ok list_tools", flush=True)

    check(init.capabilities.prompts and init.capabilities.prompts.list_changed, init.capabilities)
    check(init.capabilities.completions is not None, init.capabilities)
    prompts = {p.name: p for p in (await session.list_prompts()).prompts}
    report = prompts["word_count_report"]
    check([(a.name, a.required) for a in report.arguments] == [("path", True), ("style", False)],
          report.arguments)
    got = await session.get_prompt("word_count_report", {"path": "notes.md", "style": "detailed"})
    check(len(got.messages) == 1 and got.messages[0].role == "user", got.messages)
    check("word_count on `notes.md`" in got.messages[0].content.text, got.messages)
    check("a detailed report" in got.messages[0].content.text, got.messages)
    try:
        await session.get_prompt("word_count_report", {})
        raise AssertionError("a prompt without its required argument was filled in")
    except MCPError as err:
        check("`path` is required" in str(err), err)
    completed = await session.complete(
        types.PromptReference(type="ref/prompt", name="word_count_report"), {"name": "style", "value": "b"})
    check(completed.completion.values == ["brief"], completed.completion)
    print("ok prompts", flush=True)

    result = await session.call_tool("echo", {"text": "hello", "uppercase": True})
    check(not result.is_error, result)
    check(result.content[0].text == "HELLO", result.content)
    meta = result.meta or {}
    check(meta.get("callId", "").startswith("call_") and meta.get("attempts") == 1, meta)
    check(meta.get("stubbed") is False and isinstance(meta.get("durationMs"), int), meta)
    print("ok call_read", flush=True)

    first = await session.call_tool("counter", {"name": "mcp", "by": 2})
    second = await session.call_tool("counter", {"name": "mcp", "by": 3})
    check(not second.is_error, second)
    check(second.structured_content["value"] - first.structured_content["value"] == 3, second.structured_content)
    print("ok call_write", flush=True)

    stubbed = await session.call_tool("counter", {"name": "mcp"}, meta={"toolhost/dryRun": True})
    check(stubbed.meta.get("stubbed") is True, stubbed.meta)
    check(stubbed.structured_content == {"name": "mcp", "value": None, "dryRun": True}, stubbed.structured_content)
    after = await session.call_tool("counter", {"name": "mcp", "by": 0})
    check(after.structured_content["value"] == second.structured_content["value"], "the dry-run call changed nothing")
    print("ok dry_run", flush=True)

    # The state root: `journal` appends to /state; its read call sees the entry.
    added = await session.call_tool("journal", {"entry": f"over mcp {session_id}"})
    check(not added.is_error and added.structured_content["stateRoot"] == "/state", added)
    read = await session.call_tool("journal", {})
    check(read.structured_content["latest"][-1]["text"] == f"over mcp {session_id}", read.structured_content)
    print("ok state_root", flush=True)

    # Resources: `counter` offers each counter as `counter://{name}`.
    check(init.capabilities.resources and init.capabilities.resources.subscribe, init.capabilities)
    check(init.capabilities.resources.list_changed, init.capabilities)
    templates = (await session.list_resource_templates()).resource_templates
    counters = [t for t in templates if t.uri_template == "counter://{name}"]
    check(len(counters) == 1 and counters[0].mime_type == "text/plain", templates)
    read = await session.read_resource("counter://mcp")
    check(read.contents[0].text == str(after.structured_content["value"]), read.contents)
    check(str(read.contents[0].uri) == "counter://mcp" and read.contents[0].mime_type == "text/plain", read.contents)
    try:
        await session.read_resource("counter://nobody")
        raise AssertionError("an unknown counter was read")
    except MCPError as err:
        check(err.error.code == -32002 and "counter://nobody" in err.error.message, err.error)
    try:
        await session.read_resource("nowhere://at-all")
        raise AssertionError("an address no tool offers was read")
    except MCPError as err:
        check(err.error.code == -32002, err.error)

    def updates():
        # The client hands notifications over wrapped or not, by version.
        unwrapped = [getattr(n, "root", n) for n in notices]
        return [str(n.params.uri) for n in unwrapped if isinstance(n, types.ResourceUpdatedNotification)]

    async def updated_soon(uri):
        deadline = time.monotonic() + 10
        while uri not in updates() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        return uri in updates()

    await session.subscribe_resource("counter://mcp")
    await session.call_tool("counter", {"name": "mcp", "by": 1})
    await session.call_tool("counter", {"name": "other", "by": 1})
    check(await updated_soon("counter://mcp"), f"no update for counter://mcp: {notices}")
    check("counter://other" not in updates(), f"an update nobody subscribed to was sent: {updates()}")
    await session.unsubscribe_resource("counter://mcp")
    heard = len(updates())
    await session.call_tool("counter", {"name": "mcp", "by": 1})
    await anyio.sleep(0.3)
    check(len(updates()) == heard, f"an update after unsubscribing: {updates()}")
    print("ok resources", flush=True)

    failed = await session.call_tool("trap", {})
    check(failed.is_error, failed)
    check("trapped" in failed.content[0].text, failed.content)
    print("ok failing_tool", flush=True)

    chatty = await session.call_tool("chatty", {"bytes": 100000})
    check(not chatty.is_error, chatty)
    again = await session.call_tool("echo", {"text": "still valid"})
    check(again.content[0].text == "still valid", "the stream survived a tool that prints")
    print("ok stdout_tool", flush=True)

    await session.set_logging_level("warning")
    logged = await session.call_tool("chatty", {"bytes": 0, "log": True})
    check(not logged.is_error, logged)
    lines = await logged_lines(2)
    check(lines == [("warning", "chatty", "warn line"), ("error", "chatty", "error line")], lines)
    await session.set_logging_level("debug")
    await session.call_tool("chatty", {"bytes": 0, "log": True})
    lines = await logged_lines(4)
    check([level for level, _, _ in lines] == ["debug", "info", "warning", "error"], lines)
    print("ok logging", flush=True)

    reports = []

    async def on_report(progress, total, message):
        reports.append((progress, total, message))

    stepped = await session.call_tool("chatty", {"bytes": 0, "progress": 3}, progress_callback=on_report)
    check(not stepped.is_error, stepped)
    check(reports == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")], reports)
    print("ok tool_progress", flush=True)

    # Invalid arguments are a tool error the model reads (SEP-1303).
    invalid = await session.call_tool("echo", {"text": 5})
    check(invalid.is_error, invalid)
    check("at /text:" in invalid.content[0].text, invalid.content)
    check(invalid.meta["code"] == "invalid_tool_input", invalid.meta)
    check(invalid.meta["errors"][0]["pointer"] == "/text", invalid.meta)
    try:
        await session.call_tool("nope", {})
        raise AssertionError("an unknown tool was called")
    except MCPError as error:
        check(error.error.code == types.INVALID_PARAMS and "unknown tool" in error.error.message, error.error)
    print("ok invalid_input", flush=True)

    approval = await session.call_tool("context", {})
    check(approval.is_error and "approval" in approval.content[0].text, approval.content)
    print("ok approval_refused_without_elicitation", flush=True)

    # A tool may ask the user or the model only a client that can be asked.
    unasked = await session.call_tool("test_elicitation", {"message": "Who are you?"})
    check(unasked.is_error and "did not declare elicitation" in unasked.content[0].text, unasked.content)
    unsampled = await session.call_tool("test_sampling", {"prompt": "hi"})
    check(unsampled.is_error and "did not declare sampling" in unsampled.content[0].text, unsampled.content)
    print("ok ask_refused_without_capabilities", flush=True)

    ticks = []

    async def on_progress(progress, total, message):
        ticks.append((progress, message))

    slow = await session.call_tool("spin", {}, progress_callback=on_progress)
    check(slow.is_error and "timed out" in slow.content[0].text, slow.content)
    check(len(ticks) >= 1 and "spin" in ticks[0][1], ticks)
    print("ok progress", flush=True)

    # Cancel a write that holds the session: the slot is free at once after.
    in_session = {"toolhost/sessionId": session_id}
    hang = {"action": "set_then_hang", "key": "k", "value": "v"}
    started = time.monotonic()
    try:
        await session.call_tool("kv_probe", hang, read_timeout_seconds=1.0, meta=in_session)
        raise AssertionError("the hanging call returned")
    except MCPError:
        pass
    await anyio.sleep(0.2)
    freed = await session.call_tool("kv_probe", {"action": "set", "key": "k2", "value": "w"}, meta=in_session)
    check(not freed.is_error, f"the cancelled call still holds the session: {freed.content}")
    check(time.monotonic() - started < 8, "the cancelled call ran to its deadline")
    print("ok cancellation", flush=True)

    # Artifacts: `journal` exports its journal into the session; the client
    # reads it as a resource of the session.
    exported = await session.call_tool("journal", {"export": True}, meta=in_session)
    check(not exported.is_error, exported.content)
    uri = exported.structured_content["artifact"]
    check(uri == f"toolhost://sessions/{session_id}/artifacts/journal.txt", uri)
    read = await session.read_resource(uri)
    check(read.contents[0].mime_type == "text/plain", read.contents)
    check(f"over mcp {session_id}" in read.contents[0].text, read.contents)
    try:
        await session.read_resource(f"toolhost://sessions/{session_id}/artifacts/missing.txt")
        raise AssertionError("a missing artifact was read")
    except MCPError as err:
        check(err.error.code == -32002, err.error)
    print("ok artifacts", flush=True)

    # Sessions: `journal` tells the session `journal:mcp` (started by the
    # first send, resumed by the second) about its entry.
    for started, event_id in ((True, 1), (False, 2)):
        told = await session.call_tool("journal", {"entry": "mcp news", "notify": "mcp"}, meta=in_session)
        check(not told.is_error, told.content)
        notified = told.structured_content["notified"]
        check(notified["continuationToken"] == "journal:mcp", notified)
        check((notified["started"], notified["eventId"]) == (started, event_id), notified)
    print("ok send", flush=True)


async def elicitation(session: ClientSession, session_id: str):
    await session.initialize()
    # In the session: its events record the approval (checked by cli/tests/all/mcp.rs).
    result = await session.call_tool("context", {}, meta={"toolhost/sessionId": session_id})
    check(not result.is_error, result.content)
    check(result.structured_content["approvedBy"]["via"] == "mcp-elicitation", result.structured_content)
    print("ok approval_by_elicitation", flush=True)

    # A tool asks the user (elicitation) and the model (sampling) mid-call.
    asked = await session.call_tool("test_elicitation", {"message": "Who are you?"})
    check(not asked.is_error, asked.content)
    text = asked.content[0].text
    check(text.startswith("User response: action=accept") and '"username":"ada"' in text, text)
    sampled = await session.call_tool("test_sampling", {"prompt": "Say hi"})
    check(not sampled.is_error and sampled.content[0].text == "LLM response: you said: Say hi", sampled.content)
    check(SAMPLED and SAMPLED[0].max_tokens == 100, SAMPLED)
    print("ok ask_user_and_model", flush=True)


async def approve(context, params):
    """Approve `context`'s call; answer test_elicitation's form."""
    if "context" in params.message:
        return types.ElicitResult(action="accept", content={"approve": True})
    check(params.message == "Who are you?", params.message)
    check(set(params.requested_schema["properties"]) == {"username", "email"}, params.requested_schema)
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


SAMPLED = []


async def sample(context, params):
    SAMPLED.append(params)
    said = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"you said: {said}"),
        model="test-model", stop_reason="endTurn")


async def main():
    transport, *args = sys.argv[1:]
    notices = []

    async def on_message(message):
        notices.append(message)

    if transport == "stdio":
        binary, host_dir, session_id = args
        params = StdioServerParameters(command=binary, args=["mcp", "--dir", host_dir])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
                await scenarios(session, session_id, notices)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=approve, sampling_callback=sample) as session:
                await elicitation(session, session_id)
    else:
        url, token, session_id = args
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
                    await scenarios(session, session_id, notices)
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, elicitation_callback=approve, sampling_callback=sample) as session:
                    await elicitation(session, session_id)
    print("all ok", flush=True)


anyio.run(main)
