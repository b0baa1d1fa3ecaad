"""Searches toolshelf as each kind of real client does: the Python `mcp` SDK's ClientSession
declaring nothing, `roots` (as Claude Code, Claude Desktop, VS Code and Cursor do), or `roots`,
`sampling` and `elicitation` (as VS Code does). The SDK declares a capability when its callback
is given.

Usage: search_kinds.py [--call] QUERY stdio -- COMMAND [ARGS...]   (a toolshelf per session)
       search_kinds.py [--call] QUERY http URL                      (three sessions of one)
With --call, each session then calls the search's first tool with {"message": "first call"},
as the agent's first call after a search does (use_tool opens its toolbox on demand).
Prints {"none"|"roots"|"capable": {"text": the search's text, "declared": [...],
"called": the call's text}} as JSON.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def sampling(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled"),
        model="agent-model",
    )


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/agent-root")])


KINDS = {
    "none": {},
    "roots": {"list_roots_callback": roots},
    "capable": {
        "list_roots_callback": roots,
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
    },
}


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def search(streams, callbacks: dict, query: str, call: bool) -> dict:
    async with ClientSession(streams[0], streams[1], **callbacks) as session:
        await session.initialize()
        result = await session.call_tool("open_toolbox", {"query": query})
        seen = {"text": text_of(result), "error": bool(result.is_error), "declared": sorted(callbacks)}
        if call:
            first = result.structured_content["tools"][0]
            tool = {key: first[key] for key in ("toolbox", "server", "name")}
            called = await session.call_tool(
                "use_tool", {"tool": tool, "arguments": {"message": "first call"}}
            )
            seen["called"] = text_of(called)
        return seen


async def main(query: str, transport: str, rest: list[str], call: bool) -> dict:
    seen = {}
    for kind, callbacks in KINDS.items():
        if transport == "stdio":
            parameters = StdioServerParameters(command=rest[0], args=rest[1:])
            async with stdio_client(parameters) as streams:
                seen[kind] = await search(streams, callbacks, query, call)
        else:
            async with streamable_http_client(rest[0]) as streams:
                seen[kind] = await search(streams, callbacks, query, call)
    return seen


if __name__ == "__main__":
    arguments = sys.argv[1:]
    call = arguments[0] == "--call"
    if call:
        arguments = arguments[1:]
    query, transport, rest = arguments[0], arguments[1], arguments[2:]
    if transport == "stdio":
        rest = rest[rest.index("--") + 1 :]
    print(json.dumps(asyncio.run(main(query, transport, rest, call))))
