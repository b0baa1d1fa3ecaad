"""A streamable-HTTP MCP server (the Python mcp SDK) that checks the headers of every request.

Usage: header_server.py PORT TOKEN, over TLS when TLS_CERT and TLS_KEY name a certificate
and its key (see make_cert.py). A request whose `Authorization` is not `Bearer TOKEN` is
refused with 401 and a text that repeats what it got, as careless servers do, so a test can see
that toolshelf keeps the value out of what it reports. The tool `seen_headers` returns the
headers of the last request that passed (names lower-cased); `ended_sessions` the sessions
ended with a DELETE; `grow_later` adds the tool `grown` a moment after it answers and announces
the change outside any request, so the notification travels on the session's GET stream.
"""

import asyncio
import os
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from starlette.responses import PlainTextResponse

port, expected = int(sys.argv[1]), sys.argv[2]
last: dict[str, str] = {}
ended: list[str] = []
background: set[asyncio.Task] = set()
server = MCPServer("header-checker")


@server.tool()
def seen_headers() -> dict[str, str]:
    """The headers of the last request that passed the check."""
    return dict(last)


@server.tool()
def ended_sessions() -> list[str]:
    """The ids of the sessions a client ended with DELETE."""
    return list(ended)


@server.tool()
async def grow_later(ctx: Context) -> str:
    """Adds the tool `grown` after this call and announces the change."""
    session = ctx.session

    async def grow():
        await asyncio.sleep(0.3)
        server.add_tool(lambda: "grown", name="grown", description="Added later.")
        await session.send_tool_list_changed()

    task = asyncio.create_task(grow())
    background.add(task)
    return "later"


mcp_app = server.streamable_http_app()


async def checked(scope, receive, send):
    if scope["type"] == "http":
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        authorization = headers.get("authorization", "")
        if authorization != f"Bearer {expected}":
            refusal = PlainTextResponse(f"invalid token: {authorization}", status_code=401)
            await refusal(scope, receive, send)
            return
        if scope["method"] == "DELETE":
            ended.append(headers.get("mcp-session-id", ""))
        else:
            last.clear()
            last.update(headers)
    await mcp_app(scope, receive, send)


uvicorn.run(
    checked,
    host="127.0.0.1",
    port=port,
    log_level="warning",
    ssl_certfile=os.environ.get("TLS_CERT"),
    ssl_keyfile=os.environ.get("TLS_KEY"),
)
