"""``PeerMachine``, ``Conversation`` and the targets of ``mcp_sansio.testing``.

The machine runs clean against our own server in-process (both eras); a planted violation
in a tiny server built on a bare ``Connection`` (a ``FunctionTarget``) fails it under the
right rule and shrinks to a short exchange; the conversation's judgement of near-misses
(wrong code, wrong id, no answer, two answers, an answer where none is due); the
scripted near-misses of ``near_misses`` replayed against the example server; the targets'
refusals. Everything in-process except one stdio target, and bounded in time.
"""

from __future__ import annotations

import sys
import unittest
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.stateful import run_state_machine_as_test

from mcp_sansio import (
    ALL_VERSIONS,
    NEED_DATA,
    Connection,
    ErrorResponse,
    InvalidMessage,
    RemoteProtocolError,
    Request,
    Response,
    Role,
)
from mcp_sansio.testing import (
    ConnectionTarget,
    FunctionTarget,
    HttpTarget,
    StdioTarget,
    Target,
    TargetError,
)
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import canonical
from mcp_sansio.testing._near_miss import near_misses
from mcp_sansio.testing._peer_machine import PeerMachine, SessionRefused
from mcp_sansio.testing._replay import agrees, replay
from mcp_sansio.testing._scenario import NearMiss
from mcp_sansio.testing._shots import shot_builders
from mcp_sansio.testing._wire import Demand, PeerViolation, Shot, WireLine, classify

QUICK = settings(
    max_examples=6,
    stateful_step_count=6,
    deadline=None,
    database=None,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
)

Responder = Callable[[bytes], Iterable[bytes]]


def tiny_server(
    *,
    duplicate: str | None = None,
    wrong_code: bool = False,
    silent: str | None = None,
) -> Callable[[], Responder]:
    """A server of 2025-11-25 with tools, written on a bare ``Connection``: it follows every
    rule our Connection enforces, except what is planted: answering ``duplicate`` (a
    method) twice, answering -32603 where -32601 is due (``wrong_code``), saying nothing to
    ``silent`` (a method)."""

    def factory() -> Responder:
        conn = Connection(Role.SERVER, versions=("2025-11-25",), capabilities={"tools": {}})

        def respond(line: bytes) -> list[bytes]:
            out: list[bytes] = []
            conn.receive_data(line + b"\n")
            while True:
                try:
                    event = conn.next_event()
                except RemoteProtocolError:
                    return out
                if event is NEED_DATA:
                    return out
                if isinstance(event, InvalidMessage):
                    if event.reply is not None:
                        reply = event.reply
                        if wrong_code and reply.code == -32601:
                            reply = ErrorResponse(id=reply.id, code=-32603, message="oops")
                        out.append(conn.send(reply))
                elif isinstance(event, Request):
                    if event.method == silent:
                        continue
                    result: dict[str, Any] = {}
                    if event.method == "initialize":
                        result = {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "tiny", "version": "1"},
                        }
                    elif event.method == "tools/list":
                        result = {"tools": []}
                    elif event.method == "tools/call":
                        if not isinstance((event.params or {}).get("name"), str):
                            out.append(
                                conn.send(ErrorResponse(id=event.id, code=-32602, message="name?"))
                            )
                            continue
                        result = {"content": [], "isError": True}
                    data = conn.send(Response(id=event.id, result=result))
                    out.append(data)
                    if event.method == duplicate:
                        out.append(data)

        return respond

    return factory


# ---------------------------------------------------------------------- the machine


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_machine_runs_clean_against_our_example_server(version: str) -> None:
    machine = PeerMachine.against(
        ConnectionTarget(), version=version, timeout=5, peer_versions=ALL_VERSIONS
    )
    run_state_machine_as_test(machine, settings=QUICK)


def test_the_machine_runs_clean_against_a_bare_connection() -> None:
    machine = PeerMachine.against(FunctionTarget(tiny_server()), timeout=2)
    run_state_machine_as_test(machine, settings=QUICK)


def test_a_planted_violation_fails_the_machine_and_shrinks() -> None:
    machine = PeerMachine.against(
        FunctionTarget(tiny_server(duplicate="tools/list")), timeout=2, rules=()
    )
    with pytest.raises(PeerViolation) as caught:
        run_state_machine_as_test(
            machine, settings=settings(QUICK, max_examples=30, stateful_step_count=5)
        )
    violation = caught.value.violation
    assert violation.rule == "response.unknown-id"
    assert type(caught.value) is PeerViolation.for_rule("response.unknown-id")
    sent = [line.data for line in violation.exchange if line.side == "probe"]
    # initialize, notifications/initialized, tools/list (and at most a ping after it)
    assert len(violation.exchange) <= 7, [line.render() for line in violation.exchange]
    assert any(b'"tools/list"' in data for data in sent)
    assert "[response.unknown-id]" in str(caught.value)


