"""A fastmcp 4.1.2 client (protocol 2026-07-28, no session) against `toolshelf serve --http`.

Usage: fastmcp_http.py URL TOKEN TOOLBOX SERVER OPEN [confirm]. Calls SERVER's `echo` through
use_tool, opening TOOLBOX first when OPEN is "open"; with `confirm`, it answers elicitations
(toolshelf's question whether the call may run) by accepting, and records each question. Prints
what it saw as JSON.
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport


async def main(url: str, token: str, toolbox: str, server: str, opens: bool, confirms: bool) -> dict:
    seen: dict = {"asked": []}
    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"})

    async def accept(message, response_type, params, context) -> dict:
        seen["asked"].append(message)
        return {}

    handlers = {"elicitation_handler": accept} if confirms else {}
    async with Client(transport, **handlers) as client:
        seen["protocol"] = client.initialize_result.protocol_version if client.initialize_result else None
        if opens:
            opened = await client.call_tool("open_toolbox", {"toolbox": toolbox}, raise_on_error=False)
            seen["opened"] = not opened.is_error
        call = {"tool": {"toolbox": toolbox, "server": server, "name": "echo"}, "arguments": {"via": "fastmcp"}}
        echoed = await client.call_tool("use_tool", call, raise_on_error=False)
        seen["echo"] = "\n".join(block.text for block in echoed.content if block.type == "text")
        seen["echo_error"] = echoed.is_error
    return seen


if __name__ == "__main__":
    url, token, toolbox, server, opens = sys.argv[1:6]
    confirms = sys.argv[6:7] == ["confirm"]
    print(json.dumps(asyncio.run(main(url, token, toolbox, server, opens == "open", confirms))))
