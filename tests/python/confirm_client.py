"""The Python `mcp` SDK's ClientSession against `toolshelf serve` on stdio, answering the user's
side of the confirmations an access rule asks for: each elicitation gets the next of ANSWERS
("accept", "decline" or "cancel"); with ANSWERS "none" the client offers no elicitation at all.
Calls dev/fixture's `echo` once per answer (once with "none"), then `sleep`, which no rule
guards. With --script first, each call is a `run_code` script's (code mode).

Usage: confirm_client.py [--script] ANSWERS -- COMMAND [ARGS...]   (stdio: the client starts toolshelf)
       confirm_client.py ANSWERS URL TOKEN                (a running `toolshelf serve --http`)
Prints one JSON object with what the client saw.
"""

import asyncio
import json
import sys

from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@asynccontextmanager
async def connected(where: list[str]):
    """The client's two streams: to a toolshelf it starts, or to one serving HTTP."""
    if where[0] == "--":
        async with stdio_client(StdioServerParameters(command=where[1], args=where[2:])) as streams:
            yield streams
        return
    url, token = where
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams[0], streams[1]


async def call(session: ClientSession, name: str, arguments: dict, script: bool):
    """The call through use_tool, or from a run_code script."""
    if script:
        code = f"await call_tool('dev/fixture/{name}', {arguments!r})"
        return await session.call_tool("run_code", {"code": code})
    call = {"tool": {"toolbox": "dev", "server": "fixture", "name": name}, "arguments": arguments}
    return await session.call_tool("use_tool", call)


async def main(answers: list[str], where: list[str], script: bool) -> dict:
    seen: dict = {"asked": [], "calls": []}
    pending = list(answers)

    async def elicitation(context, params: types.ElicitRequestParams):
        seen["asked"].append(params.message)
        return types.ElicitResult(action=pending.pop(0))

    callback = None if answers == ["none"] else elicitation
    async with connected(where) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            await session.call_tool("open_toolbox", {"toolbox": "dev"})
            for name in ["echo"] * len(answers) + ["sleep"]:
                arguments = {"said": "hi"} if name == "echo" else {"ms": 1}
                result = await call(session, name, arguments, script)
                text = "\n".join(block.text for block in result.content if block.type == "text")
                seen["calls"].append({"tool": name, "error": result.is_error, "text": text})
    return seen


if __name__ == "__main__":
    script = sys.argv[1] == "--script"
    args = sys.argv[2:] if script else sys.argv[1:]
    print(json.dumps(asyncio.run(main(args[0].split(","), args[1:], script))))
