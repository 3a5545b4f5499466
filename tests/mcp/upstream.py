"""An MCP server for toolhost's MCP toolset tests, written with the official
Python SDK (`mcp` 2.x): tools of every effect, a slow one, a failing one, one
that kills its own process once, and one that rewrites another's description
and announces it (`notifications/tools/list_changed`).

    python upstream.py                   # stdio
    python upstream.py --http PORT       # streamable HTTP on 127.0.0.1:PORT/mcp

What the tests check afterwards is written under $UPSTREAM_STATE (default:
the working directory): `calls.log` (one line per call: tool and
arguments), `cancelled` (written when a call is cancelled), `crashed`
(written before the one crash), `starts.log` (a line each time the server
starts). `lookup_description` holds the description
`mutate` gave `lookup`, which a restarted server keeps, as an upgraded server
would.
"""

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

STATE = Path(os.environ.get("UPSTREAM_STATE", "."))
server = MCPServer("upstream")


def record(name, **arguments):
    with open(STATE / "calls.log", "a") as log:
        log.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")


@server.tool(
    description="Look up a ticket by its key and return its title.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def lookup(key: str) -> str:
    record("lookup", key=key)
    return f"ticket {key}: printer on fire"


@server.tool(
    description="Set a flag on a ticket; setting it twice changes nothing more.",
    annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True, destructiveHint=False),
)
def set_flag(key: str, flag: str) -> str:
    record("set_flag", key=key, flag=flag)
    return f"{key} flagged {flag}"


@server.tool(
    description="Delete every ticket. Cannot be undone.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
def delete_all() -> str:
    record("delete_all")
    return "all tickets deleted"


@server.tool(
    description="Wait the given number of seconds, then say so.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
async def slow(seconds: float) -> str:
    record("slow", seconds=seconds)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        (STATE / "cancelled").write_text("cancelled\n")
        raise
    return f"waited {seconds} s"


@server.tool(
    description="Always fail with a message.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def fail() -> str:
    record("fail")
    raise ToolError("the ticket database is locked")


@server.tool(
    description="Kill this server's process the first time it is called; answer after that.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def crash_once() -> str:
    record("crash_once")
    marker = STATE / "crashed"
    if not marker.exists():
        marker.write_text("crashed\n")
        sys.stderr.write("upstream: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    return "survived a crash"


@server.tool(
    description="Rewrite lookup's description and tell the client the tools changed.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
async def mutate(description: str, ctx: Context) -> str:
    record("mutate", description=description)
    (STATE / "lookup_description").write_text(description)
    server._tool_manager.get_tool("lookup").description = description
    await ctx.session.send_tool_list_changed()
    return "lookup rewritten"


@server.tool(
    description="Add `count` more tools (extra_0, extra_1, …) and tell the client the tools changed.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
async def grow(count: int, ctx: Context) -> str:
    record("grow", count=count)

    def extra() -> str:
        return "extra"

    for index in range(count):
        server.add_tool(extra, name=f"extra_{index}", description=f"Extra tool number {index}.")
    await ctx.session.send_tool_list_changed()
    return f"{count} tools added"


@server.tool(
    description="Return the headers of the HTTP request that carried this call.",
    annotations=ToolAnnotations(readOnlyHint=True),
)
def whoami(ctx: Context) -> str:
    request = getattr(ctx.request_context, "request", None)
    headers = dict(request.headers) if request is not None else {}
    seen = {k: v for k, v in headers.items() if k.lower().startswith("x-") or k.lower() == "authorization"}
    return json.dumps(seen, sort_keys=True)


if __name__ == "__main__":
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "starts.log", "a") as starts:
        starts.write(f"{os.getpid()}\n")
    changed = STATE / "lookup_description"
    if changed.exists():
        server._tool_manager.get_tool("lookup").description = changed.read_text()
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
