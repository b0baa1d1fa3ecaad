"""Search quality on public data, toolshelf beside FastMCP's BM25 search transform, in one run.

The data is BFCL's multi-turn set (see README.md here: provenance, licence, how it is read):
eight API classes become eight MCP servers (catalog_server.py, each in a toolbox of its name),
and each user turn becomes a query whose expected tools are the functions its ground truth
calls. Both systems see the same servers: toolshelf lists them once (`toolshelf tools`, which
fills its persisted catalog) and is asked with `toolshelf search --eval`; FastMCP proxies the
same eight servers and is asked through its `search_tools` tool, with a fastmcp Client. Queries
are split by conversation: every fourth conversation is held out (never used to tune).

Then the size of a 5-tool answer, for every held-out query: toolshelf's `open_toolbox {query}`
(through the Python mcp SDK's client) beside FastMCP's `search_tools` in its default JSON form
and its compact markdown form, in bytes and in o200k_base tokens (count_tokens.mjs).

Usage: quality.py TOOLSHELF_BIN NODE OUT_DIR   (prints one JSON object; OUT_DIR is scratch)
"""

import asyncio
import contextlib
import hashlib
import time
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import Client, FastMCP  # noqa: E402 (after the log level it reads at import)
from fastmcp.client.transports import StdioTransport  # noqa: E402
from fastmcp.server import create_proxy
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.server.transforms.search.base import serialize_tools_for_output_markdown
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
DATA = "bfcl_eval/data/"
SERVERS = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
HELD_OUT_EVERY = 4
TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def wheel(out: Path) -> zipfile.ZipFile:
    """BFCL's package, pinned by version and hash, from PyPI (once)."""
    path = out / WHEEL
    if not path.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
             "--disable-pip-version-check", "-d", str(out), "bfcl-eval==2026.3.23"],
            check=True,
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {WHEEL_SHA256}")
    return zipfile.ZipFile(path)


def json_schema(node):
    """BFCL's Python-flavoured types as JSON Schema's."""
    if isinstance(node, dict):
        node = {key: json_schema(value) for key, value in node.items()}
        if node.get("type") in TYPES:
            kind = TYPES[node["type"]]
            if kind is None:
                node.pop("type")
            else:
                node["type"] = kind
        return node
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    return node


def lines(archive: zipfile.ZipFile, name: str) -> list:
    return [json.loads(line) for line in archive.read(DATA + name).decode().splitlines() if line.strip()]


def catalog(archive: zipfile.ZipFile, out: Path) -> tuple[dict, dict]:
    """The servers' tool files and toolshelf's config; and each tool's server."""
    server_of, toolboxes = {}, {}
    for server in SERVERS.values():
        tools = []
        for doc in lines(archive, f"multi_turn_func_doc/{server}.json"):
            tools.append({"name": doc["name"], "description": doc["description"],
                          "inputSchema": json_schema(doc["parameters"])})
            server_of[doc["name"]] = server
        path = out / f"{server}.json"
        path.write_text(json.dumps(tools))
        toolboxes[server] = {"mcpServers": {server: {
            "command": sys.executable, "args": [str(HERE / "catalog_server.py"), str(path)]}}}
    config = {"catalog": {"prestart": "firstCall"}, "toolboxes": toolboxes}
    return config, server_of


def cases(archive: zipfile.ZipFile, server_of: dict) -> tuple[list, list]:
    """Every user turn with the tools its ground truth calls: (tuning, held out)."""
    answers = {row["id"]: row["ground_truth"] for row in lines(archive, "possible_answer/BFCL_v4_multi_turn_base.json")}
    tuning, held_out = [], []
    for row in lines(archive, "BFCL_v4_multi_turn_base.json"):
        number = int(row["id"].rsplit("_", 1)[1])
        for turn, calls in zip(row["question"], answers[row["id"]]):
            names = sorted({call.split("(", 1)[0] for call in calls})
            if not turn or not names:
                continue
            case = {"query": turn[-1]["content"], "expected": [
                {"toolbox": server_of[name], "server": server_of[name], "name": name} for name in names]}
            (held_out if number % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else tuning).append(case)
    return tuning, held_out


