"""The Python `mcp` SDK's ClientSession against `toolshelf serve --flat`: lists every tool (the
SDK checks each tool's shape, input schemas included), calls tools by their flat names, and
reports a name toolshelf cannot route.

Usage: flat_client.py -- COMMAND [ARGS...]
Prints one JSON object with what the client saw; exits non-zero on any failure.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def main(command: list[str]) -> dict:
    seen: dict = {}
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            seen["list_changed"] = initialized.capabilities.tools.list_changed
            listed = await session.list_tools()
            seen["tools"] = sorted(tool.name for tool in listed.tools)
            seen["schemas"] = {tool.name: tool.input_schema for tool in listed.tools if tool.name.endswith("_extra")}
            seen["fixture_echo"] = texts(await session.call_tool("fx:echo", {"message": "flat"}))
            seen["everything_echo"] = texts(await session.call_tool("everything:echo", {"message": "flat"}))
            try:
                await session.call_tool("echo", {})
                seen["unrouted"] = None
            except MCPError as error:
                seen["unrouted"] = {"code": error.error.code, "message": error.error.message}
    return seen


if __name__ == "__main__":
    separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(command))))
