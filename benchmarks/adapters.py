"""Adapter benchmarks: whole clients and servers, side by side in one run (issue 4, "Targets").

1. **In-process**: sequential ``tools/call`` round trips to an ``echo`` tool, client and
   server in one asyncio event loop over an in-memory pipe:

   - floor: an ``asyncio.Queue`` each way and ``orjson`` ``dumps``/``loads`` of the same four
     messages (request out, request in, result out, result in);
   - mcp-sansio: ``mcp_sansio.asyncio.Client`` and ``serve_stream`` (the example server,
     ``mcp_sansio.example.build_server()``) over the in-memory pipe of
     ``Client.connect_server`` (bytes, as on a socket);
   - official SDK: ``ClientSession`` over the SDK's own in-memory transport
     (``mcp.client._memory.InMemoryTransport``, what ``mcp.Client(server)`` uses), to an
     ``MCPServer`` with the same ``echo`` tool (``_adapters_sdk_server.py``).

2. **Stdio**: the same calls to a server in a subprocess, after the handshake:

   - floor: raw ``orjson`` lines over pipes to a tiny echo process (``_adapters_echo.py``);
   - mcp-sansio: ``Client.connect_stdio`` running ``python -m mcp_sansio serve``;
   - official SDK: ``stdio_client`` + ``ClientSession`` running ``_adapters_sdk_server.py``.

3. **Startup**: spawn each server, write one ``initialize`` request on its stdin, time the
   first line of answer, then read the server's ``VmRSS`` from ``/proc/<pid>/status``.

Rates are measured in interleaved rounds (each column once per round, for about
``round_s`` seconds), and the median round is reported. Every subprocess and every round
is bounded in time.

    python benchmarks/adapters.py [--quick]

Like ``run.py`` (which includes this table), it first re-executes itself inside
``benchmarks/.sdk-venv`` (see ``_env``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import itertools
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _env

if __name__ == "__main__":
    # Before anything heavy is imported: this may replace the process.
    _env.ensure()

import orjson

__all__ = ["FULL", "QUICK", "AdapterReport", "Settings", "measure"]

HERE: Final = Path(__file__).resolve().parent
ECHO_FLOOR: Final = HERE / "_adapters_echo.py"
SDK_SERVER: Final = HERE / "_adapters_sdk_server.py"

#: Issue 4: "≥ 10x the Python SDK's rate", in process and over stdio.
TARGET_X_SDK: Final = 10.0

MESSAGE: Final = "hello from the adapter benchmark"
ARGUMENTS: Final = {"message": MESSAGE}
EXPECTED: Final = f"Echo: {MESSAGE}"
#: The version in the raw ``initialize`` of the startup probe (both servers speak it).
INIT_VERSION: Final = "2025-11-25"

OURS_CMD: Final = (sys.executable, "-m", "mcp_sansio", "serve")
SDK_CMD: Final = (sys.executable, str(SDK_SERVER))
FLOOR_CMD: Final = (sys.executable, str(ECHO_FLOOR))


@dataclass(frozen=True)
class Settings:
    round_s: float
    """How long each column runs per round, in seconds."""
    rounds: int
    spawns: int
    """How many times each server is started for the startup figures."""
    step_timeout_s: float = 60.0
    """The bound on any one step (a setup, a round, a spawn)."""


FULL: Final = Settings(round_s=0.4, rounds=7, spawns=5)
QUICK: Final = Settings(round_s=0.05, rounds=3, spawns=1, step_timeout_s=30.0)


class NotAvailable(Exception):
    """A column that cannot be measured here (the SDK is not installed)."""


@dataclass
class AdapterReport:
    lines: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    targets: list[tuple[str, float | None, float, str]] = field(default_factory=list)
    """(name, measured ratio or None, limit, "min" or "max"), as ``run.Target`` takes them."""
    errors: int = 0


Call = Callable[[], Awaitable[str]]
"""One round trip; returns the echoed text."""


def _log(message: str) -> None:
    print(f"[benchmarks] {message}", file=sys.stderr, flush=True)


def _sdk() -> None:
    if os.environ.get(_env.NO_SDK_FLAG):
        raise NotAvailable(f"n/a ({_env.NO_SDK_FLAG} set)")
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise NotAvailable("n/a (the SDK is not installed)") from exc


def _our_text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]  # type: ignore[no-any-return]


def _sdk_text(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


def _echo_result(request: dict[str, Any]) -> bytes:
    text = "Echo: " + request["params"]["arguments"]["message"]
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"content": [{"type": "text", "text": text}]},
        }
    )


async def _stop(process: asyncio.subprocess.Process, timeout: float = 5.0) -> None:
    """Close the stdin of a server process; terminate, then kill it if it lingers."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    for signal_it in (None, process.terminate, process.kill):
        if signal_it is not None:
            with contextlib.suppress(ProcessLookupError):
                signal_it()
        try:
            await asyncio.wait_for(process.wait(), timeout)
            return
        except asyncio.TimeoutError:
            continue


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Bound the enclosed awaits, in the current task (unlike ``asyncio.wait_for``, which
    runs its awaitable in a new task, where anyio's cancel scopes refuse to be left)."""
    task = asyncio.current_task()
    assert task is not None
    fired = False

    def fire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(seconds, fire)
    try:
        yield
    except asyncio.CancelledError:
        if fired:
            raise TimeoutError(f"took more than {seconds:g} s") from None
        raise
    finally:
        handle.cancel()


# --------------------------------------------------------------------------- in process


@contextlib.asynccontextmanager
async def floor_in_process() -> AsyncIterator[Call]:
    to_server: asyncio.Queue[bytes | None] = asyncio.Queue()
    to_client: asyncio.Queue[bytes] = asyncio.Queue()
    loads, dumps = orjson.loads, orjson.dumps

    async def serve() -> None:
        while (line := await to_server.get()) is not None:
            await to_client.put(_echo_result(loads(line)))

    task = asyncio.create_task(serve())
    ids = itertools.count(1)

    async def call() -> str:
        request = {
            "jsonrpc": "2.0",
            "id": next(ids),
            "method": "tools/call",
            "params": {"name": "echo", "arguments": ARGUMENTS},
        }
        await to_server.put(dumps(request))
        return _our_text(loads(await to_client.get())["result"])

    try:
        yield call
    finally:
        to_server.put_nowait(None)
        await asyncio.wait_for(task, 5)


@contextlib.asynccontextmanager
async def sansio_in_process(versions: list[str] | None = None) -> AsyncIterator[Call]:
    from mcp_sansio.asyncio import Client
    from mcp_sansio.example import build_server

    async with Client.connect_server(build_server(), versions=versions) as client:
        _VERSIONS[f"in_process_sansio{'_pinned' if versions else ''}"] = client.protocol_version

        async def call() -> str:
            return _our_text(await client.call_tool("echo", ARGUMENTS))

        yield call


@contextlib.asynccontextmanager
async def sdk_in_process() -> AsyncIterator[Call]:
    _sdk()
    from _adapters_sdk_server import server
    from mcp import ClientSession
    from mcp.client._memory import InMemoryTransport

    async with InMemoryTransport(server) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        _VERSIONS["in_process_sdk"] = init.protocol_version

        async def call() -> str:
            return _sdk_text(await session.call_tool("echo", dict(ARGUMENTS)))

        yield call


# --------------------------------------------------------------------------- stdio


@contextlib.asynccontextmanager
async def floor_stdio() -> AsyncIterator[Call]:
    process = await asyncio.create_subprocess_exec(
        *FLOOR_CMD,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    loads, dumps = orjson.loads, orjson.dumps
    ids = itertools.count(1)

    async def call() -> str:
        request = {
            "jsonrpc": "2.0",
            "id": next(ids),
            "method": "tools/call",
            "params": {"name": "echo", "arguments": ARGUMENTS},
        }
        stdin.write(dumps(request) + b"\n")
        await stdin.drain()
        return _our_text(loads(await stdout.readline())["result"])

    try:
        yield call
    finally:
        await _stop(process)


@contextlib.asynccontextmanager
async def sansio_stdio(versions: list[str] | None = None) -> AsyncIterator[Call]:
    from mcp_sansio.asyncio import Client

    async with Client.connect_stdio(
        OURS_CMD, stderr=subprocess.DEVNULL, versions=versions
    ) as client:
        _VERSIONS[f"stdio_sansio{'_pinned' if versions else ''}"] = client.protocol_version

        async def call() -> str:
            return _our_text(await client.call_tool("echo", ARGUMENTS))

        yield call


@contextlib.asynccontextmanager
async def sdk_stdio() -> AsyncIterator[Call]:
    _sdk()
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SDK_CMD[0], args=list(SDK_CMD[1:]))
    with open(os.devnull, "w") as devnull:
        async with (
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            _VERSIONS["stdio_sdk"] = init.protocol_version

            async def call() -> str:
                return _sdk_text(await session.call_tool("echo", dict(ARGUMENTS)))

            yield call


_VERSIONS: dict[str, str | None] = {}


# --------------------------------------------------------------------------- rates


@dataclass
class Rate:
    rates: list[float] = field(default_factory=list)
    na: str | None = None
    error: str | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.rates) if self.rates and not self.error else None

    def to_json(self) -> dict[str, Any]:
        if self.median is not None:
            return {
                "median_per_s": self.median,
                "min_per_s": min(self.rates),
                "max_per_s": max(self.rates),
                "rounds": len(self.rates),
            }
        return {"na": self.na} if self.na else {"error": self.error}


async def _one_round(call: Call, seconds: float) -> float:
    gc.collect()
    clock = time.perf_counter
    n = 0
    started = clock()
    deadline = started + seconds
    while True:
        await call()
        n += 1
        now = clock()
        if now >= deadline:
            return n / (now - started)


async def measure_rates(
    columns: dict[str, Callable[[], contextlib.AbstractAsyncContextManager[Call]]],
    settings: Settings,
    report: AdapterReport,
    what: str,
) -> dict[str, Rate]:
    """Open every column, check it, then time them in interleaved rounds."""
    out = {key: Rate() for key in columns}
    calls: dict[str, Call] = {}
    timeout = settings.step_timeout_s
    async with contextlib.AsyncExitStack() as stack:
        for key, opener in columns.items():
            try:
                with _deadline(timeout):
                    call = await stack.enter_async_context(opener())
                    for _ in range(20):  # warm up, and check the answers
                        text = await call()
                        if text != EXPECTED:
                            raise AssertionError(f"{key}: unexpected echo {text!r}")
            except NotAvailable as exc:
                out[key].na = str(exc)
                continue
            except Exception as exc:
                out[key].error = _error(report, f"{what} {key}", exc)
                continue
            calls[key] = call
        for _ in range(settings.rounds):
            for key, call in list(calls.items()):
                try:
                    with _deadline(timeout):
                        out[key].rates.append(await _one_round(call, settings.round_s))
                except Exception as exc:
                    out[key].error = _error(report, f"{what} {key}", exc)
                    del calls[key]
    text = ", ".join(f"{k} {_rate_text(r)}" for k, r in out.items())
    _log(f"{what}: {text}")
    return out


def _error(report: AdapterReport, what: str, exc: BaseException) -> str:
    report.errors += 1
    _log(f"error in {what}:")
    traceback.print_exception(exc)
    return f"{type(exc).__name__}: {exc}"


def _rate_text(rate: Rate) -> str:
    if rate.median is None:
        return rate.na or "error (see stderr)"
    return f"{rate.median:,.0f}/s"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _x(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}x"


# --------------------------------------------------------------------------- startup


@dataclass
class Startup:
    ms: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    na: str | None = None
    error: str | None = None

    def median_ms(self) -> float | None:
        return statistics.median(self.ms) if self.ms and not self.error else None

    def median_mib(self) -> float | None:
        return statistics.median(self.rss_kib) / 1024 if self.rss_kib and not self.error else None

    def to_json(self) -> dict[str, Any]:
        if self.error or self.na:
            return {"na": self.na} if self.na else {"error": self.error}
        return {"first_answer_ms": self.ms, "vmrss_kib": self.rss_kib}


def _vmrss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


async def _spawn_once(command: tuple[str, ...], timeout: float) -> tuple[float, int]:
    """Spawn, send ``initialize``, time the first answer, read VmRSS; then stop it."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": INIT_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-sansio-bench", "version": "1"},
        },
    }
    line = orjson.dumps(request) + b"\n"
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(line)
        await process.stdin.drain()
        with _deadline(timeout):
            answer = await process.stdout.readline()
        elapsed = time.perf_counter() - started
        rss = _vmrss_kib(process.pid)
        reply = orjson.loads(answer)
        if "result" not in reply:
            raise AssertionError(f"{command}: no initialize result: {answer[:300]!r}")
        return elapsed * 1000, rss
    finally:
        await _stop(process)


async def measure_startup(settings: Settings, report: AdapterReport) -> dict[str, Startup]:
    rows: dict[str, tuple[str, ...]] = {"floor": FLOOR_CMD, "sansio": OURS_CMD, "sdk": SDK_CMD}
    out = {key: Startup() for key in rows}
    try:
        _sdk()
    except NotAvailable as exc:
        out["sdk"].na = str(exc)
    for _ in range(settings.spawns):
        for key, command in rows.items():
            cell = out[key]
            if cell.na or cell.error:
                continue
            try:
                ms, rss = await _spawn_once(command, settings.step_timeout_s)
            except Exception as exc:
                cell.error = _error(report, f"startup {key}", exc)
                continue
            cell.ms.append(ms)
            cell.rss_kib.append(rss)
    text = ", ".join(
        f"{k} {s.median_ms() or 0:.0f} ms {s.median_mib() or 0:.1f} MiB" for k, s in out.items()
    )
    _log(f"startup: {text}")
    return out


# --------------------------------------------------------------------------- report


def _display(command: tuple[str, ...]) -> str:
    parts = ["python" if c == sys.executable else c for c in command]
    return " ".join(os.path.relpath(p, _env.REPO) if p.startswith("/") else p for p in parts)


async def _measure(settings: Settings, report: AdapterReport) -> None:
    in_process = await measure_rates(
        {
            "floor": floor_in_process,
            "sansio": sansio_in_process,
            "sansio_pinned": functools.partial(sansio_in_process, [INIT_VERSION]),
            "sdk": sdk_in_process,
        },
        settings,
        report,
        "adapters in process",
    )
    stdio = await measure_rates(
        {
            "floor": floor_stdio,
            "sansio": sansio_stdio,
            "sansio_pinned": functools.partial(sansio_stdio, [INIT_VERSION]),
            "sdk": sdk_stdio,
        },
        settings,
        report,
        "adapters stdio",
    )
    startup = await measure_startup(settings, report)
    report.results["adapters"] = {
        "in_process": {k: r.to_json() for k, r in in_process.items()},
        "stdio": {k: r.to_json() for k, r in stdio.items()},
        "startup": {k: s.to_json() for k, s in startup.items()},
        "protocol_versions": dict(_VERSIONS),
    }
    report.lines += _rate_table(in_process, stdio, settings, report)
    report.lines += _startup_table(startup, settings)


def _rate_table(
    in_process: dict[str, Rate], stdio: dict[str, Rate], settings: Settings, report: AdapterReport
) -> list[str]:
    lines = [
        "### Adapters: sequential `tools/call` → `echo` round trips, asyncio "
        f"(round trips per second, median of {settings.rounds} interleaved rounds of "
        f"~{settings.round_s:g} s each)\n",
        f"| path | floor | mcp-sansio | mcp-sansio, {INIT_VERSION} | official SDK "
        "| mcp-sansio vs SDK | same version vs SDK | mcp-sansio ÷ floor | target |",
        "|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for name, floor_what, rates in (
        ("in process (one event loop, in-memory pipe)", "asyncio.Queue + orjson", in_process),
        ("stdio (server in a subprocess)", "raw orjson over pipes", stdio),
    ):
        ours, sdk, floor = rates["sansio"].median, rates["sdk"].median, rates["floor"].median
        speedup = _ratio(ours, sdk)
        report.targets.append(
            (f"adapters, {name}: times the SDK's rate", speedup, TARGET_X_SDK, "min")
        )
        status = "n/a" if speedup is None else "met" if speedup >= TARGET_X_SDK else "MISSED"
        lines.append(
            f"| {name} | {_rate_text(rates['floor'])} ({floor_what}) "
            f"| {_rate_text(rates['sansio'])} | {_rate_text(rates['sansio_pinned'])} "
            f"| {_rate_text(rates['sdk'])} | {_x(speedup)} "
            f"| {_x(_ratio(rates['sansio_pinned'].median, sdk))} "
            f"| {_x(_ratio(ours, floor), 2)} | ≥ {TARGET_X_SDK:g}x SDK: {status} |"
        )
    versions = ", ".join(f"{k} {v}" for k, v in _VERSIONS.items()) or "n/a"
    lines += [
        "",
        "In process: mcp-sansio = `Client.connect_server(build_server())` (the example "
        "server in the same event loop, over an in-memory byte pipe); SDK = `ClientSession` over "
        "`mcp.client._memory.InMemoryTransport` (its in-memory streams) to an `MCPServer` with "
        "the same `echo` tool. Stdio: `Client.connect_stdio(python -m mcp_sansio serve)` vs "
        "`stdio_client` + `ClientSession` to `benchmarks/_adapters_sdk_server.py`; floor = "
        "`benchmarks/_adapters_echo.py`. *mcp-sansio* is our client as it comes (it probes "
        f"with `server/discover` and speaks the newest version); *{INIT_VERSION}* pins it to "
        "the version the SDK's `ClientSession` negotiates (the `initialize` handshake). "
        f"Negotiated: {versions}. The target is checked on the first. GC enabled, as in real use.",
        "",
    ]
    return lines


def _startup_table(startup: dict[str, Startup], settings: Settings) -> list[str]:
    titles = {
        "floor": ("raw orjson echo (floor)", FLOOR_CMD),
        "sansio": ("mcp-sansio example server", OURS_CMD),
        "sdk": ("official SDK `MCPServer`, one tool", SDK_CMD),
    }
    lines = [
        "### Server startup: spawn → first answer (`initialize` result), and the server's "
        f"resident memory after it (median of {settings.spawns} spawns)\n",
        "| server | command | first answer (ms) | VmRSS (MiB) |",
        "|---|---|--:|--:|",
    ]
    for key, (title, command) in titles.items():
        cell = startup[key]
        ms, mib = cell.median_ms(), cell.median_mib()
        if ms is None or mib is None:
            shown = cell.na or "error (see stderr)"
            lines.append(f"| {title} | `{_display(command)}` | {shown} | {shown} |")
        else:
            lines.append(f"| {title} | `{_display(command)}` | {ms:,.0f} | {mib:.1f} |")
    ours, sdk = startup["sansio"], startup["sdk"]
    lines += [
        "",
        f"SDK ÷ mcp-sansio: startup {_x(_ratio(sdk.median_ms(), ours.median_ms()))}, "
        f"memory {_x(_ratio(sdk.median_mib(), ours.median_mib()))}.",
        "",
    ]
    return lines


def measure(quick: bool) -> AdapterReport:
    """Run the adapter benchmarks; the Markdown lines, JSON results and targets."""
    settings = QUICK if quick else FULL
    report = AdapterReport()
    try:
        asyncio.run(_measure(settings, report))
    except Exception as exc:
        report.lines.append(f"### Adapters\n\nerror: {type(exc).__name__}: {exc}\n")
        _error(report, "adapters", exc)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mcp-sansio adapters vs the official SDK.")
    parser.add_argument("--quick", action="store_true", help="few, short measurements (CI)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = measure(args.quick)
    command = f"python benchmarks/adapters.py{' --quick' if args.quick else ''}"
    print(
        f"## mcp-sansio adapter benchmarks\n\n"
        f"- Command: `{command}`\n"
        f"- Python: {platform.python_implementation()} {platform.python_version()} "
        f"on {platform.platform()}, {os.cpu_count()} CPUs\n"
        "- Note: the machine may be loaded (other work runs alongside); absolute rates vary "
        "from run to run, the interleaved rounds keep the ratios steadier.\n"
    )
    print("\n".join(report.lines))
    for name, value, limit, kind in report.targets:
        ok = value is not None and (value >= limit if kind == "min" else value <= limit)
        got = "n/a" if value is None else f"{value:.1f}x"
        print(f"- {name} ≥ {limit:g}x: {'met' if ok else 'MISSED'} ({got})")
    print(f"\n(measured in {time.perf_counter() - started:.0f} s; command: {command})")
    if report.errors:
        _log(f"{report.errors} measurement(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
