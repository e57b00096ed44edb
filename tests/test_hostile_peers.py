"""Hostile peers whose behaviour is generated (hypothesis), against the client and the server
of each adapter (blocking, asyncio, trio), over Unix sockets: issue 16, "hardening".

**Hostile servers.** A server in threads of this process answers the client's ``initialize``,
then, for each call the client makes, plays a generated segment: acts, then an ending. The
acts: pings to answer (long string ids up to 100 KB, integer ids, duplicates, ids that cannot
be read), notifications (log messages, progress for tokens that name no request), garbage
(lines that are not JSON, JSON that is not JSON-RPC, blank lines), stray answers (to ids the
client never used, and late answers to its earlier requests). The endings: answer the call
well, or with an error; answer it with a line over the client's ``max_message_size``; stay
silent; end the stream (EOF, reading on); close the socket (perhaps mid-line); stop reading
and flood pings; flood unreadable lines. The client (``max_message_size`` 128 KiB,
``max_write_buffer`` 4 KiB, 64 KiB or 1 MiB, ``max_unreadable`` 256 or 16, ``write_timeout``
1 s when the script stops reading, else 3 s so that a busy machine never cuts off a server
that reads) makes the calls, one more after a fatal ending. What must hold, whatever was
generated:

- each call ends with its result or with one of the documented errors (``McpError``,
  ``RequestTimeout``, ``ConnectionLost``), nothing else, and nothing hangs (a run longer than
  ``HANG`` fails) or raises when the client is closed;
- an answered call gets exactly the answer sent; an error answer is that error; an answer over
  ``max_message_size`` fails its call at once with -32600 naming its size and the option; a
  silent server is a ``RequestTimeout``; a server that stops reading while it floods is a
  ``ConnectionLost`` naming it ("stopped reading"), within ``write_timeout`` and a generous
  slack; ``max_unreadable`` unreadable lines in a row (in a flood, or in the acts when the
  bound is 16) are a ``ConnectionLost`` naming the last one, and nothing after it is handled; an
  ended or closed stream is a ``ConnectionLost``, and so is every call after a fatal ending;
- every ping with a readable id that the client must have read is answered, once per ping,
  with that exact id (a result ``{}``, or -32600 for a reused id); no answer goes to an id the
  server did not send; each unreadable line the client must have read is answered to ``null``
  (-32700 or -32600), and none past the bound; every log message is delivered, in order,
  once, and none after the session closed; everything the client writes is JSON-RPC;
- afterwards no thread, event-loop task or file descriptor of the client is left.

**Hostile clients.** Each adapter's ``serve_unix`` (a tiny server with an ``echo`` tool, its
``max_message_size`` 192 KiB, ``max_write_buffer`` 64 KiB, ``write_timeout`` 1 s) runs in a
thread for the whole test; each example connects a raw socket that may open the session
(fully, halfway, or not at all), then sends generated requests (``ping``, ``tools/list``,
``tools/call``, an unknown method; long and duplicate ids, ids that cannot be read), lines
over ``max_message_size`` (their id first, last, or none), garbage and stray answers, and
ends: EOF (reading on), EOF in the middle of a line, a close without reading, a flood of
pings without reading, or a flood of unreadable lines. What must hold:

- nothing raises out of the serving (nor is logged as an error by the adapter);
- while the client reads, every request with a readable id gets exactly one answer with that
  id: the result, or the error JSON-RPC and the session state define (-32600 for a line over
  ``max_message_size``, naming its size; -32601 for an unknown method; -32600 before
  ``initialize``); a reused id is refused to that id or, while a request with it is in
  flight, to ``null``; unreadable lines are answered to ``null``, up to the bound; after 256
  unreadable lines in a row the server closes the connection, though the client does not;
- a client that stops reading is dropped within ``write_timeout`` and a generous slack;
- the server lets go of the connection (its descriptors and threads), and a well-behaved
  client connected next gets correct answers.

Progress notifications for unknown tokens are kept fewer than the bound in a row in the
generated scripts (and each notes act starts and ends with a log message);
``test_progress_for_unknown_tokens_is_readable`` pins that 300 of them in a row do not close
the session (they did, counted as unreadable, until fixed). Two more deterministic tests pin
the adapter defects these tests found, now fixed (see their docstrings). Every ending is
also run as an explicit example, whatever is generated.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import os
import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio import blocking
from mcp_sansio import trio as mcp_trio
from mcp_sansio.server import Server
from mcp_sansio.session import DEFAULT_MAX_UNREADABLE, ConnectionLost, McpError, RequestTimeout

ADAPTERS = ["blocking", "asyncio", "trio"]
VERSION = "2025-11-25"
#: The bound on one example's run: a hang is a failure, not a stuck suite.
HANG = 60.0
#: The slack given to anything that depends on timing (the machine is shared and noisy).
SLACK = 10.0
#: A call's timeout when the server answers it (never reached: a RequestTimeout is a failure).
CALL_TIMEOUT = 20.0
#: A call's timeout when the server stays silent.
SILENT_TIMEOUT = 0.5
#: The client's max_message_size.
CLIENT_LIMIT = 128 * 1024
#: The served sessions' max_message_size and write bounds.
SERVER_LIMIT = 192 * 1024
SERVER_WRITE_TIMEOUT = 1.0
SERVER_WRITE_BUFFER = 64 * 1024
UNREADABLE = DEFAULT_MAX_UNREADABLE
#: Examples per test (per adapter): more under the long profile.
EXAMPLES = 20 if settings().max_examples <= 100 else 150
PROPERTY = settings(
    max_examples=EXAMPLES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def encode(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def key(value: Any) -> tuple[str, Any] | None:
    """An id as it is told apart (``1`` is not ``"1"``); ``None`` for no id."""
    return None if value is None else (type(value).__name__, value)


_paths = itertools.count()


@pytest.fixture(scope="module")
def sockdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hp")
    assert len(str(path)) < 90  # room for a socket name within AF_UNIX's 108 bytes
    return path


def socket_path(directory: Path) -> str:
    return str(directory / f"s{next(_paths)}")


# ---------------------------------------------------------------------- what peers send


@dataclass
class Line:
    """One line a hostile peer sent, and what the other side owes it.

    ``reply``: ``("id", key)`` (an answer to that id), ``("null", code)`` (an error to
    ``null``), or ``None`` (nothing). ``unreadable``: whether it counts toward the bound.
    ``seq``: a log message's number.
    """

    data: bytes
    reply: tuple[str, Any] | None = None
    unreadable: bool = False
    blank: bool = False
    seq: int | None = None
    first_use: bool = False
    expect: Any = None  # direction 2: what the first answer to this id must be


#: Lines that are not JSON (-32700 to null), JSON that is no JSON-RPC message (-32600 to
#: null), and blank lines (nothing): each with the code of its reply.
NOT_JSON = [b"y", b"{", b"}", b'{"jsonrpc":"2.0"', b"NaN", b"1e400", b"\xff\xfe", b"[1,]"]
NOT_JSON += [b'{"a":1}{"b":2}', b"\xef\xbb\xbf{}"]
NOT_RPC = [b'"x"', b"1", b"null", b"[1]", b"[]", b'{"a":1}', b'{"jsonrpc":"2.0"}']
NOT_RPC += [b'{"jsonrpc":"2.0","method":1}', b'{"jsonrpc":"1.0","method":"ping"}']
BLANK = [b"", b"  ", b"\t"]


def garbage_line(data: bytes) -> Line:
    if data in BLANK:
        return Line(data, blank=True)
    code = -32600 if data in NOT_RPC else -32700
    return Line(data, reply=("null", code), unreadable=True)


GARBAGE = st.sampled_from(NOT_JSON + NOT_RPC + BLANK) | st.binary(max_size=40).map(
    lambda b: b"\xff" + b.replace(b"\n", b"").replace(b"\r", b"")  # never UTF-8: not JSON
)
#: Ids that can be read: duplicates likely (small integers, short strings), the 64-bit range,
#: long strings (up to 100 KB).
READABLE_IDS = st.one_of(
    st.integers(0, 6),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from(["a", "b", "", "é", "1"]),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=20),
    st.builds(lambda n, tail: "L" * n + tail, st.integers(1_000, 100_000), st.sampled_from("xyz")),
)
#: Ids that cannot be read: the request is refused to null (and is unreadable).
UNREADABLE_IDS = st.sampled_from([None, True, 1.5, 2**64, -(2**63) - 1, [1], {"a": 1}])
PING_IDS = st.one_of(READABLE_IDS, READABLE_IDS, UNREADABLE_IDS)


def readable(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, str) or (isinstance(value, int) and -(2**63) <= value < 2**64)


# ---------------------------------------------------------------------- hostile servers

ACT = st.one_of(
    st.tuples(st.just("pings"), st.lists(PING_IDS, min_size=1, max_size=8)),
    st.tuples(st.just("notes"), st.lists(st.sampled_from(["log", "progress"]), max_size=200)),
    st.tuples(st.just("garbage"), st.lists(GARBAGE, min_size=1, max_size=20)),
    st.tuples(
        st.just("stray"),
        st.lists(
            st.tuples(
                st.sampled_from(["never", "big", "late", "late-error"]), st.integers(0, 10**6)
            ),
            min_size=1,
            max_size=5,
        ),
    ),
)
ANSWER = st.just(("answer",))
ENDING = st.one_of(
    ANSWER,
    ANSWER,
    ANSWER,
    st.tuples(
        st.just("error"),
        st.integers(-(2**31), 2**31 - 1),
        st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
    ),
    st.tuples(st.just("oversized"), st.integers(1, 100_000), st.booleans()),
    st.just(("silent",)),
    st.just(("eof",)),
    st.tuples(st.just("close"), st.sampled_from([b"", b'{"jsonrpc":"2.0","id":', b"\xff\xfe"])),
    st.tuples(st.just("deaf"), st.sampled_from(["int", "long"])),
    st.tuples(st.just("flood"), st.integers(UNREADABLE, UNREADABLE + 100), GARBAGE),
)
FATAL = {"eof", "close", "deaf", "flood"}
METHODS = {"ping": "ping", "list_tools": "tools/list", "call_tool": "tools/call"}


@st.composite
def segments(draw: st.DrawFn) -> list[tuple[str, list[Any], tuple[Any, ...]]]:
    """The script: per call, its method, the acts and the ending (none after a fatal one)."""
    script = []
    for _ in range(draw(st.integers(1, 3))):
        method = draw(st.sampled_from(sorted(METHODS)))
        ending = draw(ENDING)
        acts = [] if ending[0] == "silent" else draw(st.lists(ACT, max_size=4))
        if ending[0] == "flood" and ending[2] in BLANK:
            ending = (*ending[:2], b"y")
        script.append((method, acts, ending))
        if ending[0] in FATAL:
            break
    return script


def result_for(method: str, k: int) -> dict[str, Any]:
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{"name": f"tool-{k}", "inputSchema": {"type": "object"}}]}
    return {"content": [{"type": "text", "text": f"answer {k}"}]}


def padded(head: str, tail: str, size: int) -> bytes:
    """``head`` + padding + ``tail``: exactly ``size`` bytes."""
    data = (head + "x" * (size - len(head) - len(tail)) + tail).encode()
    assert len(data) == size
    return data


class Gone(Exception):
    """The peer went away while we wrote."""


def send_all(sock: socket.socket, data: bytes, until: float) -> None:
    """Write all of ``data`` on a socket with a short timeout (each ``send`` that times out
    sent nothing); raise :class:`Gone` if the peer went away or ``until`` passed."""
    view = memoryview(data)
    while view:
        try:
            view = view[sock.send(view) :]
        except TimeoutError:
            if time.monotonic() > until:
                raise Gone("the peer took nothing until the deadline") from None
        except OSError as exc:
            raise Gone(str(exc)) from exc


class HostileServer:
    """Listens on ``path``, serves one client with the script, records what it read."""

    def __init__(
        self,
        path: str,
        script: list[tuple[str, list[Any], tuple[Any, ...]]],
        bound: int = UNREADABLE,
    ) -> None:
        self.path = path
        self.script = script
        self.bound = bound
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.listener.settimeout(HANG)
        self.conn: socket.socket | None = None
        self.requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.segments: list[list[Line]] = []  # what was sent, per segment reached
        self.call_ids: list[Any] = []
        self.client_ids: list[Any] = []  # every request id the client sent
        self.responses: list[dict[str, Any]] = []
        self.notifications: list[str] = []
        self.bad: list[bytes] = []  # lines the client wrote that are not JSON-RPC
        self.deaf = False
        self.flood_end: str | None = None
        self.errors: list[BaseException] = []
        self.seq = itertools.count()
        self.deadline = time.monotonic() + HANG
        self.reader: threading.Thread | None = None
        self.thread = threading.Thread(target=self._main, name="hostile-server", daemon=True)
        self.thread.start()

    # ---------------------------------------------------------------- reading

    def _read(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while not self.deaf and time.monotonic() < self.deadline:
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                buf += data
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    self._record(raw)
        finally:
            self.requests.put(None)

    def _record(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            self.bad.append(raw)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.bad.append(raw)
        elif "method" in message and "id" in message:
            self.client_ids.append(message["id"])
            self.requests.put(message)
        elif "method" in message:
            self.notifications.append(message["method"])
        elif "result" in message or "error" in message:
            self.responses.append(message)
        else:
            self.bad.append(raw)

    def _next_request(self) -> dict[str, Any] | None:
        try:
            return self.requests.get(timeout=max(0.0, self.deadline - time.monotonic()))
        except queue.Empty:
            return None

    # ---------------------------------------------------------------- writing

    def _send(self, lines: list[Line]) -> None:
        assert self.conn is not None
        send_all(self.conn, b"".join(line.data + b"\n" for line in lines), self.deadline)

    def _main(self) -> None:
        try:
            try:
                conn, _ = self.listener.accept()
            finally:
                self.listener.close()
            self.conn = conn
            conn.settimeout(0.2)
            self.reader = threading.Thread(target=self._read, args=(conn,), daemon=True)
            self.reader.start()
            with contextlib.suppress(Gone):  # the client closed: the test checks the rest
                self._play(conn)
            self.reader.join(max(0.0, self.deadline - time.monotonic()))
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            if self.conn is not None:
                with contextlib.suppress(OSError):
                    self.conn.shutdown(socket.SHUT_RDWR)
                self.conn.close()

    def _play(self, conn: socket.socket) -> None:
        opening = self._next_request()
        assert opening is not None
        assert opening["method"] == "initialize", opening
        version = opening["params"]["protocolVersion"]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
        self._send([Line(encode({"jsonrpc": "2.0", "id": opening["id"], "result": result}))])
        for k, (_, acts, ending) in enumerate(self.script):
            request = self._next_request()
            if request is None:
                return  # the client has gone
            self.call_ids.append(request["id"])
            lines: list[Line] = []
            self.segments.append(lines)
            for act in acts:
                lines += self._render(act, k)
            self._send(lines)
            self._end(conn, k, request, ending, lines)
            if ending[0] in FATAL:
                return

    def _log(self) -> Line:
        seq = next(self.seq)
        params = {"level": "info", "logger": "hostile", "data": seq}
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
        return Line(encode(note), seq=seq)

    def _render(self, act: tuple[Any, ...], k: int) -> list[Line]:
        kind, items = act
        lines: list[Line] = []
        if kind == "raw":  # the pinned tests' own lines
            lines += items
        elif kind == "pings":
            for value in items:
                data = encode({"jsonrpc": "2.0", "id": value, "method": "ping"})
                if readable(value):
                    lines.append(Line(data, reply=("id", key(value))))
                else:
                    lines.append(Line(data, reply=("null", -32600), unreadable=True))
        elif kind == "notes":
            # A log message first and last: progress for unknown tokens never makes a run
            # with the garbage around it (see test_progress_for_unknown_tokens_is_readable).
            lines.append(self._log())
            run = 0  # progress in a row: never as many as the bound
            for i, note in enumerate(items):
                if note == "log" or run == self.bound - 1:
                    lines.append(self._log())
                    run = 0
                if note != "log":
                    params = {"progressToken": f"unknown-{k}-{i}", "progress": i}
                    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
                    lines.append(Line(encode({**progress, "params": params})))
                    run += 1
            lines.append(self._log())
        elif kind == "garbage":
            lines += [garbage_line(data) for data in items]
        else:
            earlier = self.client_ids[:-1]  # the client's requests before this call
            for how, n in items:
                target: Any = f"never-{n}" if how == "never" else 10**13 + n
                if how.startswith("late") and earlier:
                    target = earlier[n % len(earlier)]
                answer: dict[str, Any] = {"jsonrpc": "2.0", "id": target}
                if how == "late-error":
                    answer["error"] = {"code": -32603, "message": "late"}
                else:
                    answer["result"] = {}
                lines.append(Line(encode(answer)))
        return lines

    def _end(
        self,
        conn: socket.socket,
        k: int,
        request: dict[str, Any],
        ending: tuple[Any, ...],
        lines: list[Line],
    ) -> None:
        kind = ending[0]
        call_id = request["id"]
        if kind == "answer":
            answer = {"jsonrpc": "2.0", "id": call_id, "result": result_for(request["method"], k)}
            end = [Line(encode(answer))]
        elif kind == "error":
            error = {"code": ending[1], "message": ending[2]}
            end = [Line(encode({"jsonrpc": "2.0", "id": call_id, "error": error}))]
        elif kind == "oversized":
            size, idj = CLIENT_LIMIT + ending[1], json.dumps(call_id)
            if ending[2]:
                data = padded('{"jsonrpc":"2.0","id":' + idj + ',"result":{"pad":"', '"}}', size)
            else:
                data = padded('{"jsonrpc":"2.0","result":{"pad":"', '"},"id":' + idj + "}", size)
            end = [Line(data)]
        elif kind == "flood":
            end = [self._log()] + [garbage_line(ending[2])] * ending[1]
        else:
            end = []
        lines += end
        self._send(end)
        if kind == "eof":
            conn.shutdown(socket.SHUT_WR)  # reading on
        elif kind == "close":
            send_all(conn, ending[1], self.deadline)
            self.deaf = True
            conn.shutdown(socket.SHUT_RDWR)
        elif kind == "deaf":
            self.deaf = True
            self._flood_pings(conn, ending[1])

    def _flood_pings(self, conn: socket.socket, ids: str) -> None:
        """Never read again; write pings until the client lets go."""
        start = FLOOD_IDS
        while True:
            if ids == "int":
                chunk = b"".join(
                    b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i
                    for i in range(start, start + 1000)
                )
            else:
                pad = "D" * 1000
                chunk = b"".join(
                    b'{"jsonrpc":"2.0","id":"%d-%s","method":"ping"}\n' % (i, pad.encode())
                    for i in range(start, start + 100)
                )
            start += 1000
            try:
                send_all(conn, chunk, self.deadline)
            except Gone as exc:
                self.flood_end = str(exc)
                return


# ---------------------------------------------------------------------- the clients


@dataclass
class Report:
    """What a client run saw."""

    outcomes: list[tuple[Any, float]] = field(default_factory=list)
    logs: list[Any] = field(default_factory=list)
    crash: BaseException | None = None
    tasks_left: int | None = None
    hung: bool = False

    def note(self, notification: Any) -> None:
        if notification.method == "notifications/message":
            self.logs.append((notification.params or {}).get("data"))


def _call_blocking(client: blocking.Client, method: str, timeout: float) -> Any:
    if method == "ping":
        return client.ping(timeout=timeout)
    if method == "list_tools":
        return client.list_tools(timeout=timeout)
    return client.call_tool("echo", {"text": "hi"}, timeout=timeout)


async def _call_async(client: Any, method: str, timeout: float) -> Any:
    if method == "ping":
        return await client.ping(timeout=timeout)
    if method == "list_tools":
        return await client.list_tools(timeout=timeout)
    return await client.call_tool("echo", {"text": "hi"}, timeout=timeout)


def run_blocking(path: str, calls: list[tuple[str, float]], options: Any, report: Report) -> None:
    with blocking.Client.connect_unix(path, on_notification=report.note, **options) as client:
        for method, timeout in calls:
            start = time.monotonic()
            try:
                value: Any = _call_blocking(client, method, timeout)
            except Exception as exc:
                value = exc
            report.outcomes.append((value, time.monotonic() - start))


def run_asyncio(path: str, calls: list[tuple[str, float]], options: Any, report: Report) -> None:
    async def main() -> None:
        before = len(asyncio.all_tasks())
        client = mcp_asyncio.Client.connect_unix(path, on_notification=report.note, **options)
        async with client:
            for method, timeout in calls:
                start = time.monotonic()
                try:
                    value: Any = await _call_async(client, method, timeout)
                except Exception as exc:
                    value = exc
                report.outcomes.append((value, time.monotonic() - start))
        report.tasks_left = len(asyncio.all_tasks()) - before

    asyncio.run(main())


def run_trio(path: str, calls: list[tuple[str, float]], options: Any, report: Report) -> None:
    async def main() -> None:
        before = trio.lowlevel.current_statistics().tasks_living
        client = mcp_trio.Client.connect_unix(path, on_notification=report.note, **options)
        async with client:
            for method, timeout in calls:
                start = time.monotonic()
                try:
                    value: Any = await _call_async(client, method, timeout)
                except Exception as exc:
                    value = exc
                report.outcomes.append((value, time.monotonic() - start))
        report.tasks_left = trio.lowlevel.current_statistics().tasks_living - before

    trio.run(main)


RUNNERS: dict[str, Callable[..., None]] = {
    "blocking": run_blocking,
    "asyncio": run_asyncio,
    "trio": run_trio,
}


def run_client(adapter: str, path: str, calls: list[tuple[str, float]], options: Any) -> Report:
    """Run a client in a thread of its own, bounded by ``HANG``."""
    report = Report()

    def target() -> None:
        try:
            RUNNERS[adapter](path, calls, options, report)
        except BaseException as exc:
            report.crash = exc

    thread = threading.Thread(target=target, name=f"client-{adapter}", daemon=True)
    thread.start()
    thread.join(HANG)
    report.hung = thread.is_alive()
    return report


# ---------------------------------------------------------------------- the model


def statuses(
    script: list[Any], reached: list[list[Line]], bound: int
) -> tuple[list[list[str]], Any]:
    """For each line sent: "must" (the client read it, and we read what it answered), "may"
    (perhaps), "never" (the session had closed); and where the unreadable bound broke the
    session (segment, line), or ``None``."""
    run, broken = 0, None
    result: list[list[str]] = []
    for k, lines in enumerate(reached):
        certain = script[k][2][0] not in {"close", "deaf"}
        marks = []
        for i, line in enumerate(lines):
            if broken is not None:
                marks.append("never")
                continue
            if line.unreadable:
                run += 1
                if run >= bound:
                    broken = (k, i)
                    marks.append("never")  # the last one is not answered
                    continue
            elif not line.blank:
                run = 0
            marks.append("must" if certain else "may")
        result.append(marks)
    return result, broken


FLOOD_IDS = 10**15


def flood_ping(value: Any) -> bool:
    """Whether ``value`` is the id of a ping of a server's flood."""
    if isinstance(value, str):
        return value.endswith("-" + "D" * 1000)
    return isinstance(value, int) and FLOOD_IDS <= value < FLOOD_IDS + 10**12


