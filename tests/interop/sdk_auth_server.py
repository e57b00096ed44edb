"""An MCP server protected with the official Python SDK's own authorization helpers
(``mcp==2.3.0``: ``AuthSettings`` and a ``TokenVerifier``), for the authorization interop
tests: run with the interop venv's Python, never imported by the tests.

    sdk_auth_server.py PORT ISSUER

It serves Streamable HTTP at ``http://127.0.0.1:PORT/mcp``, a resource server only: the SDK
publishes its protected resource metadata (RFC 9728) naming ``ISSUER`` (oidc-provider) and
the scope ``mcp:read`` it requires, answers 401 with ``resource_metadata`` without a valid
token, and (``validate_token_resource``) takes only tokens issued for its URL. The token
verifier checks oidc-provider's JWT access tokens (RFC 9068) with PyJWT (a dependency of
the SDK) against the issuer's JWKS: signature, ``typ`` ``at+jwt``, ``iss``, ``aud``, ``exp``.
Each token it verifies is logged to stderr as one JSON line ``{"verified": {claims}}`` (or
``{"refused": reason}``).

Tools: ``whoami`` (the access token the SDK's auth context holds for this request: client
id, scopes, resource, subject), ``revoke_me`` (the verifier refuses this request's token
from now on, as a server whose policy changed would: the next request gets a 401), and
``write_note``, which needs the scope ``mcp:write`` too. The SDK's ``required_scopes`` hold
for every request alike, so that one is guarded by a small ASGI layer in front of the SDK's
app (``StepUpGuard``): a ``tools/call`` of ``write_note`` with a token without ``mcp:write``
gets the answer of MCP's Runtime Insufficient Scope Errors, ``403`` with ``WWW-Authenticate:
Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="…"``.
"""

# mypy: ignore-errors
# (mypy runs in an environment without the SDK; this file only runs in the SDK's venv.)

from __future__ import annotations

import json
import sys
import urllib.request

import jwt
import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings

port, issuer = int(sys.argv[1]), sys.argv[2]
resource = f"http://127.0.0.1:{port}/mcp"

with urllib.request.urlopen(f"{issuer}/.well-known/oauth-authorization-server", timeout=30) as r:
    jwks_uri = json.load(r)["jwks_uri"]
keys = jwt.PyJWKClient(jwks_uri, timeout=30)
revoked: set[str] = set()


def log(**line: object) -> None:
    sys.stderr.write(json.dumps(line) + "\n")
    sys.stderr.flush()


class OidcJwtVerifier:
    """The SDK's ``TokenVerifier`` protocol, for oidc-provider's JWT access tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            if jwt.get_unverified_header(token).get("typ") != "at+jwt":
                raise jwt.InvalidTokenError("typ is not at+jwt")
            key = keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["RS256"],
                audience=resource,
                issuer=issuer,
                options={"require": ["exp", "iat", "jti", "client_id"]},
            )
        except jwt.PyJWTError as exc:
            log(refused=str(exc))
            return None
        if claims["jti"] in revoked:
            log(refused="revoked")
            return None
        log(verified=claims)
        return AccessToken(
            token=token,
            client_id=claims["client_id"],
            scopes=claims.get("scope", "").split(),
            expires_at=claims["exp"],
            resource=claims["aud"] if isinstance(claims["aud"], str) else resource,
            subject=claims.get("sub"),
            claims={"iss": claims["iss"], "jti": claims["jti"]},
        )


verifier = OidcJwtVerifier()
server = MCPServer(
    "sdk-auth-interop-server",
    token_verifier=verifier,
    auth=AuthSettings(
        issuer_url=issuer,
        resource_server_url=resource,
        required_scopes=["mcp:read"],
        validate_token_resource=True,
    ),
)


@server.tool()
def whoami() -> str:
    """The access token of this request, as the SDK's auth context holds it."""
    token = get_access_token()
    if token is None:
        return json.dumps(None)
    return json.dumps(
        {
            "client_id": token.client_id,
            "scopes": token.scopes,
            "resource": token.resource,
            "subject": token.subject,
            "jti": (token.claims or {}).get("jti"),
        }
    )


@server.tool()
def revoke_me() -> str:
    """Refuse this request's token from now on."""
    token = get_access_token()
    assert token is not None
    revoked.add((token.claims or {})["jti"])
    return "revoked"


@server.tool()
def write_note(text: str) -> str:
    """Write a note (needs mcp:write)."""
    token = get_access_token()
    assert token is not None
    assert "mcp:write" in token.scopes
    return f"written: {text}"


class StepUpGuard:
    """403 insufficient_scope for a ``write_note`` call whose token lacks ``mcp:write``."""

    def __init__(self, app, verifier: OidcJwtVerifier) -> None:
        self.app = app
        self.verifier = verifier
        self.metadata = str(build_resource_metadata_url(resource))

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if (
            isinstance(message, dict)
            and message.get("method") == "tools/call"
            and (message.get("params") or {}).get("name") == "write_note"
        ):
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            token = header[7:] if header.lower().startswith("bearer ") else ""
            verified = await self.verifier.verify_token(token) if token else None
            if verified is not None and "mcp:write" not in verified.scopes:
                log(step_up=verified.scopes)
                challenge = (
                    'Bearer error="insufficient_scope", scope="mcp:read mcp:write", '
                    f'resource_metadata="{self.metadata}", '
                    'error_description="write_note needs mcp:write"'
                )
                answer = json.dumps({"error": "insufficient_scope"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(answer)).encode()),
                            (b"www-authenticate", challenge.encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": answer})
                return None
        return await self.app(scope, replay, send)


if __name__ == "__main__":
    app = StepUpGuard(server.streamable_http_app(host="127.0.0.1"), verifier)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")
