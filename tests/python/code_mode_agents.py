"""Two agents running scripts on one `toolshelf serve --http --code`: the Python `mcp` SDK's
streamable HTTP client, declaring roots, sampling and elicitation as desktop clients do.

Alice runs a script that calls a tool, then computes until its CPU limit stops it; while it
computes, Bob's scripts run: one call of a tool both may use, one of a tool the access rules
withhold from him.

Usage: code_mode_agents.py URL ALICE_TOKEN BOB_TOKEN EVENTS_FILE
Prints {"alice": {...}, "bob": {...}, "alice_done_before_bob": bool} as JSON.
"""

import asyncio
import json
import sys

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


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


def seen(result) -> dict:
    text = "\n".join(block.text for block in result.content if block.type == "text")
    kind = ((result.structured_content or {}).get("error") or {}).get("kind")
    return {"text": text, "error": bool(result.is_error), "kind": kind}


async def session_of(url: str, token: str, work):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(
                streams[0],
                streams[1],
                list_roots_callback=roots,
                sampling_callback=sampling,
                elicitation_callback=elicitation,
            ) as session:
                await session.initialize()
                return await work(session)


async def started(events: str, line: str) -> None:
    for _ in range(1000):
        try:
            with open(events) as file:
                if line in file.read():
                    return
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.01)
    raise TimeoutError(f"{line!r} never appeared in {events}")


async def main(url: str, alice_token: str, bob_token: str, events: str) -> dict:
    async def alice(session):
        tools = await session.list_tools()
        script = "await call_tool('dev/fixture/echo', {'who': 'alice'})\nwhile True:\n    pass"
        result = await session.call_tool("run_code", {"code": script})
        return {"tools": [tool.name for tool in tools.tools], **seen(result)}

    alice_task = asyncio.create_task(session_of(url, alice_token, alice))
    await started(events, "start echo")

    async def bob(session):
        shared = await session.call_tool(
            "run_code", {"code": "(await call_tool('dev/fixture/echo', {'who': 'bob'}))['who']"}
        )
        done = alice_task.done()
        withheld = await session.call_tool(
            "run_code", {"code": "await call_tool('dev/fixture/sleep', {'ms': 1})"}
        )
        return {"shared": seen(shared), "withheld": seen(withheld), "alice_done": done}

    bob_seen = await session_of(url, bob_token, bob)
    alice_seen = await alice_task
    return {
        "alice": alice_seen,
        "bob": bob_seen,
        "alice_done_before_bob": bob_seen.pop("alice_done"),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
