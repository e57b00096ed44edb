"""Backpressure, and no write without a deadline, in the stdio and socket adapters
(blocking, asyncio, trio): issue 16, class 6.

Each client runs in a subprocess of its own (so that a hang is a failed test, not a stuck
suite, and its peak memory is its own), against a hostile server, itself a
``sys.executable -c`` script:

- a server that answers the opening, then floods pings (valid requests, each answered) or
  notifications and never reads its stdin: the call fails within ``write_timeout`` of the
  server taking nothing, with one clear ``ConnectionLost``, and the client's memory stays
  flat. Before: the blocking client hung (its write to the full pipe never returned), the
  asyncio client buffered its answers (+281 MiB in 47 s, then a ``RequestTimeout`` after the
  call's whole timeout) or hung in a drain, the trio client waited out the timeout (49 s).
- a server that reads slowly (4 KiB every 10 ms) while it sends a notification per read:
  two 1 MB calls go through, though each takes longer than ``write_timeout`` to write
  (the deadline is on progress, not on the whole write), and every notification arrives.
- a server that writes 10,000 pings before it reads anything, then reads: every ping is
  answered, none lost (before: the blocking client deadlocked, its answers filling the pipe
  while the server waited for its own writes).

And a hostile client of each runtime's TCP server that floods pings and never reads: the
server closes that connection and serves the next client.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import initialize_request

from mcp_sansio import blocking

RUNTIMES = ["blocking", "asyncio", "trio"]
#: The bound on any one client's run (a hang is a failure, not a stuck suite).
LIMIT = 60.0
#: Far longer than the 2 s write_timeout, far shorter than the 60 s it used to take or more.
BOUND = 30.0
#: Peak memory a client (or server) may gain in one run. The adapters' bound is 1 MiB of
#: writes; the rest is the interpreter's own churn under a flood (an asyncio server on Python
#: 3.13 gained 52 MiB in a fresh-clone run). Before the bound, the same runs grew by 281 MiB
#: (asyncio client) and 455 MiB (asyncio server).
GROWTH_MIB = 128.0
SRC = str(Path(__file__).resolve().parent.parent / "src")

# ---------------------------------------------------------------------- the servers

PRELUDE = r"""
import json, os, sys, time

out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def line():
    data = b""
    while not data.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            sys.exit(0)
        data += byte
    return json.loads(data)


opening = line()
send({"jsonrpc": "2.0", "id": opening["id"], "result": {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "logging": {}},
    "serverInfo": {"name": "hostile", "version": "1"},
}})
"""

FLOOD_PINGS = (
    PRELUDE
    + r"""
i = 0
while True:  # valid requests, each answered by the client; stdin never read
    pings = (b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (i + k) for k in range(1000))
    out.write(b"".join(pings))
    i += 1000
"""
)

FLOOD_NOTES = (
    PRELUDE
    + r"""
note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n'
while True:  # valid notifications; stdin never read
    out.write(note * 1000)
"""
)

SLOW = (
    PRELUDE
    + r"""
calls = int(sys.argv[1])
buf, sent, answered = b"", 0, 0
while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    if answered < calls:  # a notification per read, while the calls come in
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": sent}})
        sent += 1
    buf += chunk
    if b"\n" in chunk:
        *lines, buf = buf.split(b"\n")
        for raw in lines:
            message = json.loads(raw)
            if message.get("method") == "tools/call":
                size = len(message["params"]["arguments"]["text"])
                answered += 1
                send({"jsonrpc": "2.0", "id": message["id"],
                      "result": {"content": [{"type": "text", "text": f"{size} {sent}"}]}})
    time.sleep(0.01)
"""
)

STOP_THEN_READ = (
    PRELUDE
    + r"""
pings = int(sys.argv[1])
out.write(b"".join(b'{"jsonrpc":"2.0","id":"p%d","method":"ping"}\n' % i for i in range(pings)))
out.flush()  # all written before anything is read: the client's answers wait meanwhile
time.sleep(1.0)
pongs, call, buf = set(), None, b""
while len(pongs) < pings or call is None:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    *lines, buf = buf.split(b"\n")
    for raw in lines:
        message = json.loads(raw)
        if message.get("method") == "tools/call":
            call = message
        elif "result" in message and str(message.get("id")).startswith("p"):
            pongs.add(message["id"])
