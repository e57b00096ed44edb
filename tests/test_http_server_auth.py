"""The HTTP server requiring tokens (``auth=``): the protected resource metadata at both
well-known paths, 401 without a token, 401 ``invalid_token`` (expired, forged, another
audience, another issuer), 403 ``insufficient_scope``, a token in the query refused, the
principal in the handler, sessions and ``requestState`` bound to it. On the blocking
runtime (real sockets, ``http.client``); tokens minted with joserfc and a generated key."""

from __future__ import annotations

import http.client
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import orjson
import pytest

joserfc = pytest.importorskip("joserfc")
from joserfc import jwt  # noqa: E402
from joserfc.jwk import ECKey, KeySet  # noqa: E402

from mcp_sansio.auth import parse_www_authenticate  # noqa: E402
from mcp_sansio.auth._jwt import JwtVerifier  # noqa: E402
from mcp_sansio.auth._resource import ProtectedResource, ServerAuth  # noqa: E402
from mcp_sansio.blocking._http_server import HttpListener  # noqa: E402
from mcp_sansio.server import Server  # noqa: E402

ISSUER = "https://as.example.com"
KEY = ECKey.generate_key("P-256", parameters={"kid": "k1"}, private=True)
OTHER_KEY = ECKey.generate_key("P-256", parameters={"kid": "k1"}, private=True)
JWKS = KeySet([KEY]).as_dict(private=False)
LIMIT = 10.0


def mint(resource: str, *, key: Any = KEY, **claims: Any) -> str:
    now = int(time.time())
    payload: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": resource,
        "client_id": "app",
        "iat": now,
        "exp": now + 600,
        "scope": "mcp:tools",
    }
    payload.update(claims)
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode({"alg": "ES256", "typ": "at+jwt", "kid": "k1"}, payload, key)


def build() -> Server:
    server = Server("auth-test", "1.0")

    @server.tool("whoami", input_schema={"type": "object"})
    def whoami(ctx: Any, arguments: Mapping[str, Any]) -> str:
        p = ctx.principal
        return "nobody" if p is None else f"{p.subject}|{' '.join(sorted(p.scopes))}"

    return server


@contextmanager
def serving(**auth_options: Any) -> Iterator[tuple[HttpListener, str]]:
    ready: queue.Queue[HttpListener] = queue.Queue()
    sock_holder: dict[str, Any] = {}
    # the resource identifier needs the port: bind first, then build the auth
    import socket

    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    resource = f"http://127.0.0.1:{port}/mcp"
    pr = ProtectedResource(
        resource,
        (ISSUER,),
        scopes_supported=("mcp:tools", "mcp:admin"),
        required_scopes=auth_options.pop("required_scopes", ("mcp:tools",)),
    )
    verifier = JwtVerifier(issuer=ISSUER, jwks=JWKS)
    auth = ServerAuth(pr, verifier, dpop=auth_options.pop("dpop", None))
    listener = HttpListener(build(), sock, auth=auth, keepalive=None)
    sock_holder["l"] = listener
    thread = threading.Thread(target=listener.serve_forever)
    thread.start()
    ready.put(listener)
    try:
        yield listener, resource
    finally:
        listener.stop()
        thread.join(LIMIT)
        listener.close()


def request(
    listener: HttpListener,
    method: str,
    path: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, http.client.HTTPMessage, bytes]:
    host, port = listener.address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=LIMIT)
    try:
        h = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        h.update(headers or {})
        data = None if body is None else orjson.dumps(body)
        conn.request(method, path, body=data, headers=h)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def challenge(headers: http.client.HTTPMessage) -> Mapping[str, str]:
    value = headers["www-authenticate"]
    assert value is not None
    (ch,) = parse_www_authenticate([value])
    assert ch.scheme == "bearer"
    return ch.params


def test_metadata_at_both_well_known_paths() -> None:
    with serving() as (listener, resource):
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            status, headers, body = request(listener, "GET", path)
            assert status == 200, path
            assert headers["content-type"] == "application/json"
            doc = orjson.loads(body)
            assert doc["resource"] == resource
            assert doc["authorization_servers"] == [ISSUER]
            assert doc["bearer_methods_supported"] == ["header"]
            assert doc["scopes_supported"] == ["mcp:tools", "mcp:admin"]


