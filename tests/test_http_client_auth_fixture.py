"""The loopback servers of the HTTP clients' authorization tests (test_http_client_auth*.py),
and tests of them.

:class:`Guard` is a small h11 server (a thread per connection) in front of our own MCP
server (``mcp_sansio.blocking.serve_http`` in a thread): at ``/mcp`` it demands a bearer
token it issued (401 with ``WWW-Authenticate: Bearer resource_metadata=...`` without one,
403 ``insufficient_scope`` for a tool whose scope the token lacks) and passes the requests
it lets through to the MCP server (``Connection: close``, the answer piped back as it
comes). It is also the protected resource's metadata (RFC 9728), and a toy authorization
server (RFC 8414 metadata, ``/authorize`` answering 302 to the redirect URI with a code,
``/token`` checking PKCE S256 and issuing tokens whose text holds ``SECRET``). It records
every request: method, path, Authorization header and body.

:class:`FlowAuth` is a :class:`~mcp_sansio.auth.ClientAuth` of the test's own over
:class:`~mcp_sansio.auth.AuthFlow` (REG's OAuthClient is not used here), and
:func:`approve` an ``open_url`` handler that plays the browser: it GETs the authorization
URL and returns the ``Location`` of the 302.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import itertools
import queue
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

pytest.importorskip("h11")

import h11
import orjson

from mcp_sansio.auth import AuthFlow, Authorized, ClientInfo, MemoryTokenStore
from mcp_sansio.auth._client_auth import Flow
from mcp_sansio.blocking import Context, serve_http
from mcp_sansio.blocking._http_server import HttpListener
from mcp_sansio.server import Server

LIMIT = 10.0
REDIRECT_URI = "http://127.0.0.1:9/callback"
PRM = "/.well-known/oauth-protected-resource/mcp"
NOTHING = {"type": "object"}
_READ = 1 << 16


def make_server() -> Server:
    """The MCP server behind the guard: ``echo`` and ``admin`` (which needs the ``admin``
    scope at the guard)."""
    server = Server("auth-test", "1.0")

    @server.tool("echo", input_schema={"type": "object", "properties": {"m": {}}})
    def echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Echo ``m``."
        return f"Echo: {arguments.get('m', '')}"

    @server.tool("admin", input_schema=NOTHING)
    def admin(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "A tool the guard lets through with the admin scope only."
        return "admin done"

    return server


@dataclass
class Seen:
    """A request the guard took at ``/mcp``."""

    method: str
    authorization: str | None
    body: bytes
    status: int = 0


@dataclass
class Guard:
    """The resource server, its metadata and the toy authorization server (see the module)."""

    backend: str
    base: str = ""
    tokens: dict[str, set[str]] = field(default_factory=dict)
    codes: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    registered: list[dict[str, Any]] = field(default_factory=list)
    token_requests: int = 0
    fail_token: bool = False
    broken_metadata: bool = False
    scoped: dict[str, str] = field(default_factory=lambda: {"admin": "admin"})
    lock: threading.Lock = field(default_factory=threading.Lock)
    _count: Iterator[int] = field(default_factory=itertools.count)
    _sock: socket.socket | None = None
    _conns: set[socket.socket] = field(default_factory=set)

    @property
    def url(self) -> str:
        """The MCP endpoint behind the guard."""
        return self.base + "/mcp"

    def mcp(self) -> list[Seen]:
        """The requests to /mcp so far."""
        with self.lock:
            return list(self.seen)

    # -------------------------------------------------------------- serving

    def start(self) -> None:
        sock = self._sock = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        with self.lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def _accept(self) -> None:
        assert self._sock is not None
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self.lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            h = h11.Connection(h11.SERVER)
            while True:
                request, body = self._read(conn, h)
                if request is None:
                    return
                if not self._answer(conn, h, request, body):
                    return
                if h.our_state is h11.MUST_CLOSE or h.their_state is h11.MUST_CLOSE:
                    return
                h.start_next_cycle()
        except (OSError, h11.ProtocolError):
            return
        finally:
            with self.lock:
                self._conns.discard(conn)
            conn.close()

    @staticmethod
    def _read(conn: socket.socket, h: h11.Connection) -> tuple[h11.Request | None, bytes]:
        request = None
        body = b""
        while True:
            event = h.next_event()
            if event is h11.NEED_DATA:
                h.receive_data(conn.recv(_READ))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return request, body
            else:
                return None, b""

    @staticmethod
    def _send(
        conn: socket.socket,
        h: h11.Connection,
        status: int,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        head = [("Content-Length", str(len(body))), *headers]
        data = h.send(h11.Response(status_code=status, headers=head)) or b""
        data += h.send(h11.Data(data=body)) or b"" if body else b""
        data += h.send(h11.EndOfMessage()) or b""
        conn.sendall(data)

    def _json(self, conn: socket.socket, h: h11.Connection, status: int, doc: object) -> None:
        self._send(conn, h, status, orjson.dumps(doc), [("Content-Type", "application/json")])

    def _answer(
        self, conn: socket.socket, h: h11.Connection, request: h11.Request, body: bytes
    ) -> bool:
        """Answer ``request``; ``False`` when the connection is done with."""
        method = request.method.decode()
        parts = urlsplit(request.target.decode())
        path = parts.path
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        if path == "/mcp":
            return self._guard(conn, h, request, method, headers, body)
        if path == "/.well-known/oauth-protected-resource/mcp":
            if self.broken_metadata:
                self._send(conn, h, 200, b"not json", [("Content-Type", "application/json")])
                return True
            doc = {
                "resource": self.url,
                "authorization_servers": [self.base],
                "scopes_supported": ["mcp"],
            }
            self._json(conn, h, 200, doc)
        elif path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            self._json(
                conn,
                h,
                200,
                {
                    "issuer": self.base,
                    "authorization_endpoint": self.base + "/authorize",
                    "token_endpoint": self.base + "/token",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "registration_endpoint": self.base + "/register",
                },
            )
        elif path == "/authorize":
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            code = f"code{next(self._count)}"
            with self.lock:
                self.codes[code] = (
                    query["code_challenge"],
                    query.get("scope", ""),
                    query["redirect_uri"],
                )
            where = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
            self._send(conn, h, 302, b"", [("Location", where)])
        elif path == "/register" and method == "POST":
            doc = orjson.loads(body)
            with self.lock:
                self.registered.append(doc)
            self._json(conn, h, 201, {**doc, "client_id": f"reg{next(self._count)}"})
        elif path == "/token" and method == "POST":
            self._token(conn, h, {k: v[0] for k, v in parse_qs(body.decode()).items()})
        else:
            self._send(conn, h, 404)
        return True

    def _token(self, conn: socket.socket, h: h11.Connection, form: dict[str, str]) -> None:
        with self.lock:
            self.token_requests += 1
            grant = self.codes.pop(form.get("code", ""), None)
        if self.fail_token or grant is None or form.get("grant_type") != "authorization_code":
            self._json(conn, h, 400, {"error": "invalid_grant", "error_description": "refused"})
            return
        challenge, scope, _redirect_uri = grant
        verifier = form.get("code_verifier", "")
        digest = hashlib.sha256(verifier.encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != challenge:
            self._json(conn, h, 400, {"error": "invalid_grant", "error_description": "pkce"})
            return
        token = f"tok{next(self._count)}-SECRET"
        with self.lock:
            self.tokens[token] = set(scope.split())
        doc = {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scope}
        self._json(conn, h, 200, doc)

    def _guard(
        self,
        conn: socket.socket,
        h: h11.Connection,
        request: h11.Request,
        method: str,
        headers: dict[str, str],
        body: bytes,
    ) -> bool:
        authorization = headers.get("authorization")
        seen = Seen(method, authorization, body)
        with self.lock:
            self.seen.append(seen)
        metadata = f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
        token = None
        if authorization is not None and authorization.startswith("Bearer "):
            token = authorization[len("Bearer ") :]
        with self.lock:
            scopes = self.tokens.get(token) if token is not None else None
        if scopes is None:
            error = ', error="invalid_token"' if token is not None else ""
            seen.status = 401
            self._send(
                conn,
                h,
                401,
                b"",
                [("WWW-Authenticate", f'Bearer {metadata}{error}, scope="mcp"')],
            )
            return True
        needed = self._needed(body)
        if needed is not None and needed not in scopes:
            seen.status = 403
            challenge = f'Bearer error="insufficient_scope", scope="mcp {needed}", {metadata}'
            self._send(conn, h, 403, b"", [("WWW-Authenticate", challenge)])
            return True
        seen.status = 200
        self._pass(conn, request, body)
        return False

    def _needed(self, body: bytes) -> str | None:
        try:
            message = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            return None
        if type(message) is dict and message.get("method") == "tools/call":
            params = message.get("params") or {}
            name = params.get("name")
            return self.scoped.get(name) if type(name) is str else None
        return None

    def _pass(self, conn: socket.socket, request: h11.Request, body: bytes) -> None:
        """The request to the MCP server (``Connection: close``), its answer piped back."""
        where = urlsplit(self.backend)
        assert where.hostname is not None
        assert where.port is not None
        keep = [
            (k, v)
            for k, v in request.headers
            if k.lower() not in (b"host", b"authorization", b"connection")
        ]
        h = h11.Connection(h11.CLIENT)
        head = [(b"Host", where.netloc.encode()), *keep, (b"Connection", b"close")]
        data = h.send(h11.Request(method=request.method, target=request.target, headers=head))
        data = (data or b"") + ((h.send(h11.Data(data=body)) or b"") if body else b"")
        data += h.send(h11.EndOfMessage()) or b""
        with socket.create_connection((where.hostname, where.port), LIMIT) as back:
            back.settimeout(None)
            back.sendall(data)
            while chunk := back.recv(_READ):
                conn.sendall(chunk)


class FlowAuth:
    """A ClientAuth of the test's own: an :class:`~mcp_sansio.auth.AuthFlow` per challenge,
    at most ``max_flows`` of them; the token of the last one sent."""

    def __init__(
        self,
        server: str,
        version: str = "2025-11-25",
        max_flows: int = 3,
        redirect_uri: str = REDIRECT_URI,
    ) -> None:
        self.server = server
        self.redirect_uri = redirect_uri
        self.version = version
        self.max_flows = max_flows
        self.flows: list[tuple[int, list[tuple[str, str]]]] = []
        self.authorized_with: list[Authorized] = []
        self.answered_with: list[int] = []
        self.store = MemoryTokenStore()
        self._token: str | None = None

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        return [("Authorization", f"Bearer {self._token}")] if self._token else []

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        self.flows.append((status, list(headers)))
        if len(self.flows) > self.max_flows:
            return None
        return AuthFlow(
            self.server,
            version=self.version,
            client=ClientInfo("test-client"),
            redirect_uri=self.redirect_uri,
            www_authenticate=[v for k, v in headers if k.lower() == "www-authenticate"],
            store=self.store,
        )

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        self.answered_with.append(status)

    def authorized(self, result: Authorized, *, now: float) -> None:
        self.authorized_with.append(result)
        self._token = result.tokens.access_token


def approve(url: str) -> str:
    """Play the browser: GET the authorization URL, return the 302's ``Location``."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=LIMIT)
    try:
        conn.request("GET", f"{parts.path}?{parts.query}")
        response = conn.getresponse()
        assert response.status == 302
        location = response.getheader("Location")
        assert location is not None
        return location
    finally:
        conn.close()


