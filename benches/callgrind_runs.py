"""A relay run under callgrind while a real client drives it: on stdio (one session of lines)
or over `serve --http` (one session, one keep-alive connection of Python's `http.client`).
benches/instructions.py counts the instructions; benches/hot_code.py reads which functions ran."""

import http.client
import json
import os
import signal
import socket
import subprocess
import time

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "callgrind", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
OPEN = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "open_toolbox", "arguments": {"toolbox": "bench"}}}
TOKEN = "callgrind"


def use_tool(id, name, arguments):
    """A `use_tool` call of the fixture's tool `name` in the toolbox `bench`."""
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "use_tool", "arguments": {
        "tool": {"toolbox": "bench", "server": "fx", "name": name}, "arguments": arguments}}}


def callgrind(out, command, *options):
    return ["valgrind", "--tool=callgrind", *options, f"--callgrind-out-file={out}", *command]


def over_stdio(command, steps, out, *options):
    """Runs `command` under callgrind, sends it `steps` as lines (each request answered with a
    result before the next), then its stdin's end; returns `out`, callgrind's file."""
    process = subprocess.Popen(
        callgrind(out, command, *options), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "error"})
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
    return out


def over_http(command_on, steps, out, *options, default_token=TOKEN):
    """Runs `command_on(address)` under callgrind (a server of streamable HTTP at `address`,
    `default_token` its TOOLSHELF_TOKEN), initializes one session with token `TOKEN` and posts
    `steps` in it, then stops the server by SIGTERM (SIGINT is ignored by what a non-interactive
    shell starts in the background, and the HTTP floor sets no handler of its own); returns
    `out`, callgrind's file. A server given `--tokens-dir` takes TOOLSHELF_TOKEN as one more
    caller's, which must differ from the others'."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        callgrind(out, command_on(f"127.0.0.1:{port}"), *options), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": "error", "TOOLSHELF_TOKEN": default_token})
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
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
    else:
        raise SystemExit(f"{command_on('ADDRESS')[0]} did not answer on port {port} in 30 s")
    headers["Mcp-Session-Id"] = answer.getheader("Mcp-Session-Id")
    headers["MCP-Protocol-Version"] = INITIALIZE["params"]["protocolVersion"]
    for message in steps:
        post(message)
    connection.close()
    process.send_signal(signal.SIGTERM)
    process.wait()
    return out


def total(out):
    """callgrind's instruction total in its file `out`."""
    with open(out) as file:
        return next(int(line.split()[1]) for line in file if line.startswith(("summary:", "totals:")))
