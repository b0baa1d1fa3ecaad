"""Two agents on one `toolshelf serve --http`: the Python `mcp` SDK's streamable HTTP client.

Usage: http_client.py URL TOKEN TOOLBOX SERVER. Agent A opens TOOLBOX and calls SERVER's `echo`
(with a progress callback on the fixture's `progress`); agent B, at the same time on its own
session, calls without opening and must get seed 003's "is not open". Prints what each saw as
JSON. An empty TOKEN sends no `Authorization` header.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def agent(url: str, token: str, toolbox: str, server: str, opens: bool) -> dict:
    seen: dict = {}
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                initialized = await session.initialize()
                seen["protocol"] = initialized.protocol_version
                seen["tools"] = sorted(tool.name for tool in (await session.list_tools()).tools)
                if opens:
                    opened = await session.call_tool("open_toolbox", {"toolbox": toolbox})
                    seen["opened"] = not opened.is_error

                def use(name: str, arguments: dict):
                    call = {"tool": {"toolbox": toolbox, "server": server, "name": name}, "arguments": arguments}
                    return session.call_tool("use_tool", call, progress_callback=progress)

                progress_seen: list = []

                async def progress(value, total, message):
                    progress_seen.append(value)

                echoed = await use("echo", {"said": "over http"})
                seen["echo"] = text(echoed)
                seen["echo_error"] = echoed.is_error
                if opens:
                    await use("progress", {"values": [1, 2, 3], "interval_ms": 20})
                    seen["progress"] = progress_seen
    return seen


async def main(url: str, token: str, toolbox: str, server: str) -> dict:
    a, b = await asyncio.gather(
        agent(url, token, toolbox, server, True),
        agent(url, token, toolbox, server, False),
    )
    return {"a": a, "b": b}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
