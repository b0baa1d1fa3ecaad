"""The Python `mcp` SDK's ClientSession against `toolshelf serve` on stdio, answering the user's
side of the confirmations an access rule asks for: each elicitation gets the next of ANSWERS
("accept", "decline" or "cancel"); with ANSWERS "none" the client offers no elicitation at all.
Calls dev/fixture's `echo` once per answer (once with "none"), then `sleep`, which no rule
guards.

Usage: confirm_client.py ANSWERS -- COMMAND [ARGS...]
Prints one JSON object with what the client saw.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(answers: list[str], command: list[str]) -> dict:
    seen: dict = {"asked": [], "calls": []}
    pending = list(answers)

    async def elicitation(context, params: types.ElicitRequestParams):
        seen["asked"].append(params.message)
        return types.ElicitResult(action=pending.pop(0))

    parameters = StdioServerParameters(command=command[0], args=command[1:])
    callback = None if answers == ["none"] else elicitation
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            await session.call_tool("open_toolbox", {"toolbox": "dev"})
            for name in ["echo"] * len(answers) + ["sleep"]:
                arguments = {"said": "hi"} if name == "echo" else {"ms": 1}
                call = {"tool": {"toolbox": "dev", "server": "fixture", "name": name}, "arguments": arguments}
                result = await session.call_tool("use_tool", call)
                text = "\n".join(block.text for block in result.content if block.type == "text")
                seen["calls"].append({"tool": name, "error": result.is_error, "text": text})
    return seen


if __name__ == "__main__":
    split = sys.argv.index("--")
    print(json.dumps(asyncio.run(main(sys.argv[1].split(","), sys.argv[split + 1 :]))))
