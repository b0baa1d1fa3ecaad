"""A real MCP client for toolshelf's tests: fastmcp, speaking the protocol revision it prefers.

Usage: fastmcp_client.py SCENARIO MODE -- COMMAND [ARGS...]
  SCENARIO  `session` (list tools, open toolbox `dev`, call the fixture's echo and log tools
            through use_tool; the log message is recorded),
            `task` (open toolbox `demo`, call server-everything's simulate-research-query, which
            requires tasks, through use_tool: fastmcp-tasks drives the task to its result, and
            answers the question an ambiguous query makes the child ask),
            `relay` (open toolbox `demo` with sampling, elicitation and roots handlers, and call
            server-everything's tools that ask the client for each, through use_tool; on
            2026-07-28 each question comes back as an input_required result), `rounds` (open
            toolbox `dev`, whose fixture speaks 2025-06-18, and drive its `ask` tool, which asks
            twice, round by round and through fastmcp's own driver), `modern` (open toolbox `dev`
            and call `ask` of its server `modern`, a fixture that speaks only 2026-07-28 and
            asks in input_required results), `confirm` (open toolbox `dev` and call the fixture's
            `sleep`, which an access rule makes toolshelf ask the user to confirm: accepted the
            first time, declined the second), `script_confirm` (the same `sleep` from a
            `run_code` script, toolshelf serving `--code`), or `leave` (connect and leave
            without a request)
  MODE      fastmcp's connect mode: `auto` (its default: server/discover, 2026-07-28) or `legacy`
Prints one JSON object with what the client saw; exits non-zero on any failure.
"""

import asyncio
import json
import sys

import mcp_types
from mcp.shared.exceptions import MCPError
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp_tasks.client import call_tool_task  # importing it gives every Client the tasks extension
from fastmcp.client.transports import StdioTransport

from conditional_tools import open_until_listed


ROOT = "file:///tmp/agent-root"


async def relay(client: Client, seen: dict) -> None:
    """Calls the tools of server-everything that ask the client, and a round by hand."""
    wanted = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}
    seen["conditional_tools"] = sorted(await open_until_listed(client.call_tool, "demo", wanted))

    def use(name: str, arguments: dict) -> dict:
        return {"tool": {"toolbox": "demo", "server": "everything", "name": name}, "arguments": arguments}

    async def text(name: str, arguments: dict) -> str:
        result = await client.call_tool("use_tool", use(name, arguments))
        return "\n".join(block.text for block in result.content if block.type == "text")

    seen["sampled"] = await text("trigger-sampling-request", {"prompt": "hello", "maxTokens": 5})
    seen["elicited"] = await text("trigger-elicitation-request", {})
    seen["roots"] = await text("get-roots-list", {})

    # One round by hand: the question, a retry whose state names another tool (refused), and
    # the retry that answers it.
    session = client.session
    first = await session.call_tool(
        "use_tool", use("trigger-elicitation-request", {}), allow_input_required=True
    )
    seen["round"] = {
        "result_type": first.result_type,
        "methods": sorted(request.method for request in first.input_requests.values()),
    }
    answers = {key: {"action": "decline"} for key in first.input_requests}

    async def retry(name: str):
        """The retry of `first` as a call of `name`: its text, or the error it got."""
        try:
            result = await session.call_tool(
                "use_tool",
                use(name, {}),
                input_responses=answers,
                request_state=first.request_state,
                allow_input_required=True,
            )
        except MCPError as error:
            return {"code": error.error.code, "message": error.error.message}
        return [block.text for block in result.content if block.type == "text"]

    seen["round"]["other_tool"] = await retry("get-roots-list")
    seen["round"]["answered"] = await retry("trigger-elicitation-request")
    seen["round"]["again"] = await retry("trigger-elicitation-request")


async def rounds(client: Client, seen: dict) -> None:
    """Two questions of one call, round by round: each round's state continues only that round."""
    await client.call_tool("open_toolbox", {"toolbox": "dev"})
    ask = {"tool": {"toolbox": "dev", "server": "fixture", "name": "ask"}, "arguments": {"times": 2}}
    session = client.session

    progress: list = []

    async def call(answers=None, state=None):
        # Each request has its own progress callback: a round's progress must reach the request
        # of that round.
        round_number = len(progress)
        progress.append([])

        async def reported(value, total, message):
            progress[round_number].append(message)

        try:
            result = await session.call_tool(
                "use_tool",
                ask,
                input_responses=answers,
                request_state=state,
                allow_input_required=True,
                progress_callback=reported,
            )
        except MCPError as error:
            return {"code": error.error.code, "message": error.error.message}
        if isinstance(result, mcp_types.InputRequiredResult):
            return {
                "state": result.request_state,
                "asked": {key: request.params.message for key, request in result.input_requests.items()},
            }
        return {"text": [block.text for block in result.content if block.type == "text"]}

    first = await call()
    second = await call({"i1": {"action": "accept", "content": {"answer": "one"}}}, first["state"])
    stale = await call({"i2": {"action": "accept", "content": {"answer": "two"}}}, first["state"])
    done = await call({"i2": {"action": "accept", "content": {"answer": "two"}}}, second["state"])
    seen["rounds"] = {"first": first["asked"], "second": second["asked"], "stale": stale, "done": done["text"]}
    seen["round_progress"] = progress
    # fastmcp's own driver answers both through the elicitation handler.
    driven = await client.call_tool("use_tool", ask)
    seen["driven"] = [block.text for block in driven.content]


