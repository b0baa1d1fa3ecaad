"""Agents reaching three toolshelf replicas through one load balancer (HAProxy).

Usage: replicas_client.py URL TOKEN. Each replica runs its own `dev/fixture`, so the process
id its `pid` tool answers names the replica that served a call.

Phase 1: six `mcp` SDK agents (2025-11-25, with sessions) open `dev` and call `pid` three
times each, and a fastmcp 4.1.2 client (2026-07-28, no session) calls `pid` six times. Prints
what was seen as one JSON line, then waits for a line on stdin (the test kills a replica).
Phase 2: every session agent calls `echo` with a value of its own; an agent whose replica is
gone gets the error and starts a new session, then calls again. Prints a second JSON line.
"""

import json
import os
import sys

import anyio
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

sys.path.insert(0, os.path.dirname(__file__))
from http_client import Agent  # noqa: E402

SESSIONS = 6


async def sessionless_pids(url: str, token: str) -> list:
    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"})
    pids = []
    async with Client(transport) as client:
        call = {"tool": {"toolbox": "dev", "server": "fixture", "name": "pid"}, "arguments": {}}
        for _ in range(SESSIONS):
            result = await client.call_tool("use_tool", call, raise_on_error=False)
            pids.append("\n".join(block.text for block in result.content if block.type == "text"))
    return pids


def say(value: dict) -> None:
    print(json.dumps(value), flush=True)


async def main(url: str, token: str) -> None:
    agents = [Agent(f"agent{number}") for number in range(SESSIONS)]
    async with anyio.create_task_group() as group:
        for agent in agents:
            group.start_soon(agent.run, url, token)
            await agent.ready.wait()
        sessions = []
        for agent in agents:
            await agent.open("dev")
            sessions.append([await agent.use("dev", "fixture", "pid") for _ in range(3)])
        say({"sessions": sessions, "sessionless": await sessionless_pids(url, token)})

        await anyio.to_thread.run_sync(sys.stdin.readline)

        after = []
        for number, agent in enumerate(list(agents)):
            said = f"agent {number}, after the kill"
            seen = {"said": said}
            try:
                seen["answer"] = await agent.use("dev", "fixture", "echo", {"said": said})
            except Exception as error:
                seen["error"] = str(error)
                renewed = Agent(f"agent{number}-again")
                group.start_soon(renewed.run, url, token)
                await renewed.ready.wait()
                await renewed.open("dev")
                seen["answer_after_new_session"] = await renewed.use("dev", "fixture", "echo", {"said": said})
                seen["pid_after_new_session"] = await renewed.use("dev", "fixture", "pid")
                agents.append(renewed)
            after.append(seen)
        say({"after": after})
        group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