def test_a_wrong_error_code_is_a_violation_of_its_rule() -> None:
    machine = PeerMachine.against(
        FunctionTarget(tiny_server(wrong_code=True)),
        timeout=2,
        rules=["method.unknown"],
    )
    with pytest.raises(PeerViolation) as caught:
        run_state_machine_as_test(machine, settings=settings(QUICK, max_examples=30))
    assert caught.value.violation.rule == "method.unknown"
    assert "the rule wants -32601" in caught.value.violation.message


def test_a_refused_session_is_not_a_violation() -> None:
    # A server of the initialize era only: server/discover gets -32601.
    machine = PeerMachine.against(FunctionTarget(tiny_server()), version="2026-07-28", timeout=2)
    with pytest.raises(SessionRefused, match="does not speak 2026-07-28"):
        run_state_machine_as_test(machine, settings=QUICK)


def test_against_makes_a_test_case_and_checks_its_arguments() -> None:
    machine = PeerMachine.against(ConnectionTarget(), version="2025-06-18", name="TestExample")
    assert machine.__name__ == "TestExample"
    assert issubclass(machine.TestCase, unittest.TestCase)
    assert machine.version == "2025-06-18"
    with pytest.raises(ValueError, match="unknown protocol version"):
        PeerMachine.against(ConnectionTarget(), version="1999-01-01")
    with pytest.raises(ValueError, match="unknown rules"):
        PeerMachine.against(ConnectionTarget(), rules=["no.such-rule"])
    with pytest.raises(TypeError, match="against"):
        PeerMachine()


def test_violation_classes_are_one_per_rule() -> None:
    a = PeerViolation.for_rule("envelope.parse-error")
    assert a is PeerViolation.for_rule("envelope.parse-error")
    assert a is not PeerViolation.for_rule("envelope.invalid-request")
    assert a.__name__ == "EnvelopeParseErrorViolation"
    assert issubclass(a, AssertionError)


# ---------------------------------------------------------------------- the conversation


def _shot(target: Target, data: bytes, expect: Demand) -> str | None:
    with Conversation(target, "2025-11-25", timeout=2, startup=2) as conv:
        assert conv.open_session()
        return conv.shoot(Shot("method.unknown", data, expect))


UNKNOWN = b'{"jsonrpc":"2.0","id":"x","method":"probe/nothing"}'
NOT_FOUND = Demand("error", (-32601,), ("x",))


def test_shots_are_judged() -> None:
    good = FunctionTarget(tiny_server())
    assert _shot(good, UNKNOWN, NOT_FOUND) is None
    wrong = FunctionTarget(tiny_server(wrong_code=True))
    assert _shot(wrong, UNKNOWN, NOT_FOUND) == "answered error -32603; the rule wants -32601"
    assert _shot(good, UNKNOWN, Demand("error", (-32601,), ("y",))) == (
        "error -32601 under id 'x'; the answer must carry id 'y'"
    )
    assert _shot(good, UNKNOWN, Demand("none")) == (
        "answered (error -32601 under id 'x'); the rule wants no reply"
    )
    ping = b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}'
    twice = FunctionTarget(tiny_server(duplicate="tools/list"))
    assert _shot(twice, ping, Demand("result", (), ("x",))) == (
        "2 answers (a result under id 'x'; a result under id 'x'); one is due"
    )
    quiet = FunctionTarget(tiny_server(silent="tools/list"))
    assert _shot(quiet, ping, Demand("result", (), ("x",))) == "no answer"
    assert _shot(good, ping, Demand("error")) == (
        "answered with a result under id 'x'; the rule wants an error"
    )


def test_the_mirror_names_what_the_peer_breaks() -> None:
    with Conversation(FunctionTarget(tiny_server(duplicate="tools/list")), "2025-11-25") as conv:
        assert conv.open_session()
        answer = conv.request("tools/list")
        assert isinstance(answer, Response)
        conv.barrier()
    (violation,) = conv.violations
    assert violation.rule == "response.unknown-id"
    assert violation.exchange[-1].side == "peer"


def test_a_silent_peer_is_reported_not_waited_on() -> None:
    target = FunctionTarget(lambda: lambda line: [])
    with Conversation(target, "2025-11-25", timeout=0.2, startup=0.2) as conv:
        assert not conv.open_session()
    assert [v.rule for v in conv.violations] == ["response.missing"]
    assert "within 0.2 s" in conv.violations[0].message
    assert conv.dead


