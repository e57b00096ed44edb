"""HTTP benchmarks: ``tools/call`` → ``echo`` round trips per second over Streamable HTTP,
mcp-sansio and the official SDK side by side in one run.

(Not ``http.py``: every benchmark script puts ``benchmarks/`` first on ``sys.path``, where a
module of that name would shadow the standard library's ``http`` package for uvicorn,
starlette, httpx and the SDK, in this process and in ``_adapters_sdk_server.py``.)

Columns, each measured with 1 caller (sequential calls) and with N concurrent callers
(N tasks calling the same client; ``Settings.callers``):

- floor: a raw h11 keep-alive ``POST`` of the same JSON-RPC request to a trivial h11 server
  that answers with ``orjson`` (one connection per caller): the cost of HTTP alone;
- mcp-sansio: ``mcp_sansio.asyncio.Client.connect_http(url, versions=[v])`` to
  ``serve_http(build_server())`` (the example server and its ``echo`` tool), in both eras:
  ``2025-11-25`` (the ``initialize`` handshake, a session id on every request) and
  ``2026-07-28`` (stateless, no handshake);
- official SDK: ``mcp.Client(url, mode="legacy")`` (``initialize``; it negotiates 2025-11-25)
  and ``mode="2026-07-28"``, to an ``MCPServer`` with the same tool served as
  ``MCPServer.run("streamable-http")`` serves it (``_http_sdk_server.py``);
- cross pairs: our client → the SDK's server and the SDK's client → our server, per era.

Two topologies: **in process** (client and server on one asyncio loop, one thread) and
**server in a subprocess** (``python -m mcp_sansio serve --http 127.0.0.1:0``,
``python _http_sdk_server.py``, ``python http_bench.py --serve-floor``), so that client and
server do not share a GIL. Loopback only; each server is started once per topology and
shared by the columns that talk to it.

Rates are measured in interleaved rounds (every column, 1 caller then N, once per round,
for about ``round_s`` seconds each), and the median round is reported with the slowest
and fastest. With the server in a subprocess, the sequential rounds also sum the CPU time
of the client (this process) and of the server (``/proc/<pid>/stat``), per call: where the
time goes. Every setup and every round is bounded in time.

    python benchmarks/http_bench.py [--quick] [--json FILE]

Like ``adapters.py`` it first re-executes itself inside ``benchmarks/.sdk-venv`` (see
``_env``); ``MCP_SANSIO_BENCH_NO_SDK=1`` runs without the SDK (its columns read n/a).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _env

if __name__ == "__main__":
    # Before anything heavy is imported: this may replace the process.
    _env.ensure()

import h11
import orjson
from adapters import (
    ARGUMENTS,
    EXPECTED,
    AdapterReport,
    Call,
    NotAvailable,
    Rate,
    _deadline,
    _echo_result,
    _error,
    _log,
    _one_round,
    _our_text,
    _ratio,
    _sdk,
    _sdk_text,
    _x,
)

__all__ = ["FULL", "QUICK", "Settings", "measure"]

HERE: Final = Path(__file__).resolve().parent
SDK_SERVER: Final = HERE / "_http_sdk_server.py"
HOST: Final = "127.0.0.1"
PATH: Final = "/mcp"

OLD: Final = "2025-11-25"
"""The initialize era: our client pinned to it; the SDK's ``mode="legacy"``."""
NEW: Final = "2026-07-28"
"""The stateless era."""

OURS_CMD: Final = (sys.executable, "-m", "mcp_sansio", "serve", "--http", f"{HOST}:0")
SDK_CMD: Final = (sys.executable, str(SDK_SERVER))
FLOOR_CMD: Final = (sys.executable, str(Path(__file__).resolve()), "--serve-floor")


@dataclass(frozen=True)
class Settings:
    round_s: float
    """How long each column runs per round (1 caller, then as long with N), in seconds."""
    rounds: int
    callers: int
    """N: the concurrent callers of the second figure of each column."""
    step_timeout_s: float = 30.0
    """The bound on opening a column (its server, its client, the warm-up)."""
    round_timeout_s: float = 15.0
    """The bound on one round of one column."""


FULL: Final = Settings(round_s=0.3, rounds=7, callers=8)
QUICK: Final = Settings(round_s=0.05, rounds=3, callers=8, step_timeout_s=20.0, round_timeout_s=8.0)

