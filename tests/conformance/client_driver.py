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
import urllib.request

# The tools each scenario expects its client to call, with their arguments.
CALLS = {
    "initialize": [],
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
}
# The auth scenarios' server has one tool; the client logs in first (`toolshelf login`).
AUTH_CALLS = [("test-tool", {})]


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    oauth = scenario.startswith("auth/")
    calls = AUTH_CALLS if oauth else CALLS.get(scenario)
    if calls is None:
        print(f"client_driver: no calls known for scenario {scenario!r}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "toolboxes.json")
        server = {"url": url, "startupTimeout": 20, "callTimeout": 20}
        if oauth:
            server["auth"] = "oauth"
            context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
            if "client_id" in context:
                server["oauth"] = {"clientId": context["client_id"], "clientSecret": context["client_secret"]}
            else:
                # The suite's stand-in for a hosted client ID metadata document; used only where
                # the authorization server supports those, registration otherwise.
                server["oauth"] = {"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
        with open(config, "w") as file:
            json.dump({"toolboxes": {"conformance": {"mcpServers": {"mock": server}}}}, file)
        # The login's tokens go to this run's own data folder.
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(folder, "data"))
        if oauth and not log_in(config, env):
            return 1
        shelf = subprocess.Popen(
            [os.environ["TOOLSHELF_BIN"], "serve", "--config", config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        # A refusal that asks for a new login (step-up authorization) gets one, as a user would
        # give it, and the call is made again.
        again = (lambda: log_in(config, env)) if oauth else None
        try:
            return drive(shelf, calls, again)
        finally:
            shelf.stdin.close()
            shelf.wait(timeout=20)


def log_in(config: str, env: dict) -> bool:
    """Runs `toolshelf login` as a user would, with the mock authorization server standing in
    for the browser: it redirects at once to toolshelf's loopback callback."""
    login = subprocess.Popen(
        [os.environ["TOOLSHELF_BIN"], "login", "--no-browser", "--config", config, "conformance/mock"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    for line in login.stderr:
        print(line, end="", file=sys.stderr)
        if line.startswith("http"):
            # urllib follows the authorization server's redirect to the callback.
            with urllib.request.urlopen(line.strip(), timeout=20) as page:
                page.read()
            break
    rest = login.stderr.read()
    print(rest, end="", file=sys.stderr)
    return login.wait(timeout=20) == 0


def drive(shelf: subprocess.Popen, calls: list, log_in_again) -> int:
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
        call = {"name": "use_tool", "arguments": {"tool": tool, "arguments": arguments}}
        answer = request("tools/call", call)
        print(json.dumps(answer), file=sys.stderr)
        if log_in_again and "toolshelf login" in json.dumps(answer) and log_in_again():
            answer = request("tools/call", call)
            print(json.dumps(answer), file=sys.stderr)
        if "error" in answer or answer.get("result", {}).get("isError"):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