async def sampling(messages, params, context) -> str:
    return "sampled by the agent"


async def elicitation(message, response_type, params, context) -> dict:
    return {"name": "Ada Lovelace", "check": True}


def confirmation(seen: dict):
    """Accepts toolshelf's first question and declines the next; records each."""

    async def answer(message, response_type, params, context):
        seen["confirm_asked"].append(message)
        if len(seen["confirm_asked"]) == 1:
            return {}
        return ElicitResult(action="decline")

    return answer


async def confirm(client: Client, seen: dict) -> None:
    await client.call_tool("open_toolbox", {"toolbox": "dev"})
    sleep = {"tool": {"toolbox": "dev", "server": "fixture", "name": "sleep"}, "arguments": {"ms": 1}}
    for key in ("accepted", "declined"):
        answered = await client.call_tool("use_tool", sleep, raise_on_error=False)
        seen[key] = {"is_error": answered.is_error, "text": [block.text for block in answered.content]}


def clarification(seen: dict):
    """Answers simulate-research-query's question (asked during its task) and records it."""

    async def answer(message, response_type, params, context) -> dict:
        seen["clarification_asked"].append(message)
        return {"interpretation": "programming"}

    return answer


async def main(scenario: str, mode: str, command: list[str]) -> dict:
    transport = StdioTransport(command=command[0], args=command[1:], keep_alive=False)
    seen: dict = {"logs": []}

    async def log(message) -> None:
        seen["logs"].append({"level": message.level, "logger": message.logger, "data": message.data})

    handlers: dict = {"log_handler": log}
    if scenario in ("relay", "rounds", "modern"):
        handlers |= {"sampling_handler": sampling, "elicitation_handler": elicitation, "roots": [ROOT]}
    if scenario in ("confirm", "script_confirm"):
        seen["confirm_asked"] = []
        handlers["elicitation_handler"] = confirmation(seen)
    if scenario == "task":
        seen["clarification_asked"] = []
        handlers["elicitation_handler"] = clarification(seen)
    async with Client(transport, mode=mode, **handlers) as client:
        seen["protocol"] = str(client.protocol_version)
        if scenario == "leave":
            return seen
        if scenario == "relay":
            await relay(client, seen)
            return seen
        if scenario == "rounds":
            await rounds(client, seen)
            return seen
        if scenario == "confirm":
            await confirm(client, seen)
            return seen
        if scenario == "script_confirm":
            script = "await call_tool('dev/fixture/sleep', {'ms': 1})"
            answered = await client.call_tool("run_code", {"code": script}, raise_on_error=False)
            seen["script"] = {"is_error": answered.is_error, "text": [block.text for block in answered.content]}
            return seen
        if scenario == "modern":
            opened = await client.call_tool("open_toolbox", {"toolbox": "dev"})
            seen["status"] = {s["name"]: s["status"] for s in opened.structured_content["servers"]}
            asked = {"tool": {"toolbox": "dev", "server": "modern", "name": "ask"}, "arguments": {"times": 2}}
            answered = await client.call_tool("use_tool", asked)
            seen["answered"] = [block.text for block in answered.content]
            return seen
        if scenario == "task":
            await client.call_tool("open_toolbox", {"toolbox": "demo"})
            tool = {"toolbox": "demo", "server": "everything", "name": "simulate-research-query"}
            # Transparently: fastmcp polls the task to its result.
            reported = await client.call_tool("use_tool", {"tool": tool, "arguments": {"topic": "tides"}})
            seen["report"] = [block.text for block in reported.content]
            # The child asks a question during the task: fastmcp finds it in tasks/get and
            # answers it with tasks/update.
            ambiguous = {"topic": "python", "ambiguous": True}
            clarified = await client.call_tool("use_tool", {"tool": tool, "arguments": ambiguous})
            seen["clarified"] = [block.text for block in clarified.content]
            # Through the task's handle: its id, its status, and a cancellation.
            handle = await call_tool_task(client, "use_tool", {"tool": tool, "arguments": {"topic": "moon"}})
            seen["task_id"] = handle.task_id
            seen["status"] = (await handle.status()).status
            await handle.cancel()
            seen["cancelled"] = (await handle.status()).status
            return seen
        tools = await client.list_tools()
        seen["tools"] = [tool.name for tool in tools]
        opened = await client.call_tool("open_toolbox", {"toolbox": "dev"})
        seen["opened"] = opened.structured_content
        echoed = await client.call_tool(
            "use_tool",
            {
                "tool": {"toolbox": "dev", "server": "fixture", "name": "echo"},
                "arguments": {"said": "hello"},
            },
        )
        seen["echo"] = [block.text for block in echoed.content]
        seen["echo_is_error"] = echoed.is_error
        # The child's log message, sent during the call, arrives before the call's answer.
        await client.call_tool(
            "use_tool",
            {"tool": {"toolbox": "dev", "server": "fixture", "name": "log"}, "arguments": {"level": "error"}},
        )
        seen["logs_by_answer"] = list(seen["logs"])
        # A child on 2026-07-28 logs only for requests that carry a logLevel asking for it.
        await client.call_tool(
            "use_tool",
            {"tool": {"toolbox": "dev", "server": "modern", "name": "log"}, "arguments": {"level": "warning"}},
        )
        seen["modern_logs"] = [entry for entry in seen["logs"] if entry["logger"] == "dev/modern"]
    return seen


if __name__ == "__main__":
    scenario, mode, separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(scenario, mode, command))))