def check_client_run(
    adapter: str,
    script: list[Any],
    calls: list[tuple[str, float]],
    server: HostileServer,
    report: Report,
    write_timeout: float,
    bound: int,
) -> None:
    assert not report.hung, f"the {adapter} client was still running after {HANG} s"
    assert report.crash is None, f"the client raised {report.crash!r}"
    assert not server.errors, server.errors
    assert not server.bad, f"the client wrote what is not JSON-RPC: {server.bad[:3]}"
    assert len(report.outcomes) == len(calls)
    reached = server.segments
    marks, broken = statuses(script, reached, bound)
    if broken is not None and bound == UNREADABLE:  # only a flood makes 256 in a row
        assert script[broken[0]][2][0] == "flood", broken
    # The calls.
    for k, (value, elapsed) in enumerate(report.outcomes):
        where = f"call {k} ({calls[k][0]}), script {script!r:.300}"
        assert isinstance(value, (dict, McpError)), f"{where}: {value!r}"
        if k >= len(reached):  # after a fatal ending
            assert type(value) is ConnectionLost, f"{where}: {value!r}"
            continue
        ending = script[k][2]
        kind = ending[0]
        if broken is not None and broken[0] == k:
            assert type(value) is ConnectionLost, f"{where}: {value!r}"
            last = reached[k][broken[1]].data[:60].decode("utf-8", "replace")
            prefix = f"the server sent {bound} unreadable messages in a row (the last: {last!r}"
            assert value.message.startswith(prefix), (where, value.message)
            assert value.message.endswith("; the connection is closed as broken")
        elif kind == "answer":
            assert value == result_for(METHODS[script[k][0]], k), f"{where}: {value!r}"
        elif kind == "error":
            assert type(value) is McpError, f"{where}: {value!r}"
            assert (value.code, value.message) == (ending[1], ending[2]), where
        elif kind == "oversized":
            assert type(value) is McpError, f"{where}: {value!r}"
            assert value.code == -32600, where
            size = CLIENT_LIMIT + ending[1]
            assert value.message == (
                f"Invalid response: {size} bytes, larger than max_message_size"
                f" ({CLIENT_LIMIT} bytes); dropped"
            ), (where, value.message)
        elif kind == "silent":
            assert type(value) is RequestTimeout, f"{where}: {value!r}"
        elif kind == "deaf":
            assert type(value) is ConnectionLost, f"{where}: {value!r}"
            assert value.message.startswith("the server stopped reading: "), value.message
            assert value.message.endswith(
                f" bytes unwritten for {write_timeout:g} s (write_timeout);"
                " the connection is closed as broken"
            ), value.message
            assert elapsed < write_timeout + SLACK, (where, elapsed)
            assert server.flood_end is not None  # the client let go: the flood ended
        else:  # eof, close
            assert type(value) is ConnectionLost, f"{where}: {value!r}"
            assert "stopped reading" not in value.message, value.message
    # The pings, and the unreadable lines: answered once each, to the right id.
    owed: dict[Any, list[int]] = {}  # id -> [must, may]
    null_owed: dict[int, list[int]] = {-32700: [0, 0], -32600: [0, 0]}
    first_must: set[Any] = set()
    seen: set[Any] = set()
    logs_must, logs_all, logs_never = [], [], set()
    for lines, segment_marks in zip(reached, marks, strict=True):
        for line, mark in zip(lines, segment_marks, strict=True):
            if line.seq is not None:
                logs_all.append(line.seq)
                if mark == "must":
                    logs_must.append(line.seq)
                elif mark == "never":
                    logs_never.add(line.seq)
            if line.reply is None:
                continue
            how, what = line.reply
            if how == "id" and what not in seen:
                seen.add(what)
                if mark == "must":
                    first_must.add(what)
            table = owed.setdefault(what, [0, 0]) if how == "id" else null_owed[what]
            if mark == "must":
                table[0] += 1
            elif mark == "may":
                table[1] += 1
    answered: Counter[Any] = Counter()
    null_answered: Counter[int] = Counter()
    results: set[Any] = set()
    for response in server.responses:
        if response["id"] is None:
            null_answered[response["error"]["code"]] += 1
            continue
        what = key(response["id"])
        if what not in owed and flood_ping(response["id"]):
            continue  # the answer to a ping of a flood, read before the server stopped
        assert what in owed, f"an answer to an id the server never sent: {response!r:.200}"
        answered[what] += 1
        if "result" in response:
            assert response["result"] == {}, response
            results.add(what)
        else:
            assert response["error"]["code"] == -32600, response
            assert "was already used" in response["error"]["message"], response
    for what, (must, may) in owed.items():
        assert must <= answered[what] <= must + may, (f"{what!r:.80}", must, may, answered[what])
    assert first_must <= results, "a ping's first use was not answered with a result"
    for code, (must, may) in null_owed.items():
        assert must <= null_answered[code] <= must + may, (code, must, may, null_answered)
    assert set(null_answered) <= set(null_owed), null_answered
    # The log messages: in order, once each; every one the client must have read.
    assert report.logs == sorted(set(report.logs)), report.logs[:20]
    assert set(logs_must) <= set(report.logs), "a log message was not delivered"
    assert set(report.logs) <= set(logs_all) - logs_never
    assert report.tasks_left in (None, 0), f"{report.tasks_left} tasks left after the client"


