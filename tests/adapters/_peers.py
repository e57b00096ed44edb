"""The peers of the adapter contract suite: a scripted raw peer on a Unix socket (a server
played by a thread, or a client played by the test itself), so that what the peer does is
exact and what it receives is seen line by line; and our own server of a runtime, served in
a thread of its own with its own event loop.

Every wait here is bounded (:data:`WAIT`); nothing outlives its ``with`` block.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import trio

from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio import blocking
from mcp_sansio import trio as mcp_trio
from mcp_sansio.server import Server

#: The bound on any one wait of a peer, in seconds.
WAIT = 10.0
VERSION = "2025-11-25"
MODERN = "2026-07-28"

_names = itertools.count()


def socket_path() -> str:
    """A fresh Unix socket path (short: AF_UNIX allows 108 bytes)."""
    return os.path.join(tempfile.gettempdir(), f"mcp-d-{os.getpid()}-{next(_names)}.sock")


def encode(obj: Any) -> bytes:
    """One line: a JSON object encoded, or bytes as they are (a newline added if missing)."""
    if isinstance(obj, bytes):
        return obj if obj.endswith(b"\n") or not obj else obj + b"\n"
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class Wire:
    """One end of a connection, played line by line with bounded waits."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.received: list[Any] = []
        """Every line read, decoded (or the raw bytes when it is not JSON)."""
        self.eof = False

    def send(self, *items: Any) -> None:
        """Write each item as one line (dicts as JSON, bytes as they are)."""
        self.sock.sendall(b"".join(encode(item) for item in items))

    def line(self, timeout: float = WAIT) -> bytes | None:
        """The next line (without its newline), or ``None`` at EOF; fails after
        ``timeout`` seconds without one."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if self.eof:
                return None
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line within {timeout} s (have {self.buffer[:200]!r})")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def recv(self, timeout: float = WAIT) -> dict[str, Any]:
        """The next message (a JSON object); fails at EOF or on a timeout."""
        line = self.line(timeout)
        assert line is not None, f"EOF instead of a message (after {self.received[-3:]})"
        message = json.loads(line)
        self.received.append(message)
        assert isinstance(message, dict), message
        return message

    def recv_method(self, method: str, timeout: float = WAIT) -> dict[str, Any]:
        """The next message, which must be a ``method`` request or notification."""
        message = self.recv(timeout)
        assert message.get("method") == method, (method, message)
        return message

    def quiet(self, seconds: float) -> None:
        """Assert that nothing arrives for ``seconds``."""
        try:
            line = self.line(seconds)
        except AssertionError:
            return
        raise AssertionError(f"expected silence, got {line!r}")

    def wait_eof(self, timeout: float = WAIT) -> list[Any]:
        """Read to EOF (within ``timeout``); return the messages read on the way."""
        got = []
        while (line := self.line(timeout)) is not None:
            got.append(json.loads(line))
        return got

    def shutdown_write(self) -> None:
        """Half-close: the other side reads EOF; this side can still read."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()

    # ------------------------------------------------------------------ the handshake

    def accept_initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """Play a 2025-11-25 server's side of the handshake; return the client's
        ``initialize`` params."""
        request = self.recv_method("initialize")
        result = {
            "protocolVersion": VERSION,
            "capabilities": capabilities or {"tools": {}},
            "serverInfo": {"name": "raw-server", "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        self.recv_method("notifications/initialized")
        params: dict[str, Any] = request["params"]
        return params

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """Play a 2025-11-25 client's side of the handshake; return the server's result."""
        params = {
            "protocolVersion": VERSION,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "raw-client", "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        answer = self.recv()
        assert answer["id"] == 0, answer
        assert "result" in answer, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = answer["result"]
        return result


def result(request: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``request`` with ``value``."""
    return {"jsonrpc": "2.0", "id": request["id"], "result": value}


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class RawServer:
    """A server played by ``script(wire)`` in a thread, on a Unix socket, for one
    connection. Leaving the ``with`` block waits (bounded) for the script and raises what
    it raised: its assertions are the test's."""

    def __init__(self, script: Callable[[Wire], Any]) -> None:
        self.script = script
        self.path = socket_path()
        self.wire: Wire | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listening.bind(self.path)
        self.listening.listen(1)
        self.thread = threading.Thread(target=self._main, name="raw-server", daemon=True)

    def _main(self) -> None:
        try:
            self.listening.settimeout(WAIT)
            conn, _ = self.listening.accept()
            self.wire = Wire(conn)
            self.script(self.wire)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.thread.join(WAIT)
        alive = self.thread.is_alive()
        if self.wire is not None:
            self.wire.close()
        self.listening.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        if exc_info[0] is None:
            assert not alive, "the scripted server did not finish"
            if self.error is not None:
                raise self.error


@contextlib.contextmanager
def raw_client(path: str) -> Iterator[Wire]:
    """A client played by the test, connected to ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        yield Wire(sock)
    finally:
        sock.close()


# ---------------------------------------------------------------------- our own servers


class ErrorLog(logging.Handler):
    """The records the ``mcp_sansio`` loggers emit at ERROR and above, from any thread."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def wait(self, count: int, timeout: float = WAIT) -> list[logging.LogRecord]:
        """The records, once there are at least ``count`` (bounded)."""
        end = time.monotonic() + timeout
        while len(self.records) < count and time.monotonic() < end:
            time.sleep(0.01)
        return list(self.records)


#: How many :func:`error_log` blocks were entered (the suite's fixture lets a test that
#: entered one log errors: it checks them itself; any other test must log none).
EXPECTED_ERRORS = [0]


@contextlib.contextmanager
def error_log() -> Iterator[ErrorLog]:
    """Collect what ``mcp_sansio`` logs at ERROR during the block."""
    EXPECTED_ERRORS[0] += 1
    logger = logging.getLogger("mcp_sansio")
    handler = ErrorLog()
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


class Served:
    """``server`` served by runtime ``name``'s ``serve_unix`` in a thread with its own loop.
    :attr:`errors` holds what went wrong inside (an exception out of the serving, an
    exception the event loop reported)."""

    def __init__(self, name: str, server: Server, **options: Any) -> None:
        self.name = name
        self.path = socket_path()
        self.options = options
        self.errors: list[Any] = []
        self.ready = threading.Event()
        self._stop: Callable[[], None] | None = None
        self.thread = threading.Thread(
            target=self._main, args=(server,), name=f"serve-{name}", daemon=True
        )
        self.thread.start()
        assert self.ready.wait(WAIT), f"the {name} server did not start"
        assert not self.errors, self.errors

    def _main(self, server: Server) -> None:
        try:
            getattr(self, f"_serve_{self.name}")(server)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            self.ready.set()

    def _serve_blocking(self, server: Server) -> None:
        listener = blocking.Listener.unix(server, self.path, **self.options)
        self._stop = listener.stop
        self.ready.set()
        try:
            listener.serve_forever()
        finally:
            listener.close()

    def _serve_asyncio(self, server: Server) -> None:
        async def main() -> None:
            loop = asyncio.get_running_loop()
            loop.set_exception_handler(lambda _, context: self.errors.append(context))
            stop = asyncio.Event()

            def stopping() -> None:
                loop.call_soon_threadsafe(stop.set)

            self._stop = stopping
            async with await mcp_asyncio.serve_unix(server, self.path, **self.options):
                self.ready.set()
                await stop.wait()

        asyncio.run(main())

    def _serve_trio(self, server: Server) -> None:
        async def main() -> None:
            token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                serve = functools.partial(mcp_trio.serve_unix, server, self.path, **self.options)
                await nursery.start(serve)
                cancel = nursery.cancel_scope.cancel
                self._stop = lambda: trio.from_thread.run_sync(cancel, trio_token=token)
                self.ready.set()

        trio.run(main)

    def close(self) -> None:
        if self._stop is not None and self.thread.is_alive():
            self._stop()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), f"the {self.name} server did not stop"
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
        if exc_info[0] is None:
            assert not self.errors, self.errors
