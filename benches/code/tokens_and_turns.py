"""Tokens and turns: the tasks of tasks.py over the filesystem, memory and everything servers
(the npm packages tests/interop pins), in one run, three ways:

- step by step: each call through toolshelf's `use_tool`, one agent turn each;
- one `run_code` script on the same `toolshelf serve --code`;
- the same script through FastMCP 4.1.2's CodeMode (its `execute` tool, pydantic-monty's
  sandbox) in front of the same children, each proxied and mounted under its server's name.

The agent is the Python mcp SDK's client over stdio, declaring roots (the notes' folder),
sampling and elicitation, as desktop clients do; FastMCP's is a fastmcp Client in the same
process as its server (no transport: that favours FastMCP's times). What the agent reads is the
text of each answer; what it writes is each call's arguments as JSON. Tokens are o200k_base
(count_tokens.mjs of benches/search), counted as if the notes' folder were /work/notes, so
that where a run puts it does not change them. Each script runs once to warm up, then RUNS times (5
unless given); the time per script is the median. The three answers of every task must be equal, or this fails.

Usage: tokens_and_turns.py TOOLSHELF NODE OUT_DIR [RUNS]   (prints the report as JSON; OUT_DIR is scratch)
"""

import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import Client, FastMCP  # noqa: E402 (after the log level it reads at import)
from fastmcp.client.transports import StdioTransport  # noqa: E402
from fastmcp.experimental.transforms.code_mode import CodeMode  # noqa: E402
from fastmcp.server import create_proxy  # noqa: E402
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tasks import TASKS, fastmcp_script, script_for, write_notes  # noqa: E402

HERE = Path(__file__).resolve().parent


def servers(interop: Path, notes: Path, memory_file: Path) -> dict:
    bin_dir = interop / "node_modules/.bin"
    return {
        "files": ("fs", {"command": str(bin_dir / "mcp-server-filesystem"), "args": [str(notes)]}),
        "memory": ("memory", {"command": str(bin_dir / "mcp-server-memory"), "args": [],
                              "env": {"MEMORY_FILE_PATH": str(memory_file)}}),
        "demo": ("everything", {"command": str(bin_dir / "mcp-server-everything"), "args": ["stdio"]}),
    }


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def value_of(result):
    """What an agent makes of an answer: its structured content, else its text as JSON, else the text."""
    if result.structured_content is not None:
        return result.structured_content
    text = text_of(result)
    try:
        return json.loads(text)
    except ValueError:
        return text


class Agent:
    """The client side of one toolshelf session: what it wrote and read, call by call."""

    def __init__(self, session: ClientSession):
        self.session, self.written, self.read = session, [], []

    async def call(self, tool: str, arguments: dict):
        self.written.append(json.dumps(arguments))
        result = await self.session.call_tool(tool, arguments)
        self.read.append(text_of(result))
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {text_of(result)}")
        return result

    async def use_tool(self, name: str, arguments: dict):
        toolbox, server, tool = name.split("/")
        identifier = {"toolbox": toolbox, "server": server, "name": tool}
        return value_of(await self.call("use_tool", {"tool": identifier, "arguments": arguments}))