LONG = "L" * 100_000 + "x"


@pytest.mark.parametrize("adapter", ADAPTERS)
@PROPERTY
@given(
    script=segments(),
    buffer=st.sampled_from([4096, 65536, 1 << 20]),
    bound=st.sampled_from([UNREADABLE, UNREADABLE, 16]),
)
# Every ending, whatever is generated: after acts of each kind, or alone.
@example(
    script=[
        (
            "list_tools",
            [
                ("pings", [1, LONG, 1, "a", None, LONG, 2**63 - 1]),
                ("notes", ["progress", "log"] * 20),
                ("garbage", [b"y", b"[1]", b"", b"\xff"]),
                ("stray", [("never", 1), ("late", 0), ("big", 2), ("late-error", 0)]),
            ],
            ("answer",),
        ),
        ("ping", [], ("silent",)),
        ("call_tool", [("pings", [LONG]), ("stray", [("late", 1)])], ("error", -32601, "nope")),
        ("ping", [("garbage", [b"{"] * 20)], ("oversized", 1, False)),
        ("list_tools", [("pings", ["a"])], ("eof",)),
    ],
    buffer=4096,
    bound=UNREADABLE,
)
@example(script=[("call_tool", [], ("oversized", 100_000, True))], buffer=1 << 20, bound=16)
@example(
    script=[("ping", [("pings", [LONG] * 3)], ("close", b'{"jsonrpc":"2.0","id":'))],
    buffer=65536,
    bound=UNREADABLE,
)
@example(
    script=[("list_tools", [("pings", [LONG, 1])], ("deaf", "long"))], buffer=4096, bound=UNREADABLE
)
@example(
    script=[("ping", [("garbage", [b"y"] * 20)], ("flood", UNREADABLE, b"null"))],
    buffer=65536,
    bound=UNREADABLE,
)
@example(  # the bound breaks the session in the middle of a segment
    script=[("ping", [("garbage", [b"y"] * 20), ("pings", [7]), ("notes", [])], ("answer",))],
    buffer=4096,
    bound=16,
)
def test_hostile_servers(
    adapter: str, sockdir: Path, script: list[Any], buffer: int, bound: int
) -> None:
    # (the threads by identity: one an earlier test left may end meanwhile)
    threads, fds = set(threading.enumerate()), fd_count()
    calls = [(m, SILENT_TIMEOUT if e[0] == "silent" else CALL_TIMEOUT) for m, _, e in script]
    if script[-1][2][0] in FATAL:
        calls.append((script[-1][0], CALL_TIMEOUT))  # one more, after the end
    deaf = any(ending[0] == "deaf" for _, _, ending in script)
    write_timeout = 1.0 if deaf else 3.0  # short only where it must fire (see the docstring)
    options = {
        "versions": [VERSION],
        "timeout": CALL_TIMEOUT,
        "max_message_size": CLIENT_LIMIT,
        "max_write_buffer": buffer,
        "write_timeout": write_timeout,
        "max_unreadable": bound,
    }
    path = socket_path(sockdir)
    server = HostileServer(path, script, bound)
    try:
        report = run_client(adapter, path, calls, options)
    finally:
        server.thread.join(HANG if not server.thread.is_alive() else 15.0)
    assert not server.thread.is_alive(), "the hostile server did not end"
    assert server.reader is None or not server.reader.is_alive()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    for _, acts, ending in script:
        event(f"ending: {ending[0]}")
        for act in acts:
            event(f"act: {act[0]}")
    for value, _ in report.outcomes:
        event(f"outcome: {type(value).__name__}")
    check_client_run(adapter, script, calls, server, report, write_timeout, bound)
    assert set(threading.enumerate()) <= threads, set(threading.enumerate()) - threads
    assert fd_count() <= fds, "a file descriptor was left open"


