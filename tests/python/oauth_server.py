"""An OAuth-protected streamable-HTTP MCP server (the Python mcp SDK) with its own small
authorization server on the same port, for toolshelf's login tests.

Usage: oauth_server.py PORT LIFETIME. It publishes protected resource metadata (RFC 9728) and
authorization server metadata (RFC 8414), registers clients dynamically (RFC 7591), redirects
`/authorize` at once (the test stands in for the user), checks PKCE (S256) and the resource
indicator (RFC 8707) at `/token`, and issues access tokens that expire after LIFETIME seconds,
with refresh tokens. `/mcp` refuses a missing, unknown or expired token with 401 and a
`WWW-Authenticate` challenge naming the metadata. `POST /revoke` forgets every access token;
with `?refresh=1`, every refresh token too. `POST /oauth/revoke` is the token revocation
endpoint (RFC 7009) the metadata names: it forgets the token it is given and keeps what it was
asked, which `GET /revocations` lists (token, hint, client). The tool `whoami` says which token (by its number)
the request carried and how many refreshes there were.
"""

import base64
import hashlib
import itertools
import secrets
import sys
import time
from urllib.parse import urlencode

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route

port, lifetime = int(sys.argv[1]), int(sys.argv[2])
base = f"http://127.0.0.1:{port}"
resource = f"{base}/mcp"
numbers = itertools.count(1)
codes: dict[str, dict] = {}
access: dict[str, dict] = {}  # token -> {"number", "expires"}
refresh: dict[str, str] = {}  # refresh token -> client id
state = {"refreshes": 0, "current": 0}
revocations: list[dict] = []

server = MCPServer("oauth-protected")


@server.tool()
def whoami() -> dict:
    """The number of the access token of this request, and the refreshes so far."""
    return {"token": state["current"], "refreshes": state["refreshes"]}


mcp_app = server.streamable_http_app()


def issue(client_id: str) -> dict:
    number = next(numbers)
    token = f"tok-access-{number}-{secrets.token_hex(8)}"
    renewal = f"tok-refresh-{number}-{secrets.token_hex(8)}"
    access[token] = {"number": number, "expires": time.monotonic() + lifetime}
    refresh[renewal] = client_id
    return {
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": lifetime,
        "refresh_token": renewal,
        "scope": "tools",
    }


async def protected_resource(request: Request):
    return JSONResponse({"resource": resource, "authorization_servers": [base], "scopes_supported": ["tools"]})


async def authorization_server(request: Request):
    return JSONResponse({
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint": f"{base}/oauth/revoke",
        "scopes_supported": ["tools"],
    })


async def register(request: Request):
    body = await request.json()
    client_id = f"client-{secrets.token_hex(4)}"
    return JSONResponse({"client_id": client_id, "redirect_uris": body["redirect_uris"]}, status_code=201)


async def authorize(request: Request):
    query = request.query_params
    if query.get("code_challenge_method") != "S256" or query.get("resource") != resource:
        return JSONResponse({"error": "invalid_request"}, status_code=400)
    code = secrets.token_hex(8)
    codes[code] = {"challenge": query["code_challenge"], "client": query["client_id"]}
    target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
    return RedirectResponse(target, status_code=302)


async def token(request: Request):
    form = await request.form()
    if form.get("resource") != resource:
        return JSONResponse({"error": "invalid_target"}, status_code=400)
    if form.get("grant_type") == "authorization_code":
        grant = codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if grant is None or digest != grant["challenge"]:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        return JSONResponse(issue(grant["client"]))
    if form.get("grant_type") == "refresh_token":
        client = refresh.pop(form.get("refresh_token", ""), None)
        if client is None:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        state["refreshes"] += 1
        return JSONResponse(issue(client))
    return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)


async def revoke(request: Request):
    access.clear()
    if request.query_params.get("refresh"):
        refresh.clear()
    return JSONResponse({})


async def revoke_token(request: Request):
    form = await request.form()
    token = form.get("token", "")
    if not token:
        return JSONResponse({"error": "invalid_request"}, status_code=400)
    revocations.append({"token": token, "hint": form.get("token_type_hint"), "client": form.get("client_id")})
    access.pop(token, None)
    refresh.pop(token, None)
    return JSONResponse({})


async def list_revocations(request: Request):
    return JSONResponse(revocations)


routes = Starlette(routes=[
    Route("/.well-known/oauth-protected-resource/mcp", protected_resource),
    Route("/.well-known/oauth-authorization-server", authorization_server),
    Route("/register", register, methods=["POST"]),
    Route("/authorize", authorize),
    Route("/token", token, methods=["POST"]),
    Route("/revoke", revoke, methods=["POST"]),
    Route("/oauth/revoke", revoke_token, methods=["POST"]),
    Route("/revocations", list_revocations),
])


async def app(scope, receive, send):
    if scope["type"] != "http":
        # The lifespan events start the MCP app's session manager.
        await mcp_app(scope, receive, send)
        return
    if scope["path"].startswith("/mcp"):
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        presented = headers.get("authorization", "").removeprefix("Bearer ")
        grant = access.get(presented)
        if grant is None or grant["expires"] < time.monotonic():
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            refusal = JSONResponse({"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": challenge})
            await refusal(scope, receive, send)
            return
        state["current"] = grant["number"]
        await mcp_app(scope, receive, send)
        return
    await routes(scope, receive, send)


uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
