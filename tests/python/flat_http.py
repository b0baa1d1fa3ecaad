"""A fastmcp 4.1.2 client (protocol 2026-07-28, no session) against `toolshelf serve --flat
--http`: lists the flat tools, calls one, and drives one that asks the client a question (each
question a round: toolshelf ends the call's round with `input_required`, fastmcp answers
through its elicitation handler and retries).

Usage: flat_http.py URL TOKEN. Prints what it saw as JSON.
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport


async def elicitation(message, response_type, params, context) -> dict:
    return {"answer": f"answered {message}"}


def texts(result) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


async def main(url: str, token: str) -> dict:
    seen: dict = {}
    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"})
    async with Client(transport, elicitation_handler=elicitation) as client:
        seen["protocol"] = client.initialize_result.protocol_version if client.initialize_result else None
        seen["tools"] = sorted(tool.name for tool in await client.list_tools())
        echoed = await client.call_tool("fixture:echo", {"via": "flat"}, raise_on_error=False)
        seen["echo"] = texts(echoed)
        asked = await client.call_tool("fixture:ask", {"times": 2}, raise_on_error=False)
        seen["asked"] = texts(asked)
        seen["asked_error"] = asked.is_error
    return seen


if __name__ == "__main__":
    url, token = sys.argv[1:3]
    print(json.dumps(asyncio.run(main(url, token))))