def toolshelf_eval(binary: str, config: Path, env: dict, queries: Path) -> dict:
    done = subprocess.run([binary, "search", "--eval", str(queries), "--json", "--config", str(config)],
                          env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    return {key: round(result[key], 4) for key in ("queries", "hit@1", "hit@3", "hit@5", "mrr@10")}


def scores(ranked: list, case: dict) -> tuple:
    expected = {(e["server"], e["name"]) for e in case["expected"]}
    rank = next((at + 1 for at, tool in enumerate(ranked[:10]) if tool in expected), None)
    return rank


def summary(ranks: list) -> dict:
    count = len(ranks)
    hit = lambda k: round(sum(1 for r in ranks if r is not None and r <= k) / count, 4)
    mrr = round(sum(1 / r for r in ranks if r is not None) / count, 4)
    return {"queries": count, "hit@1": hit(1), "hit@3": hit(3), "hit@5": hit(5), "mrr@10": mrr}


@contextlib.asynccontextmanager
async def fastmcp_proxy(config: dict, limit: int, serializer=None):
    """FastMCP in front of the same servers, each proxied through a client connected once (a
    proxy of a config would start the servers anew for every search) and mounted under its
    name, so FastMCP names their tools `server_tool`, as its multi-server proxy does."""
    async with contextlib.AsyncExitStack() as stack:
        front = FastMCP("search-benchmark")
        for name, box in config["toolboxes"].items():
            server = box["mcpServers"][name]
            transport = StdioTransport(command=server["command"], args=server["args"])
            client = await stack.enter_async_context(Client(transport))
            front.mount(create_proxy(client), namespace=name)
        settings = {"max_results": limit}
        if serializer:
            settings["search_result_serializer"] = serializer
        front.add_transform(BM25SearchTransform(**settings))
        yield front


def unprefixed(name: str) -> tuple:
    """FastMCP names a proxied tool `server_tool`."""
    for server in SERVERS.values():
        if name.startswith(server + "_"):
            return (server, name[len(server) + 1:])
    return ("", name)


async def fastmcp_ranks(config: dict, all_cases: list) -> list:
    async with fastmcp_proxy(config, 10) as front, Client(front) as client:
        ranks = []
        for case in all_cases:
            result = await client.call_tool("search_tools", {"query": case["query"]})
            # No match is an answer without content.
            listed = json.loads(result.content[0].text) if result.content else []
            found = [unprefixed(tool["name"]) for tool in listed]
            ranks.append(scores(found, case))
        return ranks


async def answer_sizes(binary: str, config: dict, config_path: Path, env: dict, held_out: list) -> dict:
    texts = {"toolshelf": [], "fastmcp_json": [], "fastmcp_markdown": []}
    params = StdioServerParameters(command=binary, args=["serve", "--config", str(config_path)], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for case in held_out:
            result = await session.call_tool("open_toolbox", {"query": case["query"], "limit": 5})
            texts["toolshelf"].append(result.content[0].text)
    for key, serializer in (("fastmcp_json", None), ("fastmcp_markdown", serialize_tools_for_output_markdown)):
        async with fastmcp_proxy(config, 5, serializer) as front, Client(front) as client:
            for case in held_out:
                result = await client.call_tool("search_tools", {"query": case["query"]})
                texts[key].append(result.content[0].text if result.content else "")
    return texts


def token_counts(node: str, texts: dict) -> dict:
    flat = [text for key in texts for text in texts[key]]
    done = subprocess.run([node, str(HERE / "count_tokens.mjs")], input=json.dumps(flat),
                          capture_output=True, text=True, check=True)
    counts = iter(json.loads(done.stdout))
    sizes = {}
    for key, values in texts.items():
        tokens = [next(counts) for _ in values]
        sizes[key] = {"mean_bytes": round(sum(len(v.encode()) for v in values) / len(values)),
                      "mean_tokens_o200k": round(sum(tokens) / len(tokens))}
    return sizes


def main(binary: str, node: str, out: Path) -> dict:
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    archive = wheel(out)
    config, server_of = catalog(archive, out)
    config_path = out / "toolboxes.json"
    config_path.write_text(json.dumps(config))
    tuning, held_out = cases(archive, server_of)
    env = dict(os.environ, XDG_CACHE_HOME=str(out / "cache"), RUST_LOG="warn")
    for toolbox in config["toolboxes"]:
        subprocess.run([binary, "tools", "--config", str(config_path), toolbox], env=env,
                       capture_output=True, check=True)
    report = {"tools": len(server_of), "servers": len(SERVERS)}
    for split, split_cases in (("tuning", tuning), ("held_out", held_out)):
        path = out / f"{split}.jsonl"
        path.write_text("".join(json.dumps(case) + "\n" for case in split_cases))
        began = time.monotonic()
        ours = toolshelf_eval(binary, config_path, env, path)
        middle = time.monotonic()
        theirs = summary(asyncio.run(fastmcp_ranks(config, split_cases)))
        print(f"{split}: toolshelf {middle - began:.1f} s, fastmcp {time.monotonic() - middle:.1f} s", file=sys.stderr)
        report[split] = {"toolshelf": ours, "fastmcp_bm25": theirs}
    texts = asyncio.run(answer_sizes(binary, config, config_path, env, held_out))
    report["answer_5_tools"] = token_counts(node, texts)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])), indent=1))
