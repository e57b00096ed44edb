"""A connection that keeps the HTTP server waiting for a request (the next one on a kept-alive
connection, or the rest of one begun) is closed after ``idle_timeout`` seconds, in each binding;
``idle_timeout=None`` waits forever."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("h11")
trio = pytest.importorskip("trio")

from mcp_sansio import asyncio as aio  # noqa: E402
from mcp_sansio import blocking  # noqa: E402
from mcp_sansio import trio as mtrio  # noqa: E402
from mcp_sansio.example import build_server  # noqa: E402

IDLE = 0.3
LIMIT = 10.0
HEAD = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"  # and no more: a request begun


def _asyncio(options: dict[str, Any], port: queue.Queue[int]) -> Callable[[], None]:
    loop = asyncio.new_event_loop()
    ended = asyncio.Event()

    async def main() -> None:
        async with await aio.serve_http(build_server(), **options) as listener:
            assert listener.port is not None
            port.put(listener.port)
            await ended.wait()

    def run() -> None:
        loop.run_until_complete(main())
        loop.close()

    threading.Thread(target=run).start()

    def stop() -> None:
        loop.call_soon_threadsafe(ended.set)

    return stop


def _trio(options: dict[str, Any], port: queue.Queue[int]) -> Callable[[], None]:
    handles: queue.Queue[Any] = queue.Queue()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            handles.put((trio.lowlevel.current_trio_token(), nursery.cancel_scope))

            async def serve(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                await mtrio.serve_http(build_server(), task_status=task_status, **options)

            port.put(await nursery.start(serve))

    threading.Thread(target=trio.run, args=(main,)).start()
    token, scope = handles.get(timeout=LIMIT)
    return lambda: token.run_sync_soon(scope.cancel)


def _blocking(options: dict[str, Any], port: queue.Queue[int]) -> Callable[[], None]:
    listeners: queue.Queue[Any] = queue.Queue()
    threading.Thread(
        target=blocking.serve_http,
        args=(build_server(),),
        kwargs={"ready": listeners.put, **options},
    ).start()
    listener = listeners.get(timeout=LIMIT)
    port.put(listener.port)
    return listener.stop  # type: ignore[no-any-return]


STARTS = {"asyncio": _asyncio, "trio": _trio, "blocking": _blocking}


@contextlib.contextmanager
def serving(binding: str, **options: Any) -> Iterator[int]:
    """The ``serve_http`` of ``binding`` in a thread; yields its port."""
    before = set(threading.enumerate())
    port: queue.Queue[int] = queue.Queue()
    stop = STARTS[binding](options, port)
    try:
        yield port.get(timeout=LIMIT)
    finally:
        stop()
        end = time.monotonic() + LIMIT
        while set(threading.enumerate()) - before and time.monotonic() < end:
            time.sleep(0.01)
        assert set(threading.enumerate()) <= before


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes ``sock`` (EOF or reset), at most LIMIT."""
    start = time.monotonic()
    sock.settimeout(LIMIT)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - start


@pytest.mark.parametrize("binding", list(STARTS))
@pytest.mark.parametrize("sent", [b"", HEAD], ids=["silent", "half-a-request"])
def test_an_idle_connection_is_closed(binding: str, sent: bytes) -> None:
    with (
        serving(binding, idle_timeout=IDLE) as port,
        socket.create_connection(("127.0.0.1", port), timeout=LIMIT) as sock,
    ):
        sock.sendall(sent)
        waited = _closed_after(sock)
    assert IDLE * 0.9 <= waited < LIMIT


@pytest.mark.parametrize("binding", list(STARTS))
def test_without_idle_timeout_it_waits(binding: str) -> None:
    with (
        serving(binding, idle_timeout=None) as port,
        socket.create_connection(("127.0.0.1", port), timeout=LIMIT) as sock,
    ):
        sock.sendall(HEAD)
        sock.settimeout(IDLE * 3)
        with pytest.raises(TimeoutError):
            sock.recv(4096)
        # Still served: the rest of the request gets its answer.
        sock.sendall(b"content-length: 0\r\n\r\n")
        sock.settimeout(LIMIT)
        assert sock.recv(4096).startswith(b"HTTP/1.1 4")  # no Accept, no body: refused