Opener = Callable[[], contextlib.AbstractAsyncContextManager[Call]]
UrlOf = Callable[[], Awaitable[str]]
"""Starts a server (once) and returns its endpoint's URL."""

#: (key, title): the columns of the main table, in order.
MAIN: Final = (
    ("floor", "floor: raw h11 + orjson"),
    ("sansio_old", f"mcp-sansio {OLD}"),
    ("sdk_old", "SDK legacy"),
    ("sansio_new", f"mcp-sansio {NEW}"),
    ("sdk_new", f"SDK {NEW}"),
)
#: (key, title, the SDK pair it is compared with): the cross pairs.
CROSS: Final = (
    ("sansio_to_sdk_old", f"our client → SDK server, {OLD}", "sdk_old"),
    ("sansio_to_sdk_new", f"our client → SDK server, {NEW}", "sdk_new"),
    ("sdk_to_sansio_old", "SDK client (legacy) → our server", "sdk_old"),
    ("sdk_to_sansio_new", f"SDK client ({NEW}) → our server", "sdk_new"),
)
#: The server each column talks to.
SERVER_OF: Final = {
    "floor": "floor",
    "sansio_old": "sansio",
    "sdk_old": "sdk",
    "sansio_new": "sansio",
    "sdk_new": "sdk",
    "sansio_to_sdk_old": "sdk",
    "sansio_to_sdk_new": "sdk",
    "sdk_to_sansio_old": "sansio",
    "sdk_to_sansio_new": "sansio",
}
#: (key, client → server, era): the rows of the CPU table.
CPU_ROWS: Final = (
    ("floor", "h11 → h11 (floor)", "-"),
    ("sansio_old", "mcp-sansio → mcp-sansio", OLD),
    ("sdk_old", "SDK → SDK", f"{OLD} (legacy)"),
    ("sansio_to_sdk_old", "mcp-sansio → SDK", OLD),
    ("sdk_to_sansio_old", "SDK → mcp-sansio", f"{OLD} (legacy)"),
    ("sansio_new", "mcp-sansio → mcp-sansio", NEW),
    ("sdk_new", "SDK → SDK", NEW),
    ("sansio_to_sdk_new", "mcp-sansio → SDK", NEW),
    ("sdk_to_sansio_new", "SDK → mcp-sansio", NEW),
)
TOPOLOGIES: Final = (
    ("in_process", "in process (one asyncio loop)"),
    ("subprocess", "server in a subprocess"),
)


@dataclass
class Run:
    """What one run found besides the rates."""

    versions: dict[str, str | None] = field(default_factory=dict)
    """The negotiated protocol version of each client, by topology/column."""
    loop_errors: list[str] = field(default_factory=list)
    """Unhandled exceptions reported by this process's event loop."""
    server_errors: dict[str, list[str]] = field(default_factory=dict)
    """Tracebacks and error lines a server subprocess wrote on stderr."""
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """Server in a subprocess, 1 caller, summed over the rounds, by column: [calls, wall
    seconds, this process's CPU seconds, the server process's CPU seconds]."""


# --------------------------------------------------------------------------- the floor


def _floor_request(ids: itertools.count[int]) -> bytes:
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": next(ids),
            "method": "tools/call",
            "params": {"name": "echo", "arguments": ARGUMENTS},
        }
    )


async def _floor_serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One connection of the floor's server: h11, keep-alive, an ``echo`` answer per POST."""
    conn = h11.Connection(h11.SERVER)
    body: list[bytes] = []
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
            elif isinstance(event, h11.Request):
                body.clear()
            elif isinstance(event, h11.Data):
                body.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                out = _echo_result(orjson.loads(b"".join(body)))
                headers = [("content-type", "application/json"), ("content-length", str(len(out)))]
                writer.write(
                    conn.send(h11.Response(status_code=200, headers=headers))
                    + conn.send(h11.Data(data=out))
                    + conn.send(h11.EndOfMessage())
                )
                await writer.drain()
                conn.start_next_cycle()
            else:  # ConnectionClosed, or PAUSED on a client that broke the protocol
                return
    except (OSError, h11.ProtocolError):
        return
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def _floor_server() -> AsyncIterator[str]:
    listening = await asyncio.start_server(_floor_serve, HOST, 0)
    try:
        yield _url(listening.sockets[0].getsockname()[1])
    finally:
        listening.close()
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(listening.wait_closed(), 5)


class _FloorConn:
    __slots__ = ("h11", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)


