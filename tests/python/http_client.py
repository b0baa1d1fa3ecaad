"""Two agents on one `toolshelf serve --http`: the Python `mcp` SDK's streamable HTTP client.

Usage: http_client.py URL TOKEN. The config has toolbox `dev` with `fixture` (shared by every
session) and `mine` (`"sharing": "session"`), and toolbox `ops` with `fixture`. Agents A and B
hold sessions at the same time, in steps whose order is fixed:

1. A opens `dev`, B opens `ops`: B's call into `dev` gets seed 003's "is not open"; A's call
   has its progress.
2. B opens `dev`: both see one `dev/fixture` process and a `dev/mine` process each.
3. A's call asks A a question (elicitation) on the shared child and gets A's answer; while B
   has a call in flight to that child as well, the question is refused with the reason; on
   `mine` it reaches A regardless.
4. A cancels a call; B's call to the same child is untouched.
5. A's session ends (DELETE): its `mine` process is gone within 10 s, while B's and the
   shared one still run.

Prints what was seen as JSON. An empty TOKEN sends no `Authorization` header.
"""

import asyncio
import json
import os
import sys
import time

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def alive(pid: str) -> bool:
    return os.path.exists(f"/proc/{pid}")


class Agent:
    def __init__(self, name: str):
        self.name = name
        self.asked: list = []
        self.progress: list = []
        self.ready = anyio.Event()
        self.leave = anyio.Event()
        self.left = anyio.Event()
        self.refused: str | None = None

    async def run(self, url: str, token: str) -> None:
        """Holds the session in a task of its own (anyio's scopes end in the task that began
        them) until `leave` is set; leaving sends the SDK's DELETE."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}

        async def elicitation(context, params: types.ElicitRequestParams):
            self.asked.append(params.message)
            return types.ElicitResult(action="accept", content={"answer": f"from {self.name}"})

        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], elicitation_callback=elicitation) as session:
                    self.session = session
                    try:
                        self.protocol = (await session.initialize()).protocol_version
                    except Exception as error:  # a refusal is what some tests look for
                        self.refused = str(error)
                        self.ready.set()
                        self.left.set()
                        return
                    self.ready.set()
                    await self.leave.wait()
        self.left.set()

    async def open(self, toolbox: str) -> bool:
        return not (await self.session.call_tool("open_toolbox", {"toolbox": toolbox})).is_error

    async def use(self, toolbox: str, server: str, name: str, arguments: dict | None = None) -> str:
        async def progress(value, total, message):
            self.progress.append(value)

        call = {"tool": {"toolbox": toolbox, "server": server, "name": name}, "arguments": arguments or {}}
        result = await self.session.call_tool("use_tool", call, progress_callback=progress)
        return text(result)

    async def close(self) -> None:
        self.leave.set()
        await self.left.wait()


async def main(url: str, token: str) -> dict:
    a, b = Agent("A"), Agent("B")
    async with anyio.create_task_group() as agents:
        agents.start_soon(a.run, url, token)
        agents.start_soon(b.run, url, token)
        await a.ready.wait()
        await b.ready.wait()
        return await steps(a, b)


async def steps(a: Agent, b: Agent) -> dict:
    seen: dict = {"protocol": a.protocol, "tools": sorted(t.name for t in (await a.session.list_tools()).tools)}

    # 1. Different open toolboxes.
    seen["opened"] = [await a.open("dev"), await b.open("ops")]
    seen["b_dev_closed"] = await b.use("dev", "fixture", "echo", {"said": "b"})
    seen["b_ops"] = await b.use("ops", "fixture", "echo", {"said": "b on ops"})
    seen["a_echo"] = await a.use("dev", "fixture", "echo", {"said": "over http"})
    seen["a_fail"] = await a.use("dev", "fixture", "fail")
    await a.use("dev", "fixture", "progress", {"steps": 3})
    seen["a_progress"] = list(a.progress)

    # 2. One shared process, one `mine` per session.
    await b.open("dev")
    pids = {
        "a_shared": await a.use("dev", "fixture", "pid"),
        "b_shared": await b.use("dev", "fixture", "pid"),
        "a_mine": await a.use("dev", "mine", "pid"),
        "b_mine": await b.use("dev", "mine", "pid"),
        "ops": await b.use("ops", "fixture", "pid"),
    }
    seen["pids"] = pids

    # 3. A question of a shared child reaches the session whose call it serves.
    seen["a_ask_alone"] = await a.use("dev", "fixture", "ask")
    async with anyio.create_task_group() as group:
        group.start_soon(b.use, "dev", "fixture", "sleep", {"ms": 1500})
        await anyio.sleep(0.5)
        seen["a_ask_beside_b"] = await a.use("dev", "fixture", "ask")
        seen["a_ask_mine_beside_b"] = await a.use("dev", "mine", "ask")
    seen["a_asked"] = a.asked
    seen["b_asked"] = b.asked

    # 4. A's cancellation reaches A's call only.
    b_sleep = {}

    async def b_sleeps():
        b_sleep["text"] = await b.use("dev", "fixture", "sleep", {"ms": 800})

    async with anyio.create_task_group() as group:
        group.start_soon(b_sleeps)
        with anyio.move_on_after(0.3):
            await a.use("dev", "fixture", "sleep", {"ms": 5000})
            seen["a_sleep_finished"] = True
    seen["b_sleep"] = b_sleep.get("text")
    seen["a_after_cancel"] = await a.use("dev", "fixture", "echo", {"said": "still here"})

    # 5. A's session ends; its own child stops, B's and the shared one stay.
    await a.close()
    began = time.monotonic()
    while alive(pids["a_mine"]) and time.monotonic() - began < 10:
        await asyncio.sleep(0.1)
    seen["a_mine_stopped_s"] = None if alive(pids["a_mine"]) else round(time.monotonic() - began, 1)
    seen["b_mine_alive"] = alive(pids["b_mine"])
    seen["shared_alive"] = alive(pids["a_shared"])
    seen["b_after"] = await b.use("dev", "fixture", "echo", {"said": "b still here"})
    await b.close()
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:3]))))