@contextlib.contextmanager
def guarded(**options: Any) -> Iterator[Guard]:
    """Our MCP server in a thread, behind a :class:`Guard`; stopped on the way out."""
    ready: queue.Queue[HttpListener] = queue.Queue()
    thread = threading.Thread(
        target=serve_http, args=(make_server(),), kwargs={"ready": ready.put, **options}
    )
    thread.start()
    listener = ready.get(timeout=LIMIT)
    guard = Guard(listener.url)
    guard.start()
    try:
        yield guard
    finally:
        guard.stop()
        listener.stop()
        thread.join(LIMIT)


# ------------------------------------------------------------------ the fixture itself


def test_guard_demands_a_token() -> None:
    with guarded() as guard:
        conn = http.client.HTTPConnection("127.0.0.1", int(guard.base.rsplit(":", 1)[1]))
        conn.request("POST", "/mcp", b"{}", {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 401
        assert "resource_metadata=" in (response.getheader("WWW-Authenticate") or "")
        conn.close()
        assert [s.status for s in guard.mcp()] == [401]


def test_flow_auth_gets_a_token_from_the_toy_server() -> None:
    from mcp_sansio.auth import HttpRequest, OpenUrl
    from mcp_sansio.blocking._fetch import fetch

    with guarded() as guard:
        auth = FlowAuth(guard.url)
        flow = auth.challenged(
            401,
            [
                (
                    "www-authenticate",
                    f'Bearer resource_metadata="{guard.base}{PRM}"',
                )
            ],
            now=0.0,
        )
        assert flow is not None
        while True:
            step = flow.next_step()
            if isinstance(step, HttpRequest):
                flow.receive_response(*fetch(step), now=0.0)
            elif isinstance(step, OpenUrl):
                flow.receive_redirect(approve(step.url))
            else:
                break
        assert step.tokens.access_token in guard.tokens
        assert guard.token_requests == 1