def test_a_peer_that_exits_is_reported() -> None:
    with Conversation(StdioTarget([sys.executable, "-c", "pass"]), "2025-11-25") as conv:
        assert not conv.open_session()
    assert [v.rule for v in conv.violations] == ["response.missing"]
    assert "closed" in conv.violations[0].message
    assert conv.lines[-1].render() == ".. exit status 0"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_every_canonical_shot_passes_against_our_example_server(version: str) -> None:
    with Conversation(ConnectionTarget(), version) as conv:
        assert conv.open_session()
        fired = 0
        for name, build in shot_builders().items():
            shot = build(conv, canonical)
            if isinstance(shot, str):
                continue
            assert shot.rule == name
            assert conv.shoot(shot) is None, (name, [line.render() for line in conv.lines])
            fired += 1
    assert fired >= 10
    assert conv.violations == []


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(near_misses("2025-11-25"))
def test_scripted_near_misses_replay_against_our_example_server(nm: NearMiss) -> None:
    caps = {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "completions": {},
        "logging": {},
    }
    if nm.receiver_initiates or nm.expect.reply not in ("error", "none") or not agrees(nm, caps):
        return
    if nm.rule == "envelope.oversized-message":
        return  # a 4 MiB line: the deterministic check covers it
    problem, lines = replay(ConnectionTarget(), nm, timeout=5)
    assert problem is None, (nm.rule, nm.note, [line.render() for line in lines])


def test_classify() -> None:
    assert classify("Invalid response: id 3 answers no request of ours in flight") == (
        "response.unknown-id"
    )
    assert classify("Invalid request: progress must increase (1 after 2)") == (
        "progress.not-increasing"
    )
    assert classify(
        "Method not found: 'notifications/tools/list_changed' needs the server capability "
        "'tools.listChanged', which the server did not declare"
    ) == ("capability.undeclared-notification")
    assert classify(
        "Method not found: 'roots/list' needs the client capability 'roots', which the "
        "client did not declare"
    ) == ("capability.undeclared-client-capability")
    assert classify("Parse error: unexpected end of data") == "envelope.parse-error"
    assert (
        classify(
            "Invalid request: 'notifications/message' is not allowed from the server in state IDLE",
            notification="notifications/message",
        )
        == "lifecycle.notification-before-initialized"
    )
    assert classify("something new") == "peer.invalid-message"


def test_lines_render_cut_and_as_json() -> None:
    line = WireLine("peer", b"x" * 1000)
    assert line.render(10) == "<- xxxxxxxxxx... (1000 bytes in all)"
    assert WireLine("probe", b"{}").render() == "-> {}"
    assert WireLine("note", b"HTTP 202").render() == ".. HTTP 202"
    assert line.to_json(4) == {"side": "peer", "text": "xxxx", "size": 1000}
    assert orjson.loads(orjson.dumps(WireLine("probe", b"\xff").to_json()))["text"] == "\\xff"


# ---------------------------------------------------------------------- targets


def test_targets_refuse_what_they_cannot_use() -> None:
    with pytest.raises(TargetError, match="no command"):
        StdioTarget([])
    with pytest.raises(TargetError, match="cannot start"):
        StdioTarget(["/nonexistent/server"]).open()
    with pytest.raises(TargetError, match="not a loopback address"):
        HttpTarget("http://192.0.2.1:8080/mcp")
    with pytest.raises(TargetError, match="not an http:// URL"):
        HttpTarget("https://127.0.0.1/mcp")
    with pytest.raises(TargetError, match="cannot connect"):
        HttpTarget("http://127.0.0.1:1/mcp").open()


def test_targets_are_targets() -> None:
    for target in (
        StdioTarget([sys.executable]),
        ConnectionTarget(),
        FunctionTarget(tiny_server(), name="tiny"),
    ):
        assert isinstance(target, Target)
        assert target.describe()
    assert FunctionTarget(tiny_server(), name="tiny").describe() == "in-process: tiny"


def test_a_process_channel_keeps_stderr_and_shuts_down() -> None:
    code = "import sys; sys.stderr.write('hello'); sys.stderr.flush(); sys.stdin.read()"
    channel = StdioTarget([sys.executable, "-c", code]).open()
    channel.send(b'{"jsonrpc":"2.0","method":"x"}')
    assert channel.receive(0.2) is None
    assert channel.close() == "exit status 0"
    assert channel.stderr == "hello"
    assert channel.close() == "exit status 0"  # idempotent
