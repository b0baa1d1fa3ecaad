"""The Python `mcp` SDK's OAuth client against `toolshelf serve --http --oauth-issuer`.

Usage: oauth_client.py URL ISSUER CLIENT. The SDK's `ClientCredentialsOAuthProvider` (client
`CLIENT`, secret `CLIENT-secret`, scope `tools`) does the whole flow by itself: toolshelf's
401 names its protected resource metadata, which names the authorization server, whose
metadata names the token endpoint; the token is asked for toolshelf's resource (RFC 8707) and
sent with every request. Then it lists toolshelf's tools and opens each toolbox `open_toolbox`'s
description names. Prints what it saw as JSON: the token requests the SDK made, the
description, and each opened toolbox's first line or error.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Memory:
    """Tokens kept in memory only."""

    def __init__(self):
        self.tokens = None
        self.client = None
        self.stored = 0

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.stored += 1

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def main(url: str, issuer: str, client: str) -> None:
    storage = Memory()
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client,
        client_secret=f"{client}-secret",
        token_endpoint_auth_method="client_secret_post",
        scope="tools",
        issuer=issuer,
    )
    seen = {}
    async with create_mcp_http_client(auth=provider) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                description = next(t.description for t in tools.tools if t.name == "open_toolbox")
                seen["description"] = description
                opened = {}
                for name in ("eng", "ops"):
                    result = await session.call_tool("open_toolbox", {"toolbox": name})
                    text = "\n".join(b.text for b in result.content if b.type == "text")
                    opened[name] = {"error": bool(result.is_error), "text": text.splitlines()[0] if text else ""}
                seen["opened"] = opened
    seen["tokens_stored"] = storage.stored
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