@contextlib.asynccontextmanager
async def toolshelf(binary: str, config: Path, notes: Path, env: dict):
    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=notes.as_uri())])

    async def sampling(context, params):
        return types.ErrorData(code=-32600, message="this agent does not sample")

    async def elicitation(context, params):
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(command=binary, args=["serve", "--code", "--config", str(config)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(
            read, write, list_roots_callback=roots, sampling_callback=sampling,
            elicitation_callback=elicitation) as session:
        await session.initialize()
        # Discovery costs the same whichever way the agent then goes: opened here, not counted.
        for toolbox in ("files", "memory", "demo"):
            await session.call_tool("open_toolbox", {"toolbox": toolbox})
        yield session


@contextlib.asynccontextmanager
async def fastmcp_code_mode(children: dict):
    async with contextlib.AsyncExitStack() as stack:
        front = FastMCP("code-benchmark")
        for server, child in children.values():
            transport = StdioTransport(command=child["command"], args=child["args"], env=child.get("env"))
            client = await stack.enter_async_context(Client(transport))
            front.mount(create_proxy(client), namespace=server)
        front.add_transform(CodeMode())
        yield await stack.enter_async_context(Client(front))


async def timed(run, script: str, runs: int) -> tuple:
    """The answer's text after a warm-up run, and the median time of RUNS more, in ms."""
    text = await run(script)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        await run(script)
        times.append((time.perf_counter() - began) * 1000)
    return text, round(statistics.median(times), 1)


async def measure(binary: str, interop: Path, out: Path, runs: int) -> dict:
    notes = out / "notes"
    write_notes(notes)
    for memory in out.glob("memory-*.jsonl"):
        memory.unlink()
    ours = servers(interop, notes, out / "memory-toolshelf.jsonl")
    config = {"toolboxes": {box: {"mcpServers": {server: child}} for box, (server, child) in ours.items()}}
    config_path = out / "toolboxes.json"
    config_path.write_text(json.dumps(config))
    env = dict(os.environ, XDG_CACHE_HOME=str(out / "cache"), RUST_LOG="warn")
    report = {}
    async with toolshelf(binary, config_path, notes, env) as session:
        for task in TASKS:
            agent = Agent(session)
            answer = await task["steps"](agent.use_tool, str(notes))
            steps = {"calls": len(agent.written), "written": agent.written, "read": agent.read}
            script = script_for(task, str(notes))
            agent = Agent(session)
            scripted = await agent.call("run_code", {"code": script})
            text, ms = await timed(lambda code: agent.session.call_tool("run_code", {"code": code}), script, runs)
            report[task["name"]] = {"ask": task["ask"], "answer": answer, "use_tool": steps,
                                    "run_code": {"calls": 1, "written": agent.written[:1], "read": [text_of(scripted)],
                                                 "ms": ms, "answer": json.loads(text_of(scripted))}}
    async with fastmcp_code_mode(servers(interop, notes, out / "memory-fastmcp.jsonl")) as client:
        for task in TASKS:
            script = fastmcp_script(script_for(task, str(notes)))
            result, ms = await timed(lambda code: client.call_tool("execute", {"code": code}), script, runs)
            text = text_of(result)
            report[task["name"]]["fastmcp_code_mode"] = {
                "calls": 1, "written": [json.dumps({"code": script})], "read": [text], "ms": ms,
                "answer": json.loads(text)}
    return report


def token_counts(node: str, interop: Path, notes: Path, report: dict) -> None:
    """Replaces each way's texts by their bytes and o200k_base tokens, with `notes` read as
    /work/notes."""
    ways = [(task, way) for task in report for way in ("use_tool", "run_code", "fastmcp_code_mode")]
    texts = [["".join(report[task][way][kind]).replace(str(notes), "/work/notes")
              for kind in ("written", "read")] for task, way in ways]
    flat = [text for pair in texts for text in pair]
    done = subprocess.run([node, str(HERE.parent / "search/count_tokens.mjs")], input=json.dumps(flat),
                          env=dict(os.environ, TOOLSHELF_INTEROP=f"{interop}/"),
                          capture_output=True, text=True, check=True)
    counts = iter(json.loads(done.stdout))
    for (task, way), pair in zip(ways, texts):
        figures = report[task][way]
        for kind, text in zip(("written", "read"), pair):
            figures[kind] = {"bytes": len(text.encode()), "tokens": next(counts)}


def main(binary: str, node: str, out: Path, runs: int) -> dict:
    out = out.resolve()
    shutil.rmtree(out / "notes", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    interop = Path(os.environ.get("TOOLSHELF_INTEROP", HERE.parent.parent / "target/interop"))
    report = asyncio.run(measure(binary, interop, out, runs))
    for name, task in report.items():
        answers = [task["answer"], task["run_code"].pop("answer"), task["fastmcp_code_mode"].pop("answer")]
        if any(answer != answers[0] for answer in answers):
            sys.exit(f"task {name}: the answers differ (use_tool, run_code, FastMCP): {answers}")
    token_counts(node, interop, out / "notes", report)
    return report


if __name__ == "__main__":
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    print(json.dumps(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), runs), indent=1))
