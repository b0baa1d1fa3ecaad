"""server-everything registers the tools that need the client's capabilities once its session is
initialized, then says its list changed; a client opens the toolbox until they show."""

import asyncio


async def open_until_listed(call_tool, toolbox: str, wanted: set) -> set:
    """Opens `toolbox` with `call_tool` until every name in `wanted` is listed (10 s at most);
    returns the wanted names that were."""
    names: set = set()
    for _ in range(100):
        opened = await call_tool("open_toolbox", {"toolbox": toolbox})
        servers = opened.structured_content["servers"]
        names = {tool["name"] for server in servers for tool in server.get("tools", [])}
        if wanted <= names:
            break
        await asyncio.sleep(0.1)
    return wanted & names