@contextlib.asynccontextmanager
async def floor_client(url_of: UrlOf) -> AsyncIterator[Call]:
    """Raw h11 POSTs on keep-alive connections, one per caller at a time."""
    url = await url_of()
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    host_header = f"{HOST}:{port}"
    idle: list[_FloorConn] = []
    ids = itertools.count(1)
    loads = orjson.loads

    async def call() -> str:
        c = idle.pop() if idle else _FloorConn(*await asyncio.open_connection(HOST, port))
        conn, reader = c.h11, c.reader
        body = _floor_request(ids)
        headers = [
            ("host", host_header),
            ("content-type", "application/json"),
            ("accept", "application/json"),
            ("content-length", str(len(body))),
        ]
        try:
            c.writer.write(
                conn.send(h11.Request(method="POST", target=PATH, headers=headers))
                + conn.send(h11.Data(data=body))
                + conn.send(h11.EndOfMessage())
            )
            await c.writer.drain()
            chunks: list[bytes] = []
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                elif isinstance(event, h11.Response):
                    if event.status_code != 200:
                        raise RuntimeError(f"floor server answered {event.status_code}")
                elif isinstance(event, h11.Data):
                    chunks.append(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:
                    raise ConnectionError(f"floor server: {event!r}")
            conn.start_next_cycle()
        except BaseException:
            c.writer.close()
            raise
        idle.append(c)
        return _our_text(loads(b"".join(chunks))["result"])

    try:
        yield call
    finally:
        for c in idle:
            c.writer.close()


async def _serve_floor_forever() -> None:
    """``--serve-floor``: the floor's server on a free port (printed on stdout)."""
    listening = await asyncio.start_server(_floor_serve, HOST, 0)
    print(listening.sockets[0].getsockname()[1], flush=True)
    async with listening:
        await listening.serve_forever()


# --------------------------------------------------------------------------- clients


@contextlib.asynccontextmanager
async def sansio_client(url_of: UrlOf, version: str, run: Run, key: str) -> AsyncIterator[Call]:
    from mcp_sansio.asyncio import Client

    url = await url_of()
    async with Client.connect_http(url, versions=[version]) as client:
        run.versions[key] = client.protocol_version

        async def call() -> str:
            return _our_text(await client.call_tool("echo", ARGUMENTS))

        yield call


@contextlib.asynccontextmanager
async def sdk_client(url_of: UrlOf, mode: str, run: Run, key: str) -> AsyncIterator[Call]:
    _sdk()
    import mcp

    url = await url_of()
    async with mcp.Client(url, mode=mode) as client:
        run.versions[key] = client.protocol_version

        async def call() -> str:
            return _sdk_text(await client.call_tool("echo", dict(ARGUMENTS)))

        yield call


# --------------------------------------------------------------------------- servers


def _url(port: int) -> str:
    return f"http://{HOST}:{port}{PATH}"


@contextlib.asynccontextmanager
async def _sansio_server() -> AsyncIterator[str]:
    from mcp_sansio.asyncio import serve_http
    from mcp_sansio.example import build_server

    listener = await serve_http(build_server(), HOST, 0)
    async with listener:
        yield listener.url  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def _sdk_server() -> AsyncIterator[str]:
    _sdk()
    from _http_sdk_server import running

    async with running() as (url, _task):
        yield url


_ERROR_LINE: Final = re.compile(r"Traceback|Error|Exception|exception", re.ASCII)


@contextlib.asynccontextmanager
async def _server_process(
    name: str, command: tuple[str, ...], run: Run, timeout: float, pids: dict[str, int]
) -> AsyncIterator[str]:
    """Spawn a server (its pid goes to ``pids[name]``); its URL from its first line (ours:
    on stderr, the others: the port on stdout); its output kept (errors go to
    ``run.server_errors``)."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=_env.REPO,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    pids[name] = process.pid
    lines: list[str] = []
    first: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def drain(stream: asyncio.StreamReader, announces: bool) -> None:
        async for raw in stream:
            line = raw.decode(errors="replace").rstrip()
            lines.append(line)
            if announces and not first.done():
                first.set_result(line)
        if announces and not first.done():
            first.set_exception(RuntimeError(f"{name} exited: {' / '.join(lines[-5:])}"))

    ours = command == OURS_CMD
    drains = [
        asyncio.ensure_future(drain(process.stdout, not ours)),
        asyncio.ensure_future(drain(process.stderr, ours)),
    ]
    try:
        line = await asyncio.wait_for(asyncio.shield(first), timeout)
        if ours:
            found = re.search(r"http://\S+", line)
            if found is None:
                raise RuntimeError(f"{name}: no URL in {line!r}")
            yield found.group(0)
        else:
            yield _url(int(line))
    finally:
        await _terminate(process)
        await asyncio.wait(drains, timeout=2)
        for task in drains:
            task.cancel()
        if first.done() and not first.cancelled():
            first.exception()  # retrieved: no "never retrieved" warning
        if any(_ERROR_LINE.search(line) for line in lines):
            run.server_errors[f"{name} server"] = lines
            _log(f"the {name} server wrote errors on stderr:\n  " + "\n  ".join(lines[-40:]))


async def _terminate(process: asyncio.subprocess.Process, timeout: float = 5.0) -> None:
    """SIGTERM, then SIGKILL if it lingers (``adapters._stop`` first waits for the server to
    leave on its own when its stdin closes, which these do not read)."""
    for signal_it in (process.terminate, process.kill):
        with contextlib.suppress(ProcessLookupError):
            signal_it()
        try:
            await asyncio.wait_for(process.wait(), timeout)
            return
        except asyncio.TimeoutError:
            continue


class Servers:
    """The servers of one topology: each started on first use, then shared; stopped when
    the stack closes (after the clients, which are opened later)."""

    def __init__(
        self, stack: contextlib.AsyncExitStack, topology: str, run: Run, timeout: float
    ) -> None:
        self._stack = stack
        self._topology = topology
        self._run = run
        self._timeout = timeout
        self._urls: dict[str, str] = {}
        self._failed: dict[str, BaseException] = {}
        self.pids: dict[str, int] = {}
        """The server subprocesses, by name."""

    async def _start(self, name: str) -> str:
        if name in self._failed:  # tried once already: the other columns fail the same way
            raise self._failed[name]
        url = self._urls.get(name)
        if url is None:
            opener: contextlib.AbstractAsyncContextManager[str]
            if self._topology == "in_process":
                opener = {"floor": _floor_server, "sansio": _sansio_server, "sdk": _sdk_server}[
                    name
                ]()
            else:
                if name == "sdk":
                    _sdk()
                command = {"floor": FLOOR_CMD, "sansio": OURS_CMD, "sdk": SDK_CMD}[name]
                opener = _server_process(name, command, self._run, self._timeout, self.pids)
            try:
                url = self._urls[name] = await self._stack.enter_async_context(opener)
            except Exception as exc:
                self._failed[name] = exc
                raise
        return url

    def url_of(self, name: str) -> UrlOf:
        return functools.partial(self._start, name)


def _columns(servers: Servers, run: Run, topology: str) -> dict[str, Opener]:
    floor, ours, sdk = servers.url_of("floor"), servers.url_of("sansio"), servers.url_of("sdk")

    def ours_to(url_of: UrlOf, version: str, key: str) -> Opener:
        return functools.partial(sansio_client, url_of, version, run, f"{topology}/{key}")

    def sdk_to(url_of: UrlOf, mode: str, key: str) -> Opener:
        return functools.partial(sdk_client, url_of, mode, run, f"{topology}/{key}")

    return {
        "floor": functools.partial(floor_client, floor),
        "sansio_old": ours_to(ours, OLD, "sansio_old"),
        "sdk_old": sdk_to(sdk, "legacy", "sdk_old"),
        "sansio_new": ours_to(ours, NEW, "sansio_new"),
        "sdk_new": sdk_to(sdk, NEW, "sdk_new"),
        "sansio_to_sdk_old": ours_to(sdk, OLD, "sansio_to_sdk_old"),
        "sansio_to_sdk_new": ours_to(sdk, NEW, "sansio_to_sdk_new"),
        "sdk_to_sansio_old": sdk_to(ours, "legacy", "sdk_to_sansio_old"),
        "sdk_to_sansio_new": sdk_to(ours, NEW, "sdk_to_sansio_new"),
    }


# --------------------------------------------------------------------------- rates


def _cpu_now(pid: int | None) -> tuple[float, float] | None:
    """This process's CPU seconds and those of the process ``pid`` (None: not on Linux)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return time.process_time(), ticks / os.sysconf("SC_CLK_TCK")


def _add_cpu(
    run: Run,
    key: str,
    calls: float,
    wall: float,
    before: tuple[float, float] | None,
    after: tuple[float, float] | None,
) -> None:
    if before is None or after is None:
        return
    total = run.cpu.setdefault(key, [0.0] * 4)
    for i, add in enumerate((calls, wall, after[0] - before[0], after[1] - before[1])):
        total[i] += add


async def _callers_round(call: Call, seconds: float, callers: int) -> float:
    """``callers`` tasks calling in a loop for ``seconds``; calls per second, all together."""
    gc.collect()
    clock = time.perf_counter
    done = 0
    started = clock()
    deadline = started + seconds

    async def caller() -> None:
        nonlocal done
        while clock() < deadline:
            await call()
            done += 1

    tasks = [asyncio.ensure_future(caller()) for _ in range(callers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return done / (clock() - started)


async def _check(call: Call, key: str, callers: int) -> None:
    """Warm up (sequential calls, then one burst of ``callers``) and check the answers."""
    for _ in range(20):
        text = await call()
        if text != EXPECTED:
            raise AssertionError(f"{key}: unexpected echo {text!r}")
    for text in await asyncio.gather(*(call() for _ in range(callers))):
        if text != EXPECTED:
            raise AssertionError(f"{key}: unexpected echo {text!r}")


async def _rounds(
    calls: dict[str, Call],
    out: dict[str, dict[int, Rate]],
    servers: Servers,
    settings: Settings,
    report: AdapterReport,
    run: Run,
    topology: str,
) -> None:
    """``settings.rounds`` rounds: each column once per round, 1 caller then N."""
    clock = time.perf_counter
    for _ in range(settings.rounds):
        for key, call in list(calls.items()):
            for n in (1, settings.callers):
                rate = out[key][n]
                if rate.error:
                    continue
                try:
                    with _deadline(settings.round_timeout_s):
                        if n == 1:
                            pid = servers.pids.get(SERVER_OF[key])
                            before, started = _cpu_now(pid), clock()
                            value = await _one_round(call, settings.round_s)
                            wall, after = clock() - started, _cpu_now(pid)
                            _add_cpu(run, key, value * wall, wall, before, after)
                        else:
                            value = await _callers_round(call, settings.round_s, n)
                except Exception as exc:
                    rate.error = _error(report, f"http {topology} {key} x{n}", exc)
                    continue
                rate.rates.append(value)
            if all(rate.error for rate in out[key].values()):
                del calls[key]


async def measure_topology(
    topology: str, settings: Settings, report: AdapterReport, run: Run
) -> dict[str, dict[int, Rate]]:
    """Start the servers, open every column, check it, then time them in interleaved rounds."""
    out = {key: {n: Rate() for n in (1, settings.callers)} for key, *_ in (*MAIN, *CROSS)}
    calls: dict[str, Call] = {}
    clock = time.perf_counter
    phases = [clock()]
    async with contextlib.AsyncExitStack() as server_stack:
        servers = Servers(server_stack, topology, run, settings.step_timeout_s)
        async with contextlib.AsyncExitStack() as stack:
            for key, opener in _columns(servers, run, topology).items():
                try:
                    with _deadline(settings.step_timeout_s):
                        call = await stack.enter_async_context(opener())
                        await _check(call, key, settings.callers)
                except NotAvailable as exc:
                    for rate in out[key].values():
                        rate.na = str(exc)
                    continue
                except Exception as exc:
                    message = _error(report, f"http {topology} {key}", exc)
                    for rate in out[key].values():
                        rate.error = message
                    continue
                calls[key] = call
            # What is alive now (libraries, servers, clients) is never garbage: out of the
            # collector's sight, the rounds' gc.collect() costs microseconds, not 0.1 s.
            gc.collect()
            gc.freeze()
            phases.append(clock())
            try:
                await _rounds(calls, out, servers, settings, report, run, topology)
            finally:
                gc.unfreeze()
            phases.append(clock())
        phases.append(clock())
    phases.append(clock())
    opened, measured, clients, servers_ = (b - a for a, b in itertools.pairwise(phases))
    _log(
        f"http {topology}: opened in {opened:.1f} s, measured in {measured:.1f} s, "
        f"clients closed in {clients:.1f} s, servers in {servers_:.1f} s"
    )
    text = ", ".join(
        f"{key} " + " / ".join(_cell(rate, spread=False) for rate in by_callers.values())
        for key, by_callers in out.items()
    )
    _log(f"http {topology} (1 / {settings.callers} callers): {text}")
    return out


# --------------------------------------------------------------------------- report


def _cell(rate: Rate, *, spread: bool = True) -> str:
    median = rate.median
    if median is None:
        return rate.na or "error (see stderr)"
    if not spread:
        return f"{median:,.0f}/s"
    return f"{median:,.0f} ({min(rate.rates):,.0f}-{max(rate.rates):,.0f})"


def _main_table(results: dict[str, dict[str, dict[int, Rate]]], settings: Settings) -> list[str]:
    lines = [
        "### HTTP: `tools/call` → `echo` round trips per second over Streamable HTTP "
        f"(median of {settings.rounds} interleaved rounds of ~{settings.round_s:g} s each, "
        "slowest-fastest round in parentheses)\n",
        "| server | callers | "
        + " | ".join(title for _, title in MAIN[:3])
        + f" | ours ÷ SDK, {OLD} | "
        + " | ".join(title for _, title in MAIN[3:])
        + f" | ours ÷ SDK, {NEW} |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for topology, title in TOPOLOGIES:
        rates = results[topology]
        for n in (1, settings.callers):
            cells = {key: rates[key][n] for key, _ in MAIN}
            lines.append(
                f"| {title} | {n} | {_cell(cells['floor'])} | {_cell(cells['sansio_old'])} "
                f"| {_cell(cells['sdk_old'])} "
                f"| {_x(_ratio(cells['sansio_old'].median, cells['sdk_old'].median))} "
                f"| {_cell(cells['sansio_new'])} | {_cell(cells['sdk_new'])} "
                f"| {_x(_ratio(cells['sansio_new'].median, cells['sdk_new'].median))} |"
            )
    lines.append("")
    return lines


def _cross_table(results: dict[str, dict[str, dict[int, Rate]]], settings: Settings) -> list[str]:
    lines = [
        "### HTTP cross pairs: one side swapped for the other library's (round trips per "
        "second as above; x the SDK client ↔ SDK server rate of the same era in brackets)\n",
        "| server | callers | " + " | ".join(title for _, title, _ in CROSS) + " |",
        "|---|--:|" + "--:|" * len(CROSS),
    ]
    for topology, title in TOPOLOGIES:
        rates = results[topology]
        for n in (1, settings.callers):
            row = []
            for key, _, pair in CROSS:
                ratio = _ratio(rates[key][n].median, rates[pair][n].median)
                extra = f" [{_x(ratio)}]" if ratio is not None else ""
                row.append(_cell(rates[key][n]) + extra)
            lines.append(f"| {title} | {n} | " + " | ".join(row) + " |")
    lines.append("")
    return lines


def _cpu_table(run: Run, settings: Settings) -> list[str]:
    if not run.cpu:
        return []
    lines = [
        "### Where the time goes: CPU per call, server in a subprocess, 1 caller (ms per "
        "call over the same rounds; client = this process's `time.process_time()`, server = "
        "its `/proc/<pid>/stat` utime + stime, in 10 ms ticks)\n",
        "| client → server | era | wall | client CPU | server CPU |",
        "|---|---|--:|--:|--:|",
    ]
    for key, pair, era in CPU_ROWS:
        total = run.cpu.get(key)
        if total is None or not total[0]:
            lines.append(f"| {pair} | {era} | n/a | n/a | n/a |")
            continue
        calls, wall, client, server = total
        lines.append(
            f"| {pair} | {era} | {wall / calls * 1e3:.2f} | {client / calls * 1e3:.2f} "
            f"| {server / calls * 1e3:.2f} |"
        )
    lines.append("")
    return lines


def _notes(run: Run, settings: Settings) -> list[str]:
    wrong = {
        k: v for k, v in sorted(run.versions.items()) if v != (OLD if k.endswith("_old") else NEW)
    }
    if not run.versions:
        versions = "n/a"
    elif not wrong:
        versions = f"{OLD} by every client of the first era, {NEW} by every other"
    else:
        versions = "**not as intended**: " + ", ".join(f"{k} {v}" for k, v in wrong.items())
    lines = [
        f"Callers: 1 = sequential calls; {settings.callers} = {settings.callers} tasks calling "
        "one client at once (our client: a connection per request in flight from its "
        "keep-alive pool; the SDK's: its httpx pool; the floor: a connection per caller). "
        "mcp-sansio: `Client.connect_http(url, versions=[v])` ↔ `serve_http(build_server())` "
        "(in process) or `python -m mcp_sansio serve --http 127.0.0.1:0` (subprocess), "
        "defaults (JSON answers when the result is the first thing ready). SDK: "
        f'`mcp.Client(url, mode="legacy" or "{NEW}")` ↔ `MCPServer.streamable_http_app()` '
        'under uvicorn as `MCPServer.run("streamable-http")` runs it, defaults (SSE answers '
        "in the legacy era), uvicorn at log level warning (no access log). Floor: h11 "
        "keep-alive POSTs of the same JSON-RPC request, answered by a bare h11 + orjson "
        "server (`http_bench.py --serve-floor` in the subprocess rows). In the cross pairs, "
        '"our client → SDK server" vs the SDK pair shows what the client costs, '
        '"SDK client → our server" what the server costs. '
        f"Negotiated: {versions}. GC enabled, as in real use.",
        "",
    ]
    if run.loop_errors:
        lines += [
            f"**Unhandled exceptions in the benchmark's event loop: {len(run.loop_errors)}** "
            f"(first: `{run.loop_errors[0]}`; tracebacks on stderr).",
            "",
        ]
    for name, server_lines in run.server_errors.items():
        first = next((line for line in server_lines if _ERROR_LINE.search(line)), "")
        lines += [f"**The {name} subprocess wrote errors on stderr** (first: `{first}`).", ""]
    return lines


async def _measure(settings: Settings, report: AdapterReport) -> None:
    run = Run()
    loop = asyncio.get_running_loop()

    def on_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        run.loop_errors.append(
            context.get("message", "") + (f": {type(exc).__name__}: {exc}" if exc else "")
        )
        loop.default_exception_handler(context)

    loop.set_exception_handler(on_loop_error)
    results = {
        topology: await measure_topology(topology, settings, report, run)
        for topology, _ in TOPOLOGIES
    }
    report.results["http"] = {
        "settings": asdict(settings),
        "rates": {
            topology: {
                key: {str(n): rate.to_json() for n, rate in by_callers.items()}
                for key, by_callers in rates.items()
            }
            for topology, rates in results.items()
        },
        "protocol_versions": dict(run.versions),
        "loop_errors": run.loop_errors,
        "server_errors": run.server_errors,
        "cpu_subprocess_1_caller": {
            key: dict(zip(("calls", "wall_s", "client_cpu_s", "server_cpu_s"), total, strict=True))
            for key, total in run.cpu.items()
        },
    }
    report.lines += _main_table(results, settings)
    report.lines += _cross_table(results, settings)
    report.lines += _cpu_table(run, settings)
    report.lines += _notes(run, settings)


def measure(quick: bool) -> AdapterReport:
    """Run the HTTP benchmarks; the Markdown lines and the JSON results."""
    settings = QUICK if quick else FULL
    report = AdapterReport()
    try:
        asyncio.run(_measure(settings, report))
    except Exception as exc:
        report.lines.append(f"### HTTP\n\nerror: {type(exc).__name__}: {exc}\n")
        _error(report, "http", exc)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="mcp-sansio over Streamable HTTP vs the official SDK."
    )
    parser.add_argument("--quick", action="store_true", help="few, short measurements (CI)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write figures as JSON")
    parser.add_argument("--serve-floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_floor:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve_floor_forever())
        return 0
    if not _env.in_bench_venv():
        _log("not in the benchmark venv: SDK columns may be n/a")
    started = time.perf_counter()
    report = measure(args.quick)
    command = f"python benchmarks/http_bench.py{' --quick' if args.quick else ''}"
    print(
        f"## mcp-sansio HTTP benchmarks\n\n"
        f"- Command: `{command}`\n"
        f"- Python: {platform.python_implementation()} {platform.python_version()} "
        f"on {platform.platform()}, {os.cpu_count()} CPUs\n"
        "- Note: the machine may be loaded (other work runs alongside); absolute rates vary "
        "from run to run, the interleaved rounds keep the ratios steadier.\n"
    )
    print("\n".join(report.lines))
    print(f"(measured in {time.perf_counter() - started:.0f} s; command: {command})")
    if args.json:
        args.json.write_text(json.dumps(report.results, indent=2) + "\n")
    if report.errors:
        _log(f"{report.errors} measurement(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