# ---------------------------------------------------------------------- hostile clients


def build_server() -> Server:
    server = Server("hostile-peers", "1.0", list_changed=False)

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    def echo(ctx: Any, arguments: Any) -> str:
        "Echo the text back."
        return str(arguments["text"])

    return server


TOOLS = {"tools": [{"name": "echo", "inputSchema": build_server().tools["echo"].input_schema}]}
TOOLS["tools"][0]["description"] = "Echo the text back."
SERVE_OPTIONS: dict[str, Any] = {
    "versions": [VERSION],
    "max_message_size": SERVER_LIMIT,
    "max_write_buffer": SERVER_WRITE_BUFFER,
    "write_timeout": SERVER_WRITE_TIMEOUT,
}


class _Errors(logging.Handler):
    """Collects what the adapters log as errors."""

    def __init__(self, into: list[Any]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


class Served:
    """One adapter's ``serve_unix`` on ``path``, in a thread of its own, and what went wrong
    in it: an exception out of the serving, an error logged, an exception in a thread."""

    def __init__(self, adapter: str, path: str) -> None:
        self.adapter = adapter
        self.path = path
        self.errors: list[Any] = []
        self.ready = threading.Event()
        self._stop: Callable[[], None] | None = None
        self.thread = threading.Thread(target=self._main, name=f"serve-{adapter}", daemon=True)
        self.thread.start()
        assert self.ready.wait(HANG), f"the {adapter} server did not start"

    def _main(self) -> None:
        try:
            getattr(self, f"_serve_{self.adapter}")(build_server())
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            self.ready.set()

    def _serve_blocking(self, server: Server) -> None:
        listener = blocking.Listener.unix(server, self.path, **SERVE_OPTIONS)
        self._stop = listener.stop
        self.ready.set()
        listener.serve_forever()

    def _serve_asyncio(self, server: Server) -> None:
        async def main() -> None:
            loop = asyncio.get_running_loop()
            loop.set_exception_handler(lambda _, context: self.errors.append(context))
            stop = asyncio.Event()

            def stopping() -> None:
                loop.call_soon_threadsafe(stop.set)

            self._stop = stopping
            async with await mcp_asyncio.serve_unix(server, self.path, **SERVE_OPTIONS):
                self.ready.set()
                await stop.wait()

        asyncio.run(main())

    def _serve_trio(self, server: Server) -> None:
        async def main() -> None:
            token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                serve = functools.partial(mcp_trio.serve_unix, server, self.path, **SERVE_OPTIONS)
                await nursery.start(serve)
                cancel = nursery.cancel_scope.cancel
                self._stop = lambda: trio.from_thread.run_sync(cancel, trio_token=token)
                self.ready.set()

        trio.run(main)

    def stop(self) -> None:
        if self._stop is not None and self.thread.is_alive():
            self._stop()
        self.thread.join(HANG)
        assert not self.thread.is_alive(), f"the {self.adapter} server did not stop"


@contextlib.contextmanager
def thread_errors(into: list[Any]) -> Iterator[None]:
    """Collect the exceptions that end threads (the blocking server's connections)."""
    previous = threading.excepthook

    def hook(args: Any) -> None:
        into.append(args.exc_value)
        previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


@pytest.fixture(scope="module", params=ADAPTERS)
def served(request: pytest.FixtureRequest, sockdir: Path) -> Iterator[Served]:
    logger = logging.getLogger("mcp_sansio")
    errors: list[Any] = []
    handler = _Errors(errors)
    logger.addHandler(handler)
    try:
        serving = Served(request.param, socket_path(sockdir))
        serving.errors = errors + serving.errors
        handler.into = serving.errors
        # A first client: what the server makes once (the blocking listener's selector is
        # made in serve_forever, after it is ready) is then there before any baseline.
        well_behaved(serving.path)
        yield serving
        serving.stop()
        assert not serving.errors, serving.errors
    finally:
        logger.removeHandler(handler)


INITIALIZE = {
    "protocolVersion": VERSION,
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "1"},
}
#: Requests by the method of the act: (method, params) and what the first answer to a fresh
#: id is once the session is open ("result" value, or an error code).
REQUESTS: dict[str, tuple[str, Any]] = {
    "ping": ("ping", None),
    "list": ("tools/list", None),
    "call": ("tools/call", {"name": "echo", "arguments": {"text": "hello"}}),
    "nosuch": ("x/nosuch", None),
}
RESULTS = {
    "ping": {},
    "list": TOOLS,
    "call": {"content": [{"type": "text", "text": "hello"}]},
}
CLIENT_ACT = st.one_of(
    st.tuples(st.just("request"), st.sampled_from(sorted(REQUESTS)), PING_IDS),
    st.tuples(st.just("request"), st.sampled_from(sorted(REQUESTS)), PING_IDS),
    st.tuples(st.just("garbage"), st.lists(GARBAGE, min_size=1, max_size=20)),
    st.tuples(
        st.just("oversized"),
        st.integers(1, 100_000),
        st.sampled_from(["first", "last", "none"]),
        st.integers(0, 6) | st.sampled_from(["big", "a"]),
    ),
    st.tuples(
        st.just("stray"),
        st.sampled_from(["never", "cancel-unknown"]),
        st.integers(0, 10**6),
    ),
)
CLIENT_ENDING = st.one_of(
    st.just(("eof",)),
    st.just(("eof",)),
    st.tuples(st.just("midline"), st.sampled_from([b'{"jsonrpc":"2.0","id":', b"\xff"])),
    st.tuples(st.just("close"), st.sampled_from([b"", b'{"jsonrpc":"2.0","id":'])),
    st.tuples(st.just("deaf"), st.sampled_from(["int", "long"])),
    st.tuples(st.just("flood"), st.integers(UNREADABLE, UNREADABLE + 100), GARBAGE),
)


