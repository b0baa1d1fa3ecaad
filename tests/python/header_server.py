"""A streamable-HTTP MCP server (the Python mcp SDK) that checks the headers of every request.

Usage: header_server.py PORT TOKEN. A request whose `Authorization` is not `Bearer TOKEN` is
refused with 401 and a text that repeats what it got, as careless servers do, so a test can see
that toolshelf keeps the value out of what it reports. The tool `seen_headers` returns the
headers of the last request that passed (names lower-cased).
"""

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.responses import PlainTextResponse

port, expected = int(sys.argv[1]), sys.argv[2]
last: dict[str, str] = {}
server = MCPServer("header-checker")


@server.tool()
def seen_headers() -> dict[str, str]:
    """The headers of the last request that passed the check."""
    return dict(last)


mcp_app = server.streamable_http_app()


async def checked(scope, receive, send):
    if scope["type"] == "http":
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        authorization = headers.get("authorization", "")
        if authorization != f"Bearer {expected}":
            refusal = PlainTextResponse(f"invalid token: {authorization}", status_code=401)
            await refusal(scope, receive, send)
            return
        last.clear()
        last.update(headers)
    await mcp_app(scope, receive, send)


uvicorn.run(checked, host="127.0.0.1", port=port, log_level="warning")
