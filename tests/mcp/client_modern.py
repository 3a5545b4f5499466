"""Drive toolhost's MCP server with the Python `mcp` 2.x high-level `Client`,
which negotiates the newest protocol it shares with the server.

    client_modern.py stdio TOOLHOST_BIN HOST_DIR MODE
    client_modern.py http  URL TOKEN HOST_DIR MODE

MODE is `auto` (the client probes `server/discover` and speaks 2026-07-28)
or `legacy` (the `initialize` handshake: 2025-11-25). Prints `ok <scenario>`
for each scenario and `all ok` at the end; any failure raises. HOST_DIR must
hold echo, chatty, test_elicitation, test_sampling and ask_all (granted
`ask`, ask_all the user and the roots), and a
spare `spare/word_count.wasm` that the listen scenario copies into `tools/`.
"""

import shutil
import sys
from pathlib import Path

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED = {"auto": "2026-07-28", "legacy": "2025-11-25"}


def check(condition, message):
    if not condition:
        raise AssertionError(message)


ASKED = []
LOGS = []


async def answer_form(context, params):
    ASKED.append(("elicit", params.message))
    schema = params.requested_schema
    properties = schema.get("properties", {}) if isinstance(schema, dict) else schema.properties
    if "name" in properties:
        return types.ElicitResult(action="accept", content={"name": "ada"})
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


async def answer_sample(context, params):
    ASKED.append(("sample", params.messages[0].content.text))
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"),
        model="test-model", stop_reason="endTurn")


async def answer_roots(context):
    ASKED.append(("roots", None))
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


async def on_log(params):
    LOGS.append((params.level, params.data))


def text(result):
    check(not result.is_error, result)
    return result.content[0].text


async def scenarios(client: Client, mode: str, host_dir: Path):
    check(client.protocol_version == EXPECTED[mode], f"negotiated {client.protocol_version}")
    check(client.server_info.name == "toolhost", client.server_info)
    print(f"ok negotiated {client.protocol_version}", flush=True)

    names = {tool.name for tool in (await client.list_tools()).tools}
    check({"echo", "chatty", "test_elicitation", "test_sampling"} <= names, names)
    check(text(await client.call_tool("echo", {"text": "hi"})) == "hi", "echo")
    print("ok list and call", flush=True)

    # The tool asks mid-call: a request of the server's own on 2025-11-25,
    # an input-required round the client answers and retries on 2026-07-28.
    said = text(await client.call_tool("test_elicitation", {"message": "Who are you?"}))
    check("ada@example.com" in said, said)
    said = text(await client.call_tool("test_sampling", {"prompt": "Capital of France?"}))
    check(said == "LLM response: Paris", said)
    check(ASKED == [("elicit", "Who are you?"), ("sample", "Capital of France?")], ASKED)
    print("ok questions", flush=True)

    # Two questions at once (`ask-all`): one after another in a session, one
    # round of two input requests on 2026-07-28.
    questions = [{"key": "user_name", "kind": "user"}, {"key": "client_roots", "kind": "roots"}]
    said = text(await client.call_tool("ask_all", {"questions": questions}))
    check(said == 'user: {"name":"ada"}\nroots: file:///work/project', said)
    # A round's input requests are fulfilled in no particular order.
    check(sorted(ASKED[2:], key=str) == [("elicit", "Your name?"), ("roots", None)], ASKED)
    print("ok questions together", flush=True)

    if mode != "auto":
        return
    # 2026-07-28: log lines only at the level the client opted in to.
    check(text(await client.call_tool("chatty", {"bytes": 0, "log": True})) is not None, "chatty")
    with anyio.fail_after(10):
        while len(LOGS) < 2:
            await anyio.sleep(0.05)
    check([level for level, _ in LOGS] == ["warning", "error"], LOGS)
    print("ok log level", flush=True)

    # A listen stream hears of a tool that arrives, and the cached listing
    # is dropped for it.
    async with client.listen(tools_list_changed=True) as listening:
        shutil.copy(host_dir / "spare" / "word_count.wasm", host_dir / "tools" / "word_count.wasm")
        with anyio.fail_after(20):
            async for _event in listening:
                break
    names = {tool.name for tool in (await client.list_tools()).tools}
    check("word_count" in names, names)
    print("ok listen", flush=True)


async def main():
    transport, *args = sys.argv[1:]
    if transport == "stdio":
        binary, host_dir, mode = args
        server = StdioServerParameters(command=binary, args=["mcp", "--dir", host_dir])
        http = None
    else:
        url, token, host_dir, mode = args
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        server = None
    options = dict(
        mode=mode, elicitation_callback=answer_form, sampling_callback=answer_sample,
        list_roots_callback=answer_roots,
        logging_callback=on_log, log_level="warning" if mode == "auto" else None)
    if http is None:
        async with Client(server, **options) as client:
            await scenarios(client, mode, Path(host_dir))
    else:
        async with http:
            async with Client(streamable_http_client(url, http_client=http), **options) as client:
                await scenarios(client, mode, Path(host_dir))
    print("all ok", flush=True)


anyio.run(main)