def render_client(
    opening: str, acts: list[Any], ending: tuple[Any, ...]
) -> tuple[list[Line], list[Line]]:
    """The lines of a hostile client's script, each with what the server owes it, and the
    lines of its ending."""
    lines: list[Line] = []
    used: set[Any] = set()
    state = "idle"
    if opening != "none":
        request = {"jsonrpc": "2.0", "id": "open", "method": "initialize", "params": INITIALIZE}
        lines.append(Line(encode(request), reply=("id", key("open")), first_use=True))
        used.add(key("open"))
        state = "initialized"
        if opening == "full":
            lines.append(Line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
            state = "open"
    for act in acts:
        kind = act[0]
        if kind == "request":
            _, name, value = act
            method, params = REQUESTS[name]
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": value, "method": method}
            if params is not None:
                message["params"] = params
            data = encode(message)
            if not readable(value):
                lines.append(Line(data, reply=("null", -32600), unreadable=True))
                continue
            fresh = key(value) not in used
            used.add(key(value))
            if name == "nosuch":
                expect: Any = -32601
            elif name == "ping" or state != "idle":
                # Once initialize is answered, any request is served (the initialize window).
                expect = {"result": RESULTS[name]}
            else:
                expect = -32600  # not allowed before initialize
            lines.append(Line(data, reply=("id", key(value)), first_use=fresh, expect=expect))
        elif kind == "garbage":
            lines += [garbage_line(data) for data in act[1]]
        elif kind == "oversized":
            _, extra, where, value = act
            size, idj = SERVER_LIMIT + extra, json.dumps(value)
            if where == "first":
                data = padded(
                    '{"jsonrpc":"2.0","id":' + idj + ',"method":"ping","params":{"p":"', '"}}', size
                )
            elif where == "last":
                data = padded(
                    '{"jsonrpc":"2.0","method":"ping","params":{"p":"', '"},"id":' + idj + "}", size
                )
            else:
                data = padded("", "", size)
                lines.append(Line(data, reply=("null", -32600), unreadable=True))
                continue
            fresh = key(value) not in used
            used.add(key(value))
            message_text = (
                f"Invalid request: {size} bytes, larger than max_message_size"
                f" ({SERVER_LIMIT} bytes); dropped"
            )
            lines.append(
                Line(data, reply=("id", key(value)), first_use=fresh, expect=(-32600, message_text))
            )
        else:
            _, how, n = act
            if how == "never":
                lines.append(Line(encode({"jsonrpc": "2.0", "id": f"never-{n}", "result": {}})))
            else:
                params = {"requestId": f"unknown-{n}"}
                note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
                lines.append(Line(encode(note)))
    end: list[Line] = []
    if ending[0] == "flood":
        # A valid message first, so that the flood alone reaches the bound.
        end.append(Line(encode({"jsonrpc": "2.0", "id": "before-the-flood", "result": {}})))
        end += [garbage_line(b"y" if ending[2] in BLANK else ending[2])] * ending[1]
    return lines, end


class HostileClient:
    """A raw socket to a server: it writes a script while a thread reads what comes back."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.settimeout(0.2)
        self.responses: list[dict[str, Any]] = []
        self.bad: list[bytes] = []
        self.deaf = False
        self.eof = threading.Event()
        self.deadline = time.monotonic() + HANG
        self.reader = threading.Thread(target=self._read, name="hostile-client", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        buf = b""
        try:
            while not self.deaf and time.monotonic() < self.deadline:
                try:
                    data = self.sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not data:
                    self.eof.set()
                    if buf:  # the server ended in the middle of a line
                        self.bad.append(buf)
                    break
                buf += data
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    try:
                        message = json.loads(raw)
                    except ValueError:
                        self.bad.append(raw)
                        continue
                    if isinstance(message, dict) and ("result" in message or "error" in message):
                        self.responses.append(message)
                    else:
                        self.bad.append(raw)
        except BaseException as exc:  # pragma: no cover - a defect of this test
            self.bad.append(repr(exc).encode())

    def send(self, data: bytes) -> None:
        send_all(self.sock, data, self.deadline)

    def flood_until_dropped(self, ids: str) -> float:
        """Stop reading; write pings until the server lets go; how long that took."""
        self.deaf = True
        start, n = time.monotonic(), FLOOD_IDS
        pad = b"D" * 1000
        while True:
            if ids == "int":
                chunk = b"".join(
                    b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(n, n + 1000)
                )
            else:
                chunk = b"".join(
                    b'{"jsonrpc":"2.0","id":"%d-%s","method":"ping"}\n' % (i, pad)
                    for i in range(n, n + 100)
                )
            n += 1000
            try:
                self.send(chunk)
            except Gone:
                return time.monotonic() - start

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.reader.join(HANG)
        self.sock.close()


def well_behaved(path: str) -> None:
    """A client connected after the hostile one gets correct answers."""
    with blocking.Client.connect_unix(path, versions=[VERSION], timeout=SLACK) as client:
        assert client.ping() == {}
        assert client.call_tool("echo", {"text": "well"}) == {
            "content": [{"type": "text", "text": "well"}]
        }


def fd_table() -> dict[str, str]:
    table = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            table[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return table


def settle(threads: int, fds: dict[str, str]) -> None:
    """Wait (a bounded time) until the server has let go of a connection."""
    end = time.monotonic() + SLACK
    while threading.active_count() > threads or len(fd_table()) > len(fds):
        if time.monotonic() > end:
            break
        time.sleep(0.02)
    assert threading.active_count() <= threads, threading.enumerate()
    now = fd_table()
    left = {fd: what for fd, what in now.items() if fds.get(fd) != what}
    assert len(now) <= len(fds), f"the server kept a descriptor of the connection: {left}"


def check_server_answers(
    lines: list[Line], end: list[Line], ending: tuple[Any, ...], client: HostileClient
) -> None:
    """Each line the server must have read is answered once: a fresh readable id to that id
    (with the expected answer), a reused one to that id or, while a request with that id is
    in flight, to null (an error to the id would pass for that request's answer); an
    unreadable line to null, up to the bound."""
    certain = ending[0] not in {"close", "deaf"}
    fresh: dict[Any, list[int]] = {}  # id -> [must, may]
    reused: Counter[Any] = Counter()  # id -> lines (must or may)
    null_owed: dict[int, list[int]] = {-32700: [0, 0], -32600: [0, 0]}
    expected: dict[Any, Any] = {}
    total = [0, 0]  # every line owed a reply of any kind: [must, may]
    run, broken = 0, False
    for line in lines + end:
        mark = "must" if certain else "may"
        if broken:
            mark = "never"
        elif line.unreadable:
            run += 1
            if run >= UNREADABLE:
                broken, mark = True, "never"  # the last one is not answered
        elif not line.blank:
            run = 0
        if line.reply is None or mark == "never":
            continue
        slot = 0 if mark == "must" else 1
        total[slot] += 1
        how, what = line.reply
        if how == "null":
            null_owed[what][slot] += 1
        elif line.first_use:
            fresh.setdefault(what, [0, 0])[slot] += 1
            if mark == "must" and line.expect is not None:
                expected[what] = line.expect
        else:
            reused[what] += 1
    if ending[0] == "flood":
        assert broken  # the flood alone reaches the bound
    answered: dict[Any, list[dict[str, Any]]] = {}
    nulls: Counter[int] = Counter()
    replies = 0
    for response in client.responses:
        if response.get("id") is None:
            nulls[response["error"]["code"]] += 1
            replies += 1
            continue
        what = key(response["id"])
        if what not in fresh and flood_ping(response["id"]):
            continue
        assert what in fresh, f"an answer to an id the client never sent: {response!r:.200}"
        answered.setdefault(what, []).append(response)
        replies += 1
    assert total[0] <= replies <= total[0] + total[1], (total, replies)
    for what, (must, may) in fresh.items():
        got = answered.get(what, [])
        assert must <= len(got) <= must + may + reused[what], (f"{what!r:.80}", must, may, got)
        if what == key("open") and got:
            assert got[0]["result"]["protocolVersion"] == VERSION, got
    for what, expect in expected.items():
        got = answered[what]
        if isinstance(expect, dict):
            assert any(r.get("result") == expect["result"] for r in got), (f"{what!r:.80}", got)
        elif isinstance(expect, tuple):
            assert any(
                (r.get("error") or {}).get("code") == expect[0]
                and r["error"]["message"] == expect[1]
                for r in got
            ), (f"{what!r:.80}", got)
        else:
            assert any((r.get("error") or {}).get("code") == expect for r in got), got
    in_flight = sum(reused.values())  # refused to null, if the first was still in flight
    for code, (must, may) in null_owed.items():
        extra = in_flight if code == -32600 else 0
        assert must <= nulls[code] <= must + may + extra, (code, must, may, nulls)
    assert set(nulls) <= set(null_owed), nulls
    assert not client.bad, f"the server wrote what is not JSON-RPC: {client.bad[:3]!r:.300}"


EVERY_ACT = [
    ("request", "ping", LONG),
    ("request", "list", 1),
    ("request", "call", 1),  # reused: refused, to its id or (while in flight) to null
    ("request", "call", "é"),
    ("request", "nosuch", 2**63 - 1),
    ("request", "ping", 1.5),
    ("garbage", [b"y", b'{"a":1}', b"", b"\xff\x00"]),
    ("oversized", 1, "first", 3),
    ("oversized", 100_000, "last", "big"),
    ("oversized", 7, "none", 0),
    ("stray", "never", 5),
    ("stray", "cancel-unknown", 6),
]


@PROPERTY
@given(
    opening=st.sampled_from(["none", "initialize", "full", "full"]),
    acts=st.lists(CLIENT_ACT, max_size=8),
    ending=CLIENT_ENDING,
)
# Every ending, whatever is generated: after acts of each kind, or alone.
@example(opening="full", acts=EVERY_ACT, ending=("eof",))
@example(opening="none", acts=EVERY_ACT, ending=("midline", b'{"jsonrpc":"2.0","id":'))
@example(opening="initialize", acts=EVERY_ACT[:3], ending=("close", b'{"jsonrpc":"2.0","id":'))
@example(opening="full", acts=[("request", "call", LONG)], ending=("deaf", "long"))
@example(opening="full", acts=[("garbage", [b"y"] * 20)], ending=("flood", UNREADABLE, b"1"))
def test_hostile_clients(
    served: Served, opening: str, acts: list[Any], ending: tuple[Any, ...]
) -> None:
    threads, fds = threading.active_count(), fd_table()
    lines, end = render_client(opening, acts, ending)
    kind = ending[0]
    event(f"ending: {kind}")
    for act in acts:
        event(f"act: {act[0]}")
    with thread_errors(served.errors):
        client = HostileClient(served.path)
        try:
            client.send(b"".join(line.data + b"\n" for line in lines + end))
            if kind == "eof":
                client.sock.shutdown(socket.SHUT_WR)
            elif kind == "midline":
                client.send(ending[1])
                client.sock.shutdown(socket.SHUT_WR)
            elif kind == "close":
                client.send(ending[1])
                client.deaf = True
            elif kind == "deaf":
                elapsed = client.flood_until_dropped(ending[1])
                assert elapsed < SERVER_WRITE_TIMEOUT + SLACK, elapsed
            if kind in {"eof", "midline", "flood"}:
                # Reading on: the server answers, then closes (a flood: without our EOF).
                assert client.eof.wait(SLACK), f"the {served.adapter} server kept the connection"
        finally:
            client.close()
        if kind not in {"close"}:
            check_server_answers(lines, end, ending, client)
        well_behaved(served.path)
        settle(threads, fds)
    assert not served.errors, served.errors
    assert served.thread.is_alive(), f"the {served.adapter} server stopped serving"


# ---------------------------------------------------------------------- pinned cases


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_leaving_a_client_after_the_server_stopped_reading_raises_nothing(
    adapter: str, sockdir: Path
) -> None:
    """Found by ``test_hostile_servers``: the asyncio client's ``aclose()`` (so leaving
    ``async with``) raised ``CancelledError`` when it came right after the connection broke
    on ``write_timeout``; it awaited the read task that ``_break`` had just cancelled (3 runs
    of 3)."""
    path = socket_path(sockdir)
    server = HostileServer(path, [("ping", [], ("deaf", "int"))])
    options = {"versions": [VERSION], "max_write_buffer": 4096, "write_timeout": 1.0}
    report = run_client(adapter, path, [("ping", CALL_TIMEOUT), ("ping", CALL_TIMEOUT)], options)
    server.thread.join(HANG)
    assert not report.hung
    assert report.crash is None, repr(report.crash)
    (first, _), (second, _) = report.outcomes
    assert type(first) is ConnectionLost
    assert type(second) is ConnectionLost
    assert first.message.startswith("the server stopped reading: "), first.message


def test_a_server_closes_the_connection_at_the_unreadable_bound(served: Served) -> None:
    """Found by ``test_hostile_clients``: after ``max_unreadable`` unreadable lines in a row,
    the asyncio and trio servers closed the connection at once; the blocking server's
    session closed, but the connection stayed open (read and dropped) until the client
    closed it (still open after 5 s and 10 s in every run)."""
    threads, fds = threading.active_count(), fd_table()
    client = HostileClient(served.path)
    try:
        request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}
        client.send(encode(request) + b"\n" + b"y\n" * (UNREADABLE + 44))
        assert client.eof.wait(SLACK), f"the {served.adapter} server kept the connection"
    finally:
        client.close()
    assert client.responses[0]["id"] == 0
    replies = [r["error"]["code"] for r in client.responses[1:]]
    assert replies == [-32700] * (UNREADABLE - 1)  # the last one is not answered
    well_behaved(served.path)
    settle(threads, fds)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_progress_for_unknown_tokens_is_readable(adapter: str, sockdir: Path) -> None:
    """A server sends 300 progress notifications for a token that names no request (as for
    a call the client gave up on), then answers the call: the call gets its answer. Fails:
    ``ConnectionLost('the server sent 256 unreadable messages in a row (the last:
    '': Invalid request: progressToken
    'gone' names no request in flight) ...')``, in all three adapters."""
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    note = Line(encode({**progress, "params": {"progressToken": "gone", "progress": 1}}))
    path = socket_path(sockdir)
    server = HostileServer(path, [("ping", [("raw", [note] * 300)], ("answer",))])
    report = run_client(adapter, path, [("ping", CALL_TIMEOUT)], {"versions": [VERSION]})
    server.thread.join(HANG)
    assert not report.hung
    assert report.crash is None
    assert report.outcomes[0][0] == {}, report.outcomes[0][0]


def test_progress_for_unknown_tokens_is_readable_by_a_server(served: Served) -> None:
    """The same on a server's side: a client sends 300 progress notifications for a token
    that names no request, then a ping; the ping is answered. Fails: the server closes the
    connection without answering it."""
    client = HostileClient(served.path)
    try:
        request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}
        progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
        note = encode({**progress, "params": {"progressToken": "gone", "progress": 1}})
        initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        client.send(encode(request) + b"\n" + initialized + (note + b"\n") * 300 + ping)
        client.sock.shutdown(socket.SHUT_WR)
        assert client.eof.wait(SLACK)
    finally:
        client.close()
    assert [r["id"] for r in client.responses] == [0, 1], client.responses
