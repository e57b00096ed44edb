"""A Streamable HTTP endpoint on a loopback address (:class:`HttpTarget`)."""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._targets import (
    CHUNK,
    MAX_LINE,
    SHUTDOWN_TIMEOUT,
    Channel,
    Incoming,
    TargetError,
)

_CONNECT_TIMEOUT: Final = 5.0
#: How long a POST waits for the status line of the one before it, in seconds.
_HEAD_WAIT: Final = 10.0
#: The longest an HTTP response may stay open before it is cut (a listen stream is cut
#: earlier, by :meth:`Channel.abort`).
_MAX_STREAM_SECONDS: Final = 120.0
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


def _version_header(version: str) -> bool:
    """Whether requests of ``version``'s session carry ``MCP-Protocol-Version`` once it is
    initialized (2026-07-28 requests carry it as a standard header of their own)."""
    spec = VERSIONS.get(version)
    return spec is not None and spec.protocol_version_header and spec.policy.handshake


def _loopback(host: str, port: int) -> list[tuple[Any, ...]]:
    """The addresses of ``host``, all loopback; raises :class:`TargetError` otherwise."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetError(f"cannot resolve {host!r}: {exc}") from None
    for info in infos:
        address = str(info[4][0])
        if not ipaddress.ip_address(address.split("%", 1)[0]).is_loopback:
            raise TargetError(
                f"{host!r} resolves to {address}, which is not a loopback address: "
                "the probe only talks to this machine"
            )
    return infos


class HttpTarget:
    """A Streamable HTTP endpoint on this machine: a fresh session (its own
    ``initialize``, or just its own requests in 2026-07-28) for each peer.

    :param url: ``http://HOST:PORT/PATH``, where HOST is a loopback address or a name
        that resolves only to loopback addresses. Raises :class:`TargetError` otherwise.
    :param extra_headers: called with the method (``POST``, ``DELETE``) of each request,
        returns headers to add to it (an ``Authorization`` for a protected server: a
        :class:`~mcp_sansio.auth.ClientAuth`'s ``headers``). The probe's own headers come
        first; these are never shown in its report.
    """

    transport = "http"

    def __init__(
        self,
        url: str,
        *,
        extra_headers: Callable[[str], Sequence[tuple[str, str]]] | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise TargetError(f"not an http:// URL: {url!r} (the probe does not do TLS)")
        if not parts.hostname:
            raise TargetError(f"no host in {url!r}")
        self.url = url
        """The endpoint."""
        self.host: str = parts.hostname
        try:
            self.port: int = parts.port or 80
        except ValueError:
            raise TargetError(f"bad port in {url!r}") from None
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.extra_headers = extra_headers
        """What each request adds (see the parameter), or ``None``."""
        _loopback(self.host, self.port)

    def _extra(self, method: str) -> list[tuple[str, str]]:
        return [] if self.extra_headers is None else list(self.extra_headers(method))

    def describe(self) -> str:
        """A short description for reports."""
        return f"http: {self.url}"

    def open(self) -> Channel:
        """A fresh client session (no request is made until the first :meth:`Channel.send`).
        Raises :class:`TargetError` when nothing listens there."""
        try:
            with socket.create_connection((self.host, self.port), timeout=_CONNECT_TIMEOUT):
                pass
        except OSError as exc:
            raise TargetError(f"cannot connect to {self.url}: {exc}") from None
        return _HttpChannel(self)


def _host_header(host: str, port: int) -> str:
    if ":" in host:
        host = f"[{host}]"
    return host if port == 80 else f"{host}:{port}"


class _HttpChannel(Channel):
    transport = "http"

    def __init__(self, target: HttpTarget) -> None:
        super().__init__()
        self._target = target
        self._session_id: str | None = None
        self._version: str | None = None  # initialize era, once negotiated
        self._modern: str | None = None  # the last 2026 version seen in a message's _meta
        self._exchanges: dict[int, tuple[threading.Thread, Any, list[socket.socket]]] = {}
        self._next = 0
        self._closed = False
        self._state_lock = threading.Lock()
        self._last_head: threading.Event | None = None

    # -------------------------------------------------------------- sending

    def _headers(self, body: bytes) -> tuple[list[tuple[str, str]], Any, bool]:
        """The era's headers for ``body``, the request id it carries, and whether it is
        an ``initialize`` request."""
        from mcp_sansio.http import standard_headers

        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            message = None
        headers: list[tuple[str, str]] = []
        rid = None
        initialize = False
        modern = False
        if isinstance(message, dict):
            rid = message.get("id")
            initialize = message.get("method") == "initialize"
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get(_META_VERSION), str):
                modern = True
                self._modern = meta[_META_VERSION]
                headers.extend(standard_headers(message))
        if not modern and self._modern is not None and isinstance(message, dict):
            # A 2026-07-28 conversation's message without a version in _meta (a near-miss):
            # the headers are right, so that only the body is wrong.
            modern = True
            headers.append(("MCP-Protocol-Version", self._modern))
            headers.extend(h for h in standard_headers(message) if h[0] != "MCP-Protocol-Version")
        if not modern:
            if self._session_id is not None:
                headers.append(("Mcp-Session-Id", self._session_id))
            if self._version is not None and _version_header(self._version):
                headers.append(("MCP-Protocol-Version", self._version))
            elif self._version is None and self._modern is not None and message is None:
                headers.append(("MCP-Protocol-Version", self._modern))
        headers.extend(self._target._extra("POST"))
        return headers, rid, initialize

    def send(self, data: bytes) -> None:
        """POST ``data`` (one message, its line ending dropped) in a thread of its own,
        once the server has begun to answer the previous POST (its status line): messages
        reach the server in the order they were sent, as on a stream of lines."""
        if self._closed:
            return
        if self._last_head is not None:
            self._last_head.wait(_HEAD_WAIT)
        body = data.rstrip(b"\r\n")
        headers, rid, initialize = self._headers(body)
        head = threading.Event()
        self._last_head = head
        with self._state_lock:
            key = self._next
            self._next += 1
            sockets: list[socket.socket] = []
            thread = threading.Thread(
                target=self._post, args=(body, headers, initialize, sockets, head), daemon=True
            )
            self._exchanges[key] = (thread, rid, sockets)
        thread.start()

    def _post(
        self,
        body: bytes,
        headers: list[tuple[str, str]],
        initialize: bool,
        sockets: list[socket.socket],
        head: threading.Event,
    ) -> None:
        try:
            self._exchange(body, headers, initialize, sockets, head)
        finally:
            head.set()

    def _exchange(
        self,
        body: bytes,
        headers: list[tuple[str, str]],
        initialize: bool,
        sockets: list[socket.socket],
        head: threading.Event,
    ) -> None:
        import h11

        from mcp_sansio._sse import SseDecoder

        target = self._target
        try:
            sock = socket.create_connection((target.host, target.port), timeout=_CONNECT_TIMEOUT)
        except OSError as exc:
            self._push(Incoming(note=f"cannot connect: {exc}", failed=body))
            return
        sockets.append(sock)
        messages = 0
        status = 0
        ctype = ""
        try:
            conn = h11.Connection(h11.CLIENT)
            request = h11.Request(
                method="POST",
                target=target.path,
                headers=[
                    ("Host", _host_header(target.host, target.port)),
                    ("User-Agent", "mcp-sansio-probe"),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                    ("Content-Length", str(len(body))),
                    ("Connection", "close"),
                    *headers,
                ],
            )
            sock.sendall(conn.send(request))
            # (An answer before the whole body, a 413, is read like any other.)
            self._send_body(sock, conn, body)
            decoder: SseDecoder | None = None
            parts: list[bytes] = []
            size = 0
            deadline = time.monotonic() + _MAX_STREAM_SECONDS
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    if self._closed or time.monotonic() > deadline:
                        break
                    sock.settimeout(0.25)
                    try:
                        data = sock.recv(CHUNK)
                    except TimeoutError:
                        continue
                    except OSError:
                        data = b""
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    status = event.status_code
                    fields = {k.decode().lower(): v.decode("latin-1") for k, v in event.headers}
                    ctype = fields.get("content-type", "")
                    session = fields.get("mcp-session-id")
                    if session and self._session_id is None:
                        self._session_id = session
                    head.set()
                    self._push(Incoming(note=f"HTTP {status} {ctype}".rstrip(), status=status))
                    if "text/event-stream" in ctype:
                        decoder = SseDecoder(MAX_LINE)
                elif isinstance(event, h11.Data):
                    if decoder is not None:
                        for sse in decoder.feed(bytes(event.data)):
                            messages += self._message(sse.data.encode(), status, initialize)
                    else:
                        size += len(event.data)
                        if size <= MAX_LINE:
                            parts.append(bytes(event.data))
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
                else:  # pragma: no cover - informational responses
                    continue
            if decoder is not None:
                for sse in decoder.close():
                    messages += self._message(sse.data.encode(), status, initialize)
            elif parts and (status < 400 or "json" in ctype):
                # (An error status with a body that is not JSON, "Request body too large" as
                # text, is the transport's answer, not a message of the server's.)
                messages += self._message(b"".join(parts), status, initialize)
        except (OSError, h11.ProtocolError) as exc:
            if not self._closed:
                self._push(Incoming(note=f"HTTP exchange failed: {exc}", status=status or None))
        finally:
            with contextlib.suppress(OSError):
                sock.close()
        if messages == 0 and not self._closed and status != 202 and status != 204:
            self._push(
                Incoming(
                    note=f"HTTP {status or 'exchange'} ended without a JSON-RPC message",
                    status=status or None,
                    failed=body,
                )
            )

    @staticmethod
    def _send_body(sock: socket.socket, conn: Any, body: bytes) -> bool:
        """Send the body in pieces, stopping when the server answers before the end (a
        413 for a body too large): ``False`` then."""
        import h11

        view = memoryview(body)
        while view:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                return False
            piece = bytes(view[:CHUNK])
            try:
                sock.sendall(conn.send(h11.Data(data=piece)))
            except OSError:
                return False
            view = view[CHUNK:]
        tail = conn.send(h11.EndOfMessage())
        if tail:
            sock.sendall(tail)
        return True

    def _message(self, data: bytes, status: int, initialize: bool) -> int:
        data = data.strip()
        if not data:
            return 0  # an SSE priming event
        if initialize and self._version is None:
            with contextlib.suppress(orjson.JSONDecodeError):
                value = orjson.loads(data)
                result = value.get("result") if isinstance(value, dict) else None
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self._version = result["protocolVersion"]
        self._push(Incoming(data=data, status=status))
        return 1

    # -------------------------------------------------------------- the rest

    def settle(self, timeout: float) -> bool:
        """Wait for every POST's response to end (aborted ones aside)."""
        deadline = time.monotonic() + timeout
        for thread, _, _ in list(self._exchanges.values()):
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        return True

    def abort(self, message_id: Any) -> bool:
        """Close the connection of the POST that carried request ``message_id``."""
        found = False
        for thread, rid, sockets in list(self._exchanges.values()):
            if rid == message_id and type(rid) is type(message_id) and thread.is_alive():
                found = True
                for sock in sockets:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
        return found

    def close(self) -> str:
        """Cut every stream; end the session with ``DELETE`` when the server set one."""
        if self._closed:
            return ""
        self._closed = True
        for thread, _, sockets in list(self._exchanges.values()):
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            thread.join(SHUTDOWN_TIMEOUT)
        if self._session_id is not None:
            self._delete()
        self._push_eof()
        return ""

    def _delete(self) -> None:
        import h11

        target = self._target
        headers = [
            ("Host", _host_header(target.host, target.port)),
            ("Mcp-Session-Id", self._session_id or ""),
            ("Connection", "close"),
        ]
        if self._version is not None and _version_header(self._version):
            headers.append(("MCP-Protocol-Version", self._version or ""))
        headers.extend(target._extra("DELETE"))
        with contextlib.suppress(OSError, h11.ProtocolError):
            conn = h11.Connection(h11.CLIENT)
            with socket.create_connection(
                (target.host, target.port), timeout=SHUTDOWN_TIMEOUT
            ) as sock:
                request = h11.Request(method="DELETE", target=target.path, headers=headers)
                sock.sendall(conn.send(request) + conn.send(h11.EndOfMessage()))
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = sock.recv(CHUNK)
                        conn.receive_data(data)
                        if not data:
                            return
                    elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                        return
