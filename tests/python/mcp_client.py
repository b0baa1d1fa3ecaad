"""A real MCP client for toolshelf's tests: the Python `mcp` SDK's ClientSession (protocol
2025-11-25), with the callbacks a client offers its servers: sampling, elicitation, roots and
log messages. Drives server-everything through toolshelf and reports what each relay carried.

Usage: mcp_client.py TOOLBOX SERVER -- COMMAND [ARGS...]
Prints one JSON object with what the client saw; exits non-zero on any failure.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from conditional_tools import open_until_listed

ROOT = "file:///tmp/agent-root"
LATER_ROOT = "file:///tmp/agent-root-later"
# The agent takes longer to sample than the child's callTimeout in the test (1 s): toolshelf
# must not time the call out while the agent answers the child.
SAMPLING_DELAY_S = 1.5


async def main(toolbox: str, server: str, command: list[str]) -> dict:
    seen: dict = {"sampling": [], "elicitation": [], "roots_asked": 0, "logs": []}
    agent_roots = [types.Root(uri=ROOT, name="agent root")]

    async def sampling(context, params: types.CreateMessageRequestParams):
        seen["sampling"].append(params.messages[0].content.text)
        await asyncio.sleep(SAMPLING_DELAY_S)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="sampled by the agent"),
            model="agent-model",
            stop_reason="endTurn",
        )

    async def elicitation(context, params: types.ElicitRequestParams):
        seen["elicitation"].append(params.message)
        if params.mode == "url":
            seen["url_elicitation"] = {"url": params.url, "id": params.elicitation_id}
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    async def roots(context):
        seen["roots_asked"] += 1
        return types.ListRootsResult(roots=agent_roots)

    async def logging(params: types.LoggingMessageNotificationParams):
        seen["logs"].append({"level": params.level, "logger": params.logger})

    parameters = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(
            read,
            write,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=roots,
            logging_callback=logging,
        ) as session:
            initialized = await session.initialize()
            seen["protocol"] = initialized.protocol_version
            seen["logging_capability"] = initialized.capabilities.logging is not None
            await session.set_logging_level("debug")

            # server-everything registers the tools that need the client's capabilities once
            # its session is initialized, then says its list changed: open until they show.
            wanted = {
                "trigger-sampling-request",
                "trigger-elicitation-request",
                "trigger-url-elicitation",
                "get-roots-list",
            }
            seen["conditional_tools"] = sorted(await open_until_listed(session.call_tool, toolbox, wanted))

            async def use(name: str, arguments: dict) -> str:
                result = await session.call_tool(
                    "use_tool",
                    {"tool": {"toolbox": toolbox, "server": server, "name": name}, "arguments": arguments},
                )
                return "\n".join(block.text for block in result.content if block.type == "text")

            seen["sampled"] = await use("trigger-sampling-request", {"prompt": "hello", "maxTokens": 5})
            seen["elicited"] = await use("trigger-elicitation-request", {})
            # URL mode: the request path (elicitation/create with a URL) and the error path (the
            # child's -32042 error names the URL the user must open first).
            url = {"url": "https://example.com/consent", "elicitationId": "consent-1"}
            seen["url_elicited"] = await use("trigger-url-elicitation", url)
            try:
                seen["url_error_path"] = await use("trigger-url-elicitation", url | {"errorPath": True})
            except MCPError as error:
                seen["url_error_path"] = {"code": error.error.code, "data": error.error.data}
            seen["roots"] = await use("get-roots-list", {})
            # The agent's roots change: the child hears of it, asks again, and sees the new root.
            agent_roots.append(types.Root(uri=LATER_ROOT, name="later root"))
            await session.send_roots_list_changed()
            for _ in range(100):
                seen["roots_later"] = await use("get-roots-list", {})
                if LATER_ROOT in seen["roots_later"]:
                    break
                await asyncio.sleep(0.1)
            seen["logging_toggled"] = await use("toggle-simulated-logging", {})
            for _ in range(100):
                if seen["logs"]:
                    break
                await asyncio.sleep(0.1)
            await use("toggle-simulated-logging", {})
    return seen


if __name__ == "__main__":
    toolbox, server, separator, *command = sys.argv[1:]
    assert separator == "--", __doc__
    print(json.dumps(asyncio.run(main(toolbox, server, command))))