send({"jsonrpc": "2.0", "id": call["id"],
      "result": {"content": [{"type": "text", "text": str(len(pongs))}]}})
while os.read(0, 65536):
    pass
"""
)

# ---------------------------------------------------------------------- the client

RUNNER = r"""
import json, resource, sys, time

runtime, command, text, calls, options = sys.argv[1:6]
command, calls, options = json.loads(command), int(calls), json.loads(options)
arguments = {"text": text if not text.isdigit() else "x" * int(text)}
options.setdefault("versions", ["2025-11-25"])
options.setdefault("stderr", -3)  # subprocess.DEVNULL: a broken pipe's traceback
count = [0]


def note(_):
    count[0] += 1


def rss_kib():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform == "darwin" else peak


if runtime == "blocking":
    from mcp_sansio import blocking

    def run(results):
        with blocking.Client.connect_stdio(command, on_notification=note, **options) as c:
            for _ in range(calls):
                results.append((c.call_tool("echo", arguments)["content"][0]["text"], count[0]))

elif runtime == "asyncio":
    import asyncio

    from mcp_sansio import asyncio as mcp_asyncio

    def run(results):
        async def main():
            client = mcp_asyncio.Client.connect_stdio(command, on_notification=note, **options)
            async with client as c:
                for _ in range(calls):
                    answer = await c.call_tool("echo", arguments)
                    results.append((answer["content"][0]["text"], count[0]))

        asyncio.run(main())

else:
    import trio

    from mcp_sansio import trio as mcp_trio

    def run(results):
        async def main():
            client = mcp_trio.Client.connect_stdio(command, on_notification=note, **options)
            async with client as c:
                for _ in range(calls):
                    answer = await c.call_tool("echo", arguments)
                    results.append((answer["content"][0]["text"], count[0]))

        trio.run(main)

before = rss_kib()
outcome = {"results": []}
start = time.monotonic()
try:
    run(outcome["results"])
except Exception as exc:
    outcome["error"] = type(exc).__name__
    outcome["message"] = getattr(exc, "message", str(exc))
outcome["elapsed"] = time.monotonic() - start
outcome["growth_mib"] = (rss_kib() - before) / 1024
print(json.dumps(outcome))
"""


def client(
    runtime: str,
    server: str,
    *,
    args: tuple[str, ...] = (),
    text: str = "x",
    calls: int = 1,
    **options: Any,
) -> dict[str, Any]:
    """Run a client of ``runtime`` against ``server`` in a subprocess; what it reports."""
    command = [sys.executable, "-c", server, *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            RUNNER,
            runtime,
            json.dumps(command),
            text,
            str(calls),
            json.dumps(options),
        ],
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,  # the hostile server goes with it if it hangs
    )
    try:
        out, _ = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the {runtime} client was still running after {LIMIT} s")
    with_outcome = out.decode().strip().splitlines()
    assert proc.returncode == 0, out
    assert with_outcome, out
    outcome: dict[str, Any] = json.loads(with_outcome[-1])
    return outcome


# ---------------------------------------------------------------------- the tests


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(
    ("server", "text"),
    [(FLOOD_PINGS, "x"), (FLOOD_NOTES, "2000000")],
    ids=["pings-and-a-small-call", "notifications-and-a-2-MB-call"],
)
def test_a_server_that_floods_and_never_reads(runtime: str, server: str, text: str) -> None:
    outcome = client(runtime, server, text=text, timeout=45.0, write_timeout=2.0)
    assert outcome.get("error") == "ConnectionLost", outcome
    message = outcome["message"]
    assert message.startswith("the server stopped reading: "), message
    assert message.endswith(
        " bytes unwritten for 2 s (write_timeout); the connection is closed as broken"
    ), message
    unwritten = int(message.split()[4])
    assert unwritten > 1 << 20 if text == "x" else unwritten > 1 << 19  # past the bound
    assert outcome["elapsed"] < BOUND, outcome
    assert outcome["growth_mib"] < GROWTH_MIB, outcome


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_server_that_reads_slowly_gets_everything(runtime: str) -> None:
    calls = 2
    outcome = client(
        runtime,
        SLOW,
        args=(str(calls),),
        text="1000000",
        calls=calls,
        timeout=45.0,
        write_timeout=2.0,
    )
    assert "error" not in outcome, outcome
    results = outcome["results"]
    assert len(results) == calls
    for text, notifications in results:
        size, sent = map(int, text.split())
        assert size == 1_000_000
        assert notifications == sent  # every notification sent before the answer arrived
    # Each call took longer to write than write_timeout (1 MB at 4 KiB per 10 ms: 2.4 s at
    # the least): the deadline is on progress, not on the whole write.
    assert outcome["elapsed"] > calls * 2.0, outcome
    assert outcome["growth_mib"] < GROWTH_MIB, outcome


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_server_that_stops_reading_then_reads_loses_nothing(runtime: str) -> None:
    pings = 10_000  # about 400 KB of answers: within the bound, past the pipe's 64 KiB
    outcome = client(runtime, STOP_THEN_READ, args=(str(pings),), timeout=45.0, write_timeout=10.0)
    assert "error" not in outcome, outcome
    assert outcome["results"][0][0] == str(pings)  # every ping answered, none lost
    assert outcome["elapsed"] < BOUND, outcome


# ---------------------------------------------------------------------- the servers' side

SERVE = r"""
import functools, sys