def test_401_without_a_token_names_the_metadata_and_the_scope() -> None:
    with serving() as (listener, _):
        status, headers, _body = request(listener, "POST", "/mcp", INIT)
        assert status == 401
        params = challenge(headers)
        assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
        assert params["scope"] == "mcp:tools"
        assert "error" not in params  # RFC 6750 section 3: no error without credentials


@pytest.mark.parametrize(
    "case",
    ["expired", "forged", "audience", "issuer", "typ", "not-a-jwt"],
)
def test_401_invalid_token(case: str) -> None:
    with serving() as (listener, resource):
        now = int(time.time())
        makers: dict[str, Callable[[], str]] = {
            "expired": lambda: mint(resource, iat=now - 7200, exp=now - 3600),
            "forged": lambda: mint(resource, key=OTHER_KEY),
            "audience": lambda: mint(resource, aud="https://other.example.com/mcp"),
            "issuer": lambda: mint(resource, iss="https://evil.example.com"),
            "typ": lambda: jwt.encode(
                {"alg": "ES256", "kid": "k1"},
                {"iss": ISSUER, "aud": resource, "exp": now + 60, "sub": "a"},
                KEY,
            ),
            "not-a-jwt": lambda: "abc.def",
        }
        token = makers[case]()
        status, headers, body = request(listener, "POST", "/mcp", INIT, bearer(token))
        assert status == 401, body
        params = challenge(headers)
        assert params["error"] == "invalid_token"
        assert token not in body.decode()
        assert token not in headers["www-authenticate"]


def test_403_insufficient_scope() -> None:
    with serving(required_scopes=("mcp:tools", "mcp:admin")) as (listener, resource):
        token = mint(resource, scope="mcp:tools")
        status, headers, _ = request(listener, "POST", "/mcp", INIT, bearer(token))
        assert status == 403
        params = challenge(headers)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp:tools mcp:admin"


def test_a_token_in_the_query_is_refused() -> None:
    with serving() as (listener, resource):
        token = mint(resource)
        status, headers, body = request(listener, "POST", f"/mcp?access_token={token}", INIT)
        assert status == 400
        assert challenge(headers)["error"] == "invalid_request"
        assert token not in body.decode()
        # even with a good header as well
        status, _, _ = request(listener, "POST", f"/mcp?access_token={token}", INIT, bearer(token))
        assert status == 400


def _initialize(listener: HttpListener, token: str) -> str:
    status, headers, body = request(listener, "POST", "/mcp", INIT, bearer(token))
    assert status == 200, body
    sid = headers["mcp-session-id"]
    assert sid
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    h = {**bearer(token), "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    status, _, _ = request(listener, "POST", "/mcp", note, h)
    assert status == 202
    return sid


def _call(listener: HttpListener, token: str, sid: str) -> tuple[int, bytes]:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami"}}
    h = {**bearer(token), "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    status, _, body = request(listener, "POST", "/mcp", call, h)
    return status, body


def _text(body: bytes) -> str:
    if body.startswith(b"{"):
        message = orjson.loads(body)
    else:  # SSE
        line = next(x for x in body.splitlines() if x.startswith(b"data: {"))
        message = orjson.loads(line[6:])
    return str(message["result"]["content"][0]["text"])


def test_the_principal_reaches_the_handler() -> None:
    with serving() as (listener, resource):
        token = mint(resource, scope="mcp:tools mcp:admin")
        sid = _initialize(listener, token)
        status, body = _call(listener, token, sid)
        assert status == 200
        assert _text(body) == "alice|mcp:admin mcp:tools"


def test_a_session_is_bound_to_its_principal() -> None:
    with serving() as (listener, resource):
        sid = _initialize(listener, mint(resource))
        mallory = mint(resource, sub="mallory")
        status, _ = _call(listener, mallory, sid)
        assert status == 404  # the session is not found for another user
        status, body = _call(listener, mint(resource), sid)  # alice, a fresh token
        assert status == 200
        assert _text(body).startswith("alice|")
