"""One HTTP/1.1 server connection on h11, in front of an :class:`HttpServer`: sans-IO.

The runtime bindings (asyncio, trio, blocking) only move bytes: what arrives goes to
:meth:`H11Server.receive_data`, which returns the work for the sessions; what
:meth:`H11Server.data_to_send` returns goes to the socket. Requests are served one at a
time on the connection (keep-alive), each as an :class:`Exchange`. A client that sends on
while its request is being answered (pipelining) is held to :attr:`H11Server.max_held`
bytes; past that the connection is dropped, so nothing grows without bound.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

import h11

from ._server import END, Exchange, HttpServer, ResponseHead, Work

__all__ = ["H11Server"]


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


_SERVER: Final = ("server", "mcp-sansio")
# The largest request head (request line, headers and the blank line that ends them), in
# bytes: a larger one gets 431 and the connection is closed.
_MAX_HEAD: Final = 64 * 1024


def _buffered(conn: h11.Connection) -> int:
    """How many received bytes ``conn`` holds unparsed (h11's receive buffer, a private
    attribute: tests/test_http_limits.py pins what is counted). h11 bounds only a head it
    has not seen the end of; one that arrives whole in a read is parsed whatever its size,
    so the bound on a whole head is counted here, from what parsing it consumed."""
    return len(conn._receive_buffer)


class H11Server:
    """The h11 state of one connection and the exchange it is serving.

    :param core: the :class:`HttpServer` the requests go to.
    """

    def __init__(self, core: HttpServer) -> None:
        self.core = core
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        self.exchange: Exchange | None = None
        """The exchange being served, if any."""
        self.closed = False
        """Whether the connection is over (write what is left, then close the socket)."""
        self._reading_body = False
        self._lost = False
        self._out: list[bytes] = []
        self._held = 0
        self.max_held = core.max_body_size + _MAX_HEAD
        """The most bytes kept, unread, while a response is being written: what a client
        sends after its request is buffered until that response ends."""

    def receive_data(self, data: bytes) -> list[Work]:
        """Bytes from the client (``b""``: it closed). Returns the work for the sessions
        (the bytes of a response that needs no session are queued at once)."""
        if self.closed:
            return []
        if not data:
            return self.connection_lost()
        if self.exchange is not None and not self._reading_body:
            self._held += len(data)
            if self._held > self.max_held:
                return self.connection_lost()
        self.conn.receive_data(data)
        return self.resume()

    def connection_lost(self) -> list[Work]:
        """The client closed or the connection broke: an unfinished response is
        abandoned (:meth:`HttpServer.disconnected`)."""
        self.closed = True
        self._lost = True
        ex = self.exchange
        self.exchange = None
        if ex is not None and not ex.finished:
            return self.core.disconnected(ex)
        return []

    def resume(self) -> list[Work]:
        """Handle what h11 has buffered (call after a response ended: the next request
        may already be there)."""
        work: list[Work] = []
        while not self.closed:
            head = self.conn.their_state is h11.IDLE  # what comes is a request head
            before = _buffered(self.conn) if head else 0
            try:
                event = self.conn.next_event()
                if head and before - _buffered(self.conn) > _MAX_HEAD:
                    # RFC 9110, 5.4: a server that receives "a set of fields larger than it
                    # wishes to process MUST respond with an appropriate 4xx (Client Error)
                    # status code"; RFC 6585: 431, "its header fields are too large".
                    raise h11.RemoteProtocolError(
                        f"the request head is larger than {_MAX_HEAD} bytes",
                        error_status_hint=431,
                    )
            except h11.RemoteProtocolError as exc:
                self._bad_request(exc)
                return work
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return work
            if isinstance(event, h11.ConnectionClosed):
                work.extend(self.connection_lost())
                return work
            if isinstance(event, h11.Request):
                self.exchange = self.core.begin(
                    event.method.decode("ascii", "replace"),
                    event.target.decode("ascii", "replace"),
                    event.headers,
                )
                self._reading_body = not self.exchange.finished
            elif isinstance(event, h11.Data):
                ex = self.exchange
                if self._reading_body and ex is not None:
                    self._reading_body = ex.receive_body(event.data, self.core.max_body_size)
            elif isinstance(event, h11.EndOfMessage):
                ex = self.exchange
                if ex is not None and self._reading_body:
                    work.extend(self.core.end(ex))
                self._reading_body = False
        return work

    def _bad_request(self, exc: h11.RemoteProtocolError) -> None:
        status = exc.error_status_hint
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            try:
                self._out.append(
                    self.conn.send(
                        h11.Response(
                            status_code=status,
                            headers=[("content-length", "0"), ("connection", "close")],
                            reason=_reason(status),
                        )
                    )
                    or b""
                )
                self._out.append(self.conn.send(h11.EndOfMessage()) or b"")
            except h11.LocalProtocolError:
                pass
        self.exchange = None  # its response, if any, can no longer be framed
        self.closed = True

    def data_to_send(self) -> bytes:
        """The bytes to write now: whatever the current exchange has ready, framed."""
        if self._lost:
            return b""
        ex = self.exchange
        if ex is not None:
            while True:
                part = ex.next_output()
                if part is None:
                    break
                if isinstance(part, ResponseHead):
                    headers = [*part.headers, _SERVER]
                    response = h11.Response(
                        status_code=part.status, headers=headers, reason=_reason(part.status)
                    )
                    self._out.append(self.conn.send(response) or b"")
                elif part is END:
                    self._out.append(self.conn.send(h11.EndOfMessage()) or b"")
                    self._next_cycle()
                    break
                else:
                    assert isinstance(part, bytes)
                    self._out.append(self.conn.send(h11.Data(data=part)) or b"")
        out = b"".join(self._out)
        self._out.clear()
        return out

    @property
    def waiting(self) -> bool:
        """Whether an exchange is waiting for more of its response (wait on its waiter)."""
        return self.exchange is not None and not self.closed

    @property
    def needs_body(self) -> bool:
        """Whether the request is still being read."""
        return self._reading_body

    def _next_cycle(self) -> None:
        self.exchange = None
        self._held = 0
        if self.conn.our_state is h11.MUST_CLOSE or self.conn.their_state is h11.MUST_CLOSE:
            self.closed = True
            return
        if self.conn.their_state is h11.SEND_BODY:
            self.closed = True  # they are still sending a body we refused: close
            return
        try:
            self.conn.start_next_cycle()
        except h11.LocalProtocolError:
            self.closed = True
