"""Hostile scripts on one `toolshelf serve --http --code`, sent by the Python `mcp` SDK's
streamable HTTP client (declaring roots, sampling and elicitation as desktop clients do),
while a second agent keeps calling a tool through `use_tool`.

Alice runs each script of CASES (a JSON list) and, after each, one `use_tool` call; then a
script she cancels while its child's call sleeps; then a script of two calls at once, which
the session's call budget refuses one of. Bob calls `echo` until Alice is done.

Usage: code_mode_hostile.py URL ALICE_TOKEN BOB_TOKEN EVENTS_FILE CASES
Prints {"cases": [...], "budget": {...}, "after_cancel": {...}, "bob": {...}} as JSON.
"""

import asyncio
import json
import sys

from code_mode_agents import seen, session_of


def count(events: str, line: str) -> int:
    with open(events) as file:
        return file.read().count(line)


async def more(events: str, line: str, than: int) -> None:
    for _ in range(1000):
        if count(events, line) > than:
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no new {line!r} in {events}")

BUDGET = """import asyncio
await asyncio.gather(call_tool('dev/fx/sleep', {'ms': 300}),
                     call_tool('dev/fx/sleep', {'ms': 300}))"""


async def echo(session, n: int) -> str:
    result = await session.call_tool(
        "use_tool", {"tool": {"toolbox": "dev", "server": "fx", "name": "echo"},
                     "arguments": {"n": n}})
    return seen(result)["text"]


async def main(url: str, alice_token: str, bob_token: str, events: str, cases: str) -> dict:
    alice_done = asyncio.Event()

    async def alice(session):
        await session.call_tool("open_toolbox", {"toolbox": "dev"})
        report = {"cases": []}
        for script in json.loads(cases):
            result = seen(await session.call_tool("run_code", {"code": script}))
            report["cases"].append({**result, "after": await echo(session, 1)})
        begun, cancelled = count(events, "start sleep"), count(events, "cancelled sleep")
        sleeping = asyncio.create_task(session.call_tool(
            "run_code", {"code": "await call_tool('dev/fx/sleep', {'ms': 60000})"}))
        await more(events, "start sleep", begun)
        sleeping.cancel()
        await more(events, "cancelled sleep", cancelled)
        report["after_cancel"] = seen(await session.call_tool(
            "run_code", {"code": "await call_tool('dev/fx/echo', {'still': 'here'})"}))
        report["budget"] = seen(await session.call_tool("run_code", {"code": BUDGET}))
        alice_done.set()
        return report

    async def bob(session):
        await session.call_tool("open_toolbox", {"toolbox": "dev"})
        calls, wrong = 0, []
        while not alice_done.is_set():
            calls += 1
            text = await echo(session, calls)
            if text != json.dumps({"n": calls}, separators=(",", ":")):
                wrong.append(text)
        return {"calls": calls, "wrong": wrong}

    alice_seen, bob_seen = await asyncio.gather(
        session_of(url, alice_token, alice), session_of(url, bob_token, bob))
    return {**alice_seen, "bob": bob_seen}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:6]))))
