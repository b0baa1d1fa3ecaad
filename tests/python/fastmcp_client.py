"""A real MCP client for toolshelf's tests: fastmcp, speaking the protocol revision it prefers.

Usage: fastmcp_client.py SCENARIO MODE -- COMMAND [ARGS...]
  SCENARIO  `session` (list tools, open toolbox `dev`, call the fixture's echo through use_tool),
            `task` (open toolbox `demo`, call server-everything's simulate-research-query, which
            requires tasks, through use_tool: fastmcp-tasks drives the task to its result), or
            `leave` (connect and leave without a request)
  MODE      fastmcp's connect mode: `auto` (its default: server/discover, 2026-07-28) or `legacy`
Prints one JSON object with what the client saw; exits non-zero on any failure.
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp_tasks.client import call_tool_task  # importing it gives every Client the tasks extension
from fastmcp.client.transports import StdioTransport


async def main(scenario: str, mode: str, command: list[str]) -> dict:
    transport = StdioTransport(command=command[0], args=command[1:], keep_alive=False)
    seen: dict = {}
    async with Client(transport, mode=mode) as client:
        seen["protocol"] = str(client.protocol_version)
        if scenario == "leave":
            return seen
        if scenario == "task":
            await client.call_tool("open_toolbox", {"toolbox": "demo"})
            tool = {"toolbox": "demo", "server": "everything", "name": "simulate-research-query"}
            # Transparently: fastmcp polls the task to its result.
            reported = await client.call_tool("use_tool", {"tool": tool, "arguments": {"topic": "tides"}})
            seen["report"] = [block.text for block in reported.content]
            # Through the task's handle: its id, its status, and a cancellation.
            handle = await call_tool_task(client, "use_tool", {"tool": tool, "arguments": {"topic": "moon"}})
            seen["task_id"] = handle.task_id
            seen["status"] = (await handle.status()).status
            await handle.cancel()
            seen["cancelled"] = (await handle.status()).status
            return seen
        tools = await client.list_tools()
        seen["tools"] = [tool.name for tool in tools]
        opened = await client.call_tool("open_toolbox", {"toolbox": "dev"})
        seen["opened"] = opened.structured_content
        echoed = await client.call_tool(
            "use_tool",
            {
                "tool": {"toolbox": "dev", "server": "fixture", "name": "echo"},
                "arguments": {"said": "hello"},
            },
        )
        seen["echo"] = [block.text for block in echoed.content]
        seen["echo_is_error"] = echoed.is_error
    return seen


if __name__ == "__main__":
    scenario, mode, separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(scenario, mode, command))))
