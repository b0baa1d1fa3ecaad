"""The Python `mcp` SDK's ClientSession against `toolshelf serve --flat`: lists every tool (the
SDK checks each tool's shape, input schemas included), calls tools by their flat names, reports
a name toolshelf cannot route, and lists, gets and reads the children's prompts and resources.

Usage: flat_client.py FOLDER -- COMMAND [ARGS...]   (FOLDER: the one the filesystem server serves)
Prints one JSON object with what the client saw; exits non-zero on any failure.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def main(folder: str, command: list[str]) -> dict:
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
            listing = await session.call_tool("filesystem:list_directory", {"path": folder})
            seen["filesystem_listing"] = texts(listing)
            graph = await session.call_tool("memory:read_graph", {})
            seen["memory_is_error"] = graph.is_error
            prompts = await session.list_prompts()
            seen["prompts"] = sorted(prompt.name for prompt in prompts.prompts)
            got = await session.get_prompt("everything:args-prompt", {"city": "Lisbon"})
            seen["prompt_text"] = got.messages[0].content.text
            resources = await session.list_resources()
            seen["resources"] = len(resources.resources)
            first = str(resources.resources[0].uri)
            read = await session.read_resource(first)
            seen["read_uri"] = str(read.contents[0].uri)
            seen["first_uri"] = first
            try:
                await session.call_tool("echo", {})
                seen["unrouted"] = None
            except MCPError as error:
                seen["unrouted"] = {"code": error.error.code, "message": error.error.message}
    return seen


if __name__ == "__main__":
    folder, separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(folder, command))))
