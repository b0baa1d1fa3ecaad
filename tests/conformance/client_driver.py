"""Drives toolshelf's client role for the MCP conformance suite's client mode.

The suite starts a mock server for a scenario and runs this script with the server's URL as the
last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO. The script writes a config
with that URL as a remote child, starts `toolshelf serve` (the binary in TOOLSHELF_BIN) and, as
its agent, opens the toolbox and calls the scenario's tools through `use_tool`. The suite grades
what reached its server; this script fails only when toolshelf itself fails.
Standard library only: the suite runs it with whatever `python3` is on PATH.
"""

import json
import os
import subprocess
import sys
import tempfile

# The tools each scenario expects its client to call, with their arguments.
CALLS = {
    "initialize": [],
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
}


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    calls = CALLS.get(scenario)
    if calls is None:
        print(f"client_driver: no calls known for scenario {scenario!r}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "toolboxes.json")
        with open(config, "w") as file:
            servers = {"mock": {"url": url, "startupTimeout": 20, "callTimeout": 20}}
            json.dump({"toolboxes": {"conformance": {"mcpServers": servers}}}, file)
        shelf = subprocess.Popen(
            [os.environ["TOOLSHELF_BIN"], "serve", "--config", config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            return drive(shelf, calls)
        finally:
            shelf.stdin.close()
            shelf.wait(timeout=20)


def drive(shelf: subprocess.Popen, calls: list) -> int:
    next_id = iter(range(1, 1000))

    def request(method: str, params: dict) -> dict:
        own = next(next_id)
        line = {"jsonrpc": "2.0", "id": own, "method": method, "params": params}
        shelf.stdin.write(json.dumps(line) + "\n")
        shelf.stdin.flush()
        for text in shelf.stdout:
            message = json.loads(text)
            if message.get("id") == own and "method" not in message:
                return message
        raise RuntimeError(f"toolshelf ended before answering {method}")

    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "conformance-driver", "version": "1"},
    }
    request("initialize", init)
    shelf.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    shelf.stdin.flush()
    opened = request("tools/call", {"name": "open_toolbox", "arguments": {"toolbox": "conformance"}})
    print(json.dumps(opened), file=sys.stderr)
    if opened.get("result", {}).get("isError"):
        return 1
    for name, arguments in calls:
        tool = {"toolbox": "conformance", "server": "mock", "name": name}
        answer = request("tools/call", {"name": "use_tool", "arguments": {"tool": tool, "arguments": arguments}})
        print(json.dumps(answer), file=sys.stderr)
        if "error" in answer or answer.get("result", {}).get("isError"):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
