"""Instructions toolshelf runs, counted by callgrind (valgrind), which the machine's noise does
not move: from its start to its first `initialize` answer, and per `use_tool` call of the
fixture's `echo` on stdio (callgrind's total for N calls minus its total for none, over N), the
same with `_meta.progressToken` on each call (as rmcp's clients, the benchmark's among them, send
every call), and per call of its `big` returning 1 MB of text on stdio (20 calls).
Only toolshelf is counted, not its child. Beside them, the same per call for the stdio floor
(`toolshelf-floor stdio`, next to TOOLSHELF), which copies lines and parses nothing, and per
call of one session over `toolshelf serve --http` (with a token, one keep-alive connection of
Python's `http.client`; N calls minus none, as on stdio), and the same for the HTTP floor
(`toolshelf-floor http`, next to TOOLSHELF, called `echo` directly), and the same over `serve
--http` with named tokens (`--tokens-dir`) and access rules that withhold one of the fixture's
tools from the caller, as the benchmark's gateway section runs it.

Usage: python3 benches/instructions.py [TOOLSHELF [FIXTURE [N]]]
(default: target/release/toolshelf, target/release/toolshelf-fixture, 2000). Prints JSON.
Compare two builds by giving each's TOOLSHELF in turn.
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_runs import INITIALIZE, INITIALIZED, OPEN, TOKEN, over_http, over_stdio, total, use_tool

toolshelf = sys.argv[1] if len(sys.argv) > 1 else "target/release/toolshelf"
fixture = sys.argv[2] if len(sys.argv) > 2 else "target/release/toolshelf-fixture"
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
folder = tempfile.mkdtemp()
config = os.path.join(folder, "config.json")
with open(config, "w") as file:
    json.dump({"toolboxes": {"bench": {"mcpServers": {"fx": {"command": os.path.abspath(fixture), "idleTimeout": 0}}}}}, file)
serve = [toolshelf, "serve", "--config", config, "--no-cache"]
ruled = os.path.join(folder, "ruled.json")
with open(ruled, "w") as file:
    json.dump({"access": {"callers": ["alice", "bob"]}, "toolboxes": {"bench": {"mcpServers": {"fx": {
        "command": os.path.abspath(fixture), "idleTimeout": 0,
        "tools": {"sleep": {"access": {"callers": ["alice"]}}}}}}}}, file)
tokens = os.path.join(folder, "tokens")
os.mkdir(tokens)
for caller, token in (("alice", "alice-token"), ("bob", TOKEN)):
    with open(os.path.join(tokens, caller), "w") as file:
        file.write(token)


def counted(steps, command=serve):
    """callgrind's instruction total for a toolshelf (or `command`) that is sent `steps` and
    then stdin's end."""
    return total(over_stdio(command, steps, os.path.join(folder, f"callgrind.{len(steps)}")))


opened = [INITIALIZE, INITIALIZED, OPEN]
echo = lambda id: use_tool(id, "echo", {})
big = lambda id: use_tool(id, "big", {"bytes": 1_000_000})
LARGE_CALLS = 20
start = counted([INITIALIZE])
base = counted(opened)
loaded = counted(opened + [echo(2 + i) for i in range(calls)])


def with_progress_token(message):
    message["params"] = {"_meta": {"progressToken": message["id"]}, **message["params"]}
    return message


loaded_with_token = counted(opened + [with_progress_token(echo(2 + i)) for i in range(calls)])
large = counted(opened + [big(2 + i) for i in range(LARGE_CALLS)])
floor_binary = os.path.join(os.path.dirname(toolshelf), "toolshelf-floor")
floor = [floor_binary, "stdio", "--", os.path.abspath(fixture)]
direct_echo = lambda id: {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
floor_base = counted(opened[:2], floor)
floor_loaded = counted(opened[:2] + [direct_echo(2 + i) for i in range(calls)], floor)


def counted_http(count, floor=False, rules=False):
    """callgrind's instruction total for a `toolshelf serve --http` that opens the toolbox in one
    session and is called `count` times in it, then stopped; with `floor`, for the
    HTTP floor (`toolshelf-floor http`), called `echo` directly the same way; with `rules`, with
    named tokens and access rules, called by the caller ("bob") from whom they withhold a tool."""
    out = os.path.join(folder, f"callgrind.http.{count}.{floor}.{rules}")
    default_token = TOKEN
    if floor:
        command_on = lambda address: [floor_binary, "http", address, "--", os.path.abspath(fixture)]
        steps = [INITIALIZED] + [direct_echo(2 + i) for i in range(count)]
    else:
        steps = [INITIALIZED, OPEN] + [echo(2 + i) for i in range(count)]
        command_on = lambda address: serve + ["--http", address]
        if rules:
            # The calls' token is bob's; the server's own must be another caller's.
            command_on = lambda address: [toolshelf, "serve", "--config", ruled, "--no-cache",
                                          "--tokens-dir", tokens, "--http", address]
            default_token = "default-token"
    return total(over_http(command_on, steps, out, default_token=default_token))


http_base = counted_http(0)
http_loaded = counted_http(calls)
http_floor_base = counted_http(0, floor=True)
http_floor_loaded = counted_http(calls, floor=True)
http_rules_base = counted_http(0, rules=True)
http_rules_loaded = counted_http(calls, rules=True)
print(json.dumps({"toolshelf": toolshelf, "to_first_initialize_answer": start,
                  "calls": calls, "per_echo_call": round((loaded - base) / calls),
                  "per_echo_call_with_progress_token": round((loaded_with_token - base) / calls),
                  "per_1mb_result_call": round((large - base) / LARGE_CALLS),
                  "floor_per_echo_call": round((floor_loaded - floor_base) / calls),
                  "http_per_echo_call": round((http_loaded - http_base) / calls),
                  "http_floor_per_echo_call": round((http_floor_loaded - http_floor_base) / calls),
                  "http_per_echo_call_with_access_rules":
                      round((http_rules_loaded - http_rules_base) / calls)}))
