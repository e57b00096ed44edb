"""The bound and the deadline of the HTTP client's follow-ups (the POSTs that owe the
session no answer: its responses to the server's requests, its notifications):
``max_follow_ups`` in flight, the rest queued within ``max_write_buffer`` bytes (past it the
server's streams are not read), and ``write_timeout`` for each (docs/http.rst)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import orjson
import pytest
import trio
from test_hostile_http import (
    Act,
    Flood,
    Script,
    _client_fds,
    client_options,
    hostile_server,
    in_thread,
    settle,
)

from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio import blocking
from mcp_sansio import trio as mcp_trio
from mcp_sansio.blocking._http_client import HttpStream as BlockingStream
from mcp_sansio.http._client import (
    DEFAULT_MAX_FOLLOW_UPS,
    HttpClientTransport,
    HttpRequest,
    TransportProblem,
)


def _answer(n: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": f"s-{n}", "result": {}}) + b"\n"


def _requests(actions: list[Any]) -> list[HttpRequest]:
    return [a for a in actions if isinstance(a, HttpRequest)]


# ---------------------------------------------------------------------- sans-IO


def test_follow_ups_in_flight_are_bounded_and_the_rest_wait_their_turn() -> None:
    t = HttpClientTransport(max_follow_ups=2)
    sent = [_requests(t.send(_answer(n))) for n in range(5)]
    assert [len(r) for r in sent] == [1, 1, 0, 0, 0]
    assert t.follow_ups[0] == 2
    assert t.follow_ups[1] > 0
    first = sent[0][0]
    assert first.timeout == t.write_timeout == 30.0
    t.response_started(first.stream, 202, [])
    nxt = _requests(t.response_ended(first.stream))  # its end lets the next one go
    assert [orjson.loads(r.body)["id"] for r in nxt] == ["s-2"]
    nxt = _requests(t.request_failed(sent[1][0].stream, "reset"))  # a failure too
    assert [orjson.loads(r.body)["id"] for r in nxt] == ["s-3"]
    # A call is not a follow-up: it goes at once, without a deadline.
    call = _requests(t.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'))
    assert len(call) == 1
    assert call[0].timeout is None
    assert DEFAULT_MAX_FOLLOW_UPS == HttpClientTransport().max_follow_ups == 4


def test_queued_follow_ups_past_max_write_buffer_pause_reading() -> None:
    t = HttpClientTransport(max_follow_ups=1, max_write_buffer=4096)
    call = _requests(t.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'))[0]
    first = _requests(t.send(_answer(0)))[0]
    n = 1
    while not t.reading_paused:
        assert not _requests(t.send(_answer(n)))
        n += 1
        assert n < 100
    assert t.follow_ups[1] > 4096
    assert t.paused(call.stream)  # the server's streams wait...
    assert not t.paused(first.stream)  # ...but the follow-ups' own
    # Down to half of the bound, reading goes on.
    stream = first.stream
    while t.reading_paused:
        t.response_started(stream, 202, [])
        stream = _requests(t.response_ended(stream))[0].stream
    assert t.follow_ups[1] <= 2048
    assert not t.paused(call.stream)


def test_an_overdue_follow_up_is_dropped_and_the_next_one_goes() -> None:
    t = HttpClientTransport(max_follow_ups=1, write_timeout=5)
    first = _requests(t.send(_answer(0)))[0]
    assert first.timeout == 5.0
    assert not _requests(t.send(_answer(1)))
    actions = t.response_overdue(first.stream)
    problems = [a for a in actions if isinstance(a, TransportProblem)]
    assert len(problems) == 1
    assert problems[0].level == logging.DEBUG
    assert "no status line within write_timeout (5 s)" in problems[0].message
    assert [orjson.loads(r.body)["id"] for r in _requests(actions)] == ["s-1"]
    assert t.overdue == 1
    assert t.response_overdue(first.stream) == []  # once
    no_deadline = HttpClientTransport(write_timeout=None)
    assert _requests(no_deadline.send(_answer(0)))[0].timeout is None


@pytest.mark.parametrize(
    "options",
    [
        {"max_follow_ups": 0},
        {"max_follow_ups": True},
        {"max_write_buffer": 0},
        {"write_timeout": 0},
        {"write_timeout": -1.0},
        {"write_timeout": "1"},
    ],
)
def test_bad_follow_up_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        HttpClientTransport(**options)


def test_the_blocking_client_keeps_threads_for_its_calls() -> None:
    assert BlockingStream("http://127.0.0.1:9/mcp").transport.max_follow_ups == 4
    assert BlockingStream("http://127.0.0.1:9/mcp", max_workers=4).transport.max_follow_ups == 2
    assert BlockingStream("http://127.0.0.1:9/mcp", max_workers=1).transport.max_follow_ups == 1
    with pytest.raises(ValueError, match="fewer than max_workers"):
        BlockingStream("http://127.0.0.1:9/mcp", max_workers=4, max_follow_ups=4)


# ---------------------------------------------------------------------- the runtimes

PINGS = 20
DEADLINE = 0.2  # write_timeout: each stalled follow-up is given up after it


def _flood_script() -> Script:
    return Script(
        version="2025-11-25",
        max_message_size=64 * 1024,
        init_sse=False,
        listen=False,
        listen_answer="405",
        listen_flood=Flood(),
        resume_answer="answer",
        delete="200",
        stall=True,  # no follow-up is ever answered
        calls=(("ping", (Act("sse", Flood(tuple(("ping", 0) for _ in range(PINGS)))),)),),
    )


def _run(runtime: str, url: str, options: dict[str, Any], during: Any) -> list[Any]:
    """One call (the flood of pings), then ``during()`` while the client is still open."""
    if runtime == "blocking":
        with blocking.Client.connect_http(url, **options) as client:
            result = client.request("ping", timeout=10)
            return [result, during()]

    if runtime == "asyncio":

        async def main_asyncio() -> list[Any]:
            async with mcp_asyncio.Client.connect_http(url, **options) as client:
                result = await client.request("ping", timeout=10)
                return [result, await asyncio.to_thread(during)]

        return asyncio.run(main_asyncio())

    async def main_trio() -> list[Any]:
        async with mcp_trio.Client.connect_http(url, **options) as client:
            result = await client.request("ping", timeout=10)
            return [result, await trio.to_thread.run_sync(during)]

    return trio.run(main_trio)


@pytest.mark.parametrize("runtime", ["blocking", "asyncio", "trio"])
def test_follow_ups_a_server_never_answers_are_given_up_after_write_timeout(
    runtime: str,
) -> None:
    """Each stalled follow-up's connection is closed after ``write_timeout``, which lets
    the next one go: every answer reaches the server while the client is open, and the
    descriptors come back, though the server never answers one."""
    script = _flood_script()
    options = {**client_options(script), "write_timeout": DEADLINE}
    with hostile_server() as server:
        server.begin(script)
        try:
            base = _client_fds(server)

            def during() -> tuple[int, int]:
                def answered() -> bool:
                    with server.lock:
                        return len(server.seen.answers) >= PINGS

                assert settle(answered), f"{len(server.seen.answers)} answers of {PINGS}"
                time.sleep(2 * DEADLINE)  # the last ones' deadline
                assert settle(lambda: _client_fds(server) - base <= 10)
                with server.lock:
                    return len(server.seen.answers), server.seen.stalled

            started = time.monotonic()
            outcome = in_thread(lambda: _run(runtime, server.url, options, during))
            took = time.monotonic() - started
        finally:
            server.end()
    assert outcome[0] == {}
    answers, _ = outcome[1]
    assert answers == PINGS  # each once: a dropped follow-up is not sent again
    # At most max_follow_ups at a time, each given up after DEADLINE: rounds of them.
    assert took < 10, took


def test_without_a_deadline_stalled_follow_ups_stay_bounded() -> None:
    """``write_timeout=None``: the stalled follow-ups hold their connections until close,
    but no more than ``max_follow_ups`` of them; the others wait, unsent."""
    script = _flood_script()
    options = {**client_options(script), "write_timeout": None, "max_follow_ups": 3}
    seen: list[int] = []
    with hostile_server() as server:
        server.begin(script)
        try:

            def during() -> None:
                def three() -> bool:
                    with server.lock:
                        return len(server.seen.answers) >= 3

                assert settle(three)
                time.sleep(0.3)
                with server.lock:
                    seen.append(len(server.seen.answers))

            in_thread(lambda: _run("asyncio", server.url, options, during))
        finally:
            server.end()
    assert seen == [3]


def test_the_debug_line_of_a_dropped_follow_up(caplog: pytest.LogCaptureFixture) -> None:
    script = _flood_script()
    options = {**client_options(script), "write_timeout": DEADLINE}
    done = threading.Event()
    with hostile_server() as server, caplog.at_level(logging.DEBUG, "mcp_sansio.http"):
        server.begin(script)
        try:

            def during() -> None:
                assert settle(lambda: "write_timeout (0.2 s)" in caplog.text)
                done.set()

            in_thread(lambda: _run("asyncio", server.url, options, during))
        finally:
            server.end()
    assert done.is_set()
    assert "a follow-up POST got no status line within write_timeout (0.2 s)" in caplog.text
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and "follow-up" in r.msg]
    assert not warnings
