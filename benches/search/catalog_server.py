"""An MCP server (the Python mcp SDK's low-level Server, over stdio) that lists the tools of one
JSON file as they are, and answers every call with a short text: the search benchmark's stand-in
for a real server with those tools, listed the same way to toolshelf and to FastMCP.

Usage: catalog_server.py TOOLS.json   (a JSON array of {name, description, inputSchema})
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

with open(sys.argv[1], encoding="utf-8") as file:
    TOOLS = [types.Tool(**tool) for tool in json.load(file)]


async def list_tools(context, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(context, params) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


server = Server("catalog", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
