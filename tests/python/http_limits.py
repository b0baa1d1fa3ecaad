"""The limits of `toolshelf serve --http`, met by the Python `mcp` SDK's streamable HTTP client.

Usage: http_limits.py URL TOKEN, against a config with `http: {maxSessions: 1,
maxCallsPerSession: 1, sessionIdleTimeout: 2}` and toolbox `dev` whose server `mine` is
`"sharing": "session"`. Agent A takes the only session; B's `initialize` is refused; A's second
call while one is in flight is refused; A then idles past the expiry, which stops its own
child, and a new agent C gets the freed session (and crashes its child once). Prints what was seen as JSON.
"""

import asyncio
import json
import os
import sys
import time

import anyio

from http_client import Agent


async def main(url: str, token: str) -> dict:
    seen: dict = {}
    a, b, c = Agent("A"), Agent("B"), Agent("C")
    async with anyio.create_task_group() as agents:
        agents.start_soon(a.run, url, token)
        await a.ready.wait()
        agents.start_soon(b.run, url, token)
        await b.ready.wait()
        seen["b_refused"] = b.refused

        seen["opened"] = await a.open("dev")
        pid = await a.use("dev", "mine", "pid")
        async with anyio.create_task_group() as calls:
            calls.start_soon(a.use, "dev", "mine", "sleep", {"ms": 1000})
            await anyio.sleep(0.3)
            try:
                seen["second_call"] = await a.use("dev", "mine", "echo", {"said": "too many"})
            except Exception as error:
                seen["second_call_refused"] = str(error)
        seen["after_limit"] = await a.use("dev", "mine", "echo", {"said": "one at a time"})

        # A says nothing for longer than the expiry: its session ends, and its child stops.
        began = time.monotonic()
        while os.path.exists(f"/proc/{pid}") and time.monotonic() - began < 15:
            await asyncio.sleep(0.1)
        seen["child_stopped_after_s"] = None if os.path.exists(f"/proc/{pid}") else round(time.monotonic() - began, 1)

        agents.start_soon(c.run, url, token)
        await c.ready.wait()
        seen["c_refused"] = c.refused
        seen["c_opened"] = await c.open("dev") if c.refused is None else None
        if c.refused is None:
            # A crash, found by the next call, which starts the server again.
            await c.use("dev", "mine", "crash")
            seen["c_after_crash"] = await c.use("dev", "mine", "echo", {"said": "again"})
            await c.close()
        agents.cancel_scope.cancel()
    return seen


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    print(json.dumps(asyncio.run(main(*sys.argv[1:3]))))
