"""Instructions toolshelf runs, counted by callgrind (valgrind), which the machine's noise does
not move: from its start to its first `initialize` answer, and per `use_tool` call of the
fixture's `echo` on stdio (callgrind's total for N calls minus its total for none, over N), and
per call of its `big` returning 1 MB of text on stdio (20 calls).
Only toolshelf is counted, not its child. Beside them, the same per call for the stdio floor
(`toolshelf-floor stdio`, next to TOOLSHELF), which copies lines and parses nothing, and per
call of one session over `toolshelf serve --http` (with a token, one keep-alive connection of
Python's `http.client`; N calls minus none, as on stdio), and the same for the HTTP floor
(`toolshelf-floor http`, next to TOOLSHELF, called `echo` directly).

Usage: python3 benches/instructions.py [TOOLSHELF [FIXTURE [N]]]
(default: target/release/toolshelf, target/release/toolshelf-fixture, 2000). Prints JSON.
Compare two builds by giving each's TOOLSHELF in turn.
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

toolshelf = sys.argv[1] if len(sys.argv) > 1 else "target/release/toolshelf"
fixture = sys.argv[2] if len(sys.argv) > 2 else "target/release/toolshelf-fixture"
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
folder = tempfile.mkdtemp()
config = os.path.join(folder, "config.json")
with open(config, "w") as file:
    json.dump({"toolboxes": {"bench": {"mcpServers": {"fx": {"command": os.path.abspath(fixture), "idleTimeout": 0}}}}}, file)
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "callgrind", "version": "0"}}}


def counted(steps, command=None):
    """callgrind's instruction total for a toolshelf (or `command`) that is sent `steps` and
    then stdin's end."""
    out = os.path.join(folder, f"callgrind.{len(steps)}")
    command = command or [toolshelf, "serve", "--config", config, "--no-cache"]
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": "error"})
    for message in steps:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        while "id" in message:
            answer = json.loads(process.stdout.readline())
            if answer.get("id") == message["id"]:
                assert "result" in answer, answer
                break
    process.stdin.close()
    process.wait()
    with open(out) as file:
        return next(int(line.split()[1]) for line in file if line.startswith(("summary:", "totals:")))


opened = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
          {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "open_toolbox", "arguments": {"toolbox": "bench"}}}]
echo = lambda id: {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "use_tool", "arguments": {
    "tool": {"toolbox": "bench", "server": "fx", "name": "echo"}, "arguments": {}}}}
big = lambda id: {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "use_tool", "arguments": {
    "tool": {"toolbox": "bench", "server": "fx", "name": "big"}, "arguments": {"bytes": 1_000_000}}}}
LARGE_CALLS = 20
start = counted([INITIALIZE])
base = counted(opened)
loaded = counted(opened + [echo(2 + i) for i in range(calls)])
large = counted(opened + [big(2 + i) for i in range(LARGE_CALLS)])
floor_binary = os.path.join(os.path.dirname(toolshelf), "toolshelf-floor")
floor = [floor_binary, "stdio", "--", os.path.abspath(fixture)]
direct_echo = lambda id: {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
floor_base = counted(opened[:2], floor)
floor_loaded = counted(opened[:2] + [direct_echo(2 + i) for i in range(calls)], floor)


def counted_http(count, floor=False):
    """callgrind's instruction total for a `toolshelf serve --http` that opens the toolbox in one
    session and is called `count` times in it, then stopped by SIGINT; with `floor`, for the
    HTTP floor (`toolshelf-floor http`), called `echo` directly the same way."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = os.path.join(folder, f"callgrind.http.{count}.{floor}")
    command = ([floor_binary, "http", f"127.0.0.1:{port}", "--", os.path.abspath(fixture)] if floor
               else [toolshelf, "serve", "--config", config, "--no-cache", "--http", f"127.0.0.1:{port}"])
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": "error", "TOOLSHELF_TOKEN": "callgrind"})
    headers = {"Authorization": "Bearer callgrind", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(message):
        connection.request("POST", "/mcp", json.dumps(message), headers)
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status in (200, 202), (answer.status, body)
        return answer

    for _ in range(600):
        try:
            answer = post(INITIALIZE)
            break
        except (ConnectionError, OSError):
            connection.close()
            time.sleep(0.05)
    headers["Mcp-Session-Id"] = answer.getheader("Mcp-Session-Id")
    headers["MCP-Protocol-Version"] = INITIALIZE["params"]["protocolVersion"]
    requests = [(direct_echo if floor else echo)(2 + i) for i in range(count)]
    for message in (opened[1:2] if floor else opened[1:]) + requests:
        post(message)
    connection.close()
    process.send_signal(signal.SIGINT)
    process.wait()
    with open(out) as file:
        return next(int(line.split()[1]) for line in file if line.startswith(("summary:", "totals:")))


http_base = counted_http(0)
http_loaded = counted_http(calls)
http_floor_base = counted_http(0, floor=True)
http_floor_loaded = counted_http(calls, floor=True)
print(json.dumps({"toolshelf": toolshelf, "to_first_initialize_answer": start,
                  "calls": calls, "per_echo_call": round((loaded - base) / calls),
                  "per_1mb_result_call": round((large - base) / LARGE_CALLS),
                  "floor_per_echo_call": round((floor_loaded - floor_base) / calls),
                  "http_per_echo_call": round((http_loaded - http_base) / calls),
                  "http_floor_per_echo_call": round((http_floor_loaded - http_floor_base) / calls)}))
