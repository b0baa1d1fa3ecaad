"""A session's end over `toolshelf serve --http`, as the Python `mcp` SDK's client does it.

Usage: session_end.py URL. The client initializes, calls `open_toolbox {"toolbox": "dev"}` and
leaves, which sends the SDK's DELETE. Every warning the SDK logs on the way is kept (a DELETE
answered with anything but 200 or 204 makes it log "Session termination failed"). Then the same
DELETE is sent again by hand, and one for a session id nobody has.

Prints what was seen as JSON.
"""

import asyncio
import json
import logging
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Kept(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


async def main(url: str) -> dict:
    kept = Kept()
    logging.getLogger().addHandler(kept)
    seen: dict = {}
    ids: list = []

    async def note_session(response) -> None:
        if "mcp-session-id" in response.headers:
            ids.append(response.headers["mcp-session-id"])

    async with create_mcp_http_client() as http:
        http.event_hooks["response"].append(note_session)
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                opened = await session.call_tool("open_toolbox", {"toolbox": "dev"})
                seen["opened"] = not opened.is_error
        seen["session"] = ids[0] if ids else None
        seen["warnings"] = list(kept.messages)
        ended = {"mcp-session-id": seen["session"] or "", "mcp-protocol-version": "2025-11-25"}
        again = await http.delete(url, headers=ended)
        seen["again"] = [again.status_code, again.text]
        unknown = await http.delete(url, headers={**ended, "mcp-session-id": "no-such-session"})
        seen["unknown"] = [unknown.status_code, unknown.text]
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