from mcp_sansio.server import Server

runtime, server, options = sys.argv[1], Server("deaf-client", "1.0"), {"write_timeout": 1.0}
if runtime == "blocking":
    from mcp_sansio import blocking

    blocking.serve_tcp(server, ready=lambda listener: print(listener.port, flush=True), **options)
elif runtime == "asyncio":
    import asyncio

    from mcp_sansio import asyncio as mcp_asyncio

    async def main():
        listener = await mcp_asyncio.serve_tcp(server, **options)
        print(listener.port, flush=True)
        await listener.serve_forever()

    asyncio.run(main())
else:
    import trio

    from mcp_sansio import trio as mcp_trio

    async def main():
        async with trio.open_nursery() as nursery:
            port = await nursery.start(functools.partial(mcp_trio.serve_tcp, server, **options))
            print(port, flush=True)

    trio.run(main)
"""

INITIALIZE = initialize_request()


def _peak_mib(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for row in status.splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    return None  # pragma: no cover


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_client_that_floods_and_never_reads_is_disconnected(runtime: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, runtime], stdout=subprocess.PIPE, env=env
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        before = _peak_mib(server.pid)
        with socket.create_connection(("127.0.0.1", port), timeout=LIMIT) as deaf:
            deaf.sendall(json.dumps(INITIALIZE).encode() + b"\n")
            answer = b""
            while not answer.endswith(b"\n"):
                data = deaf.recv(65536)
                assert data, f"the {runtime} server closed the connection before answering"
                answer += data
            assert json.loads(answer)["id"] == 0
            deaf.sendall(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            pings = b"".join(
                b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(1000)
            )
            deaf.settimeout(0.5)
            start = time.monotonic()
            disconnected = False
            while not disconnected and time.monotonic() - start < LIMIT:
                try:
                    deaf.send(pings)
                except TimeoutError:
                    continue  # the server has stopped reading us
                except OSError:
                    disconnected = True  # reset: the server closed the connection
            elapsed = time.monotonic() - start
        assert disconnected, f"the {runtime} server kept a client that never reads for {LIMIT} s"
        assert elapsed < BOUND
        after = _peak_mib(server.pid)
        if before is not None and after is not None:
            assert after - before < GROWTH_MIB, (before, after)
        # The server goes on serving.
        with blocking.Client.connect_tcp(
            "127.0.0.1", port, versions=["2025-11-25"], timeout=10.0
        ) as well_behaved:
            assert well_behaved.ping() == {}
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()
