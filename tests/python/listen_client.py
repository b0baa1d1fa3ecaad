"""The Python `mcp` SDK's `Client.listen()` (2026-07-28's `subscriptions/listen`) against
`toolshelf serve --flat` on stdio, with server-everything as a child.

Usage: listen_client.py -- COMMAND [ARGS...]
The client discovers (no `initialize`), lists resources, opens a listen stream for the first
resource's updates and for list changes, turns on server-everything's simulated resource
updates, and waits (bounded) for an update of that resource on the stream. Prints one JSON
object with what it saw.
"""

import asyncio
import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import ResourceUpdated


async def main(command: list[str]) -> dict:
    seen: dict = {}
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(parameters) as client:
        seen["protocol"] = client.session.protocol_version
        resources = await client.list_resources()
        first = str(resources.resources[0].uri)
        seen["first_uri"] = first
        async with client.listen(resource_subscriptions=[first], resources_list_changed=True, tools_list_changed=True) as sub:
            honored = sub.honored
            seen["honored"] = {
                "resource_subscriptions": list(honored.resource_subscriptions or []),
                "resources_list_changed": bool(honored.resources_list_changed),
                "tools_list_changed": bool(honored.tools_list_changed),
            }
            await client.call_tool("everything:toggle-subscriber-updates", {})
            with anyio.fail_after(30):
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        seen["updated"] = event.uri
                        break
    return seen


if __name__ == "__main__":
    separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(command))))
