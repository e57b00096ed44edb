"""The near-miss strategies of :mod:`mcp_sansio.testing`, judged by our own Connection.

For every rule of :data:`~mcp_sansio.testing.RULES` and every (version, receiver) it
applies to:

(a) ``test_near_miss_is_refused``: our :class:`Connection` in the receiving role, fed the
    near miss's exchange and then its message, does exactly what the rule says: one
    :class:`InvalidMessage` with the rule's code whose reply goes to the expected id (and,
    once sent, passes :meth:`Expect.check`); or no reply at all; or a normal request; or,
    for ``"close"``, :class:`RemoteProtocolError`;
(b) ``test_repaired_is_accepted``: the near miss's repaired script is accepted (no
    :class:`InvalidMessage`), so the near miss breaks that one rule only; and every line
    of the script, and the repaired message, validates against the version's
    ``schema.json``.

``params.invalid`` has its own test, one case per (version, receiver, method), so that
every request whose schema requires params is covered (``tools/call`` without ``name``,
``sampling/createMessage`` with a string ``maxTokens``, ...).

The sampled check of the *valid* message strategies against each version's schema lives in
``tests/test_types_roundtrip.py`` (``test_message_round_trip``: ``messages(version)`` of
every version, validated with ``jsonschema`` against ``JSONRPCMessage``).

Examples per case: :data:`EXAMPLES` (a twenty-fifth of the profile's ``max_examples``, at
least 4) and :data:`REPAIR_EXAMPLES`; about 215 cases, so the file takes ~30 s.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sansio import (
    InvalidMessage,
    LocalProtocolError,
    Notification,
    RemoteProtocolError,
    Request,
    Response,
    Role,
)
from mcp_sansio._versions import VERSIONS, Era, Kind
from mcp_sansio.testing import (
    MIN_MESSAGE_SIZE,
    RULES,
    Expect,
    NearMiss,
    full_capabilities,
    load_schema,
    near_misses,
    rule,
    rules_for,
)
from mcp_sansio.testing._faults._ground import methods_of
from mcp_sansio.testing._schema_strategies import _method_definitions
from mcp_sansio.testing._script import Ctx
from mcp_sansio.testing._script_faults import params_invalid_near

EXAMPLES = max(4, settings().max_examples // 25)
REPAIR_EXAMPLES = max(3, settings().max_examples // 33)
SIZE = MIN_MESSAGE_SIZE  # the receiver's limit for envelope.oversized-message

CASES = sorted(
    (name, version, receiver.value)
    for name, r in RULES.items()
    for version, receiver in r.cases
    if name != "params.invalid"
)
ALL_CASES = sorted(
    (name, version, receiver.value) for name, r in RULES.items() for version, receiver in r.cases
)


def _case_id(case: tuple[str, ...]) -> str:
    return "-".join(case)


def _params_cases() -> list[tuple[str, str, str]]:
    """(version, receiver, method) for params.invalid: every request with required params."""
    out = []
    for version, receiver in sorted(RULES["params.invalid"].cases, key=str):
        spec = VERSIONS[version]
        methods = [
            m for m in methods_of(spec, receiver.peer, Kind.REQUEST) if m in spec.required_params
        ]
        if spec.era is Era.INITIALIZE and receiver is Role.SERVER:
            methods.append("initialize")
        out += [(version, receiver.value, m) for m in methods]
    return out


_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _strategy(name: str, version: str, receiver: str) -> st.SearchStrategy[NearMiss]:
    return near_misses(version, sender=Role(receiver).peer, rules=[name], max_message_size=SIZE)


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def check_refused(near: NearMiss) -> None:
    """(a): the receiver does what the rule says with the message."""
    expect = near.expect
    assert expect.reply == rule(near.rule).reply
    assert near.message.endswith(b"\n")
    assert near.message.count(b"\n") == 1
    # strict: the near misses of rules whose duty is the sender's (a SHOULD it breaks) are
    # accepted by a default Connection, the receiver's choice; strict refuses them all.
    conn = near.connection(strict=True)
    if expect.reply == "close":
        with pytest.raises(RemoteProtocolError):
            near.play(conn)
        return
    events = near.play(conn)
    if expect.reply == "error":
        assert expect.code == rule(near.rule).code
        assert len(events) == 1, events
        event = events[0]
        assert isinstance(event, InvalidMessage), event
        if expect.code is not None:
            assert event.code == expect.code, (event, near.note)
        assert event.reply is not None, event
        assert event.reply.code == event.code
        assert _same_id(event.reply.id, expect.id), (event, expect, near.note)
        wire = orjson.loads(conn.send(event.reply))
        assert expect.check([wire]) is None, (expect.check([wire]), near.note)
    elif expect.reply == "none":
        assert all(isinstance(e, InvalidMessage) and e.reply is None for e in events), events
        assert expect.check([]) is None
        if expect.pending is not None:
            assert expect.pending in conn.owed
    else:
        assert len(events) == 1, events
        request = events[0]
        assert isinstance(request, Request), (request, near.note)
        assert _same_id(request.id, expect.id)
        answer_as_application(near, conn, request)


def answer_as_application(near: NearMiss, conn: Any, request: Request) -> None:
    """A ``"result"`` rule: the receiver's application answers, and the Connection lets
    only a correct answer out (for initialize, one naming a version it speaks)."""
    result: dict[str, Any]
    if request.method == "initialize":
        wrong = {
            "protocolVersion": request.params["protocolVersion"],
            "capabilities": dict(near.server_capabilities),
            "serverInfo": {"name": "s", "version": "1"},
        }
        with pytest.raises(LocalProtocolError):
            conn.send(Response(id=request.id, result=wrong))
        result = dict(wrong, protocolVersion=near.version)
    elif request.method == "server/discover":
        result = conn.discover_result()
    else:
        result = {}
    wire = orjson.loads(conn.send(Response(id=request.id, result=result)))
    assert near.expect.check([wire]) is None, near.expect.check([wire])


@pytest.mark.parametrize(("name", "version", "receiver"), CASES, ids=map(_case_id, CASES))
@_SETTINGS
@given(data=st.data())
def test_near_miss_is_refused(name: str, version: str, receiver: str, data: st.DataObject) -> None:
    near = data.draw(_strategy(name, version, receiver), label="near miss")
    assert (near.rule, near.version, near.receiver) == (name, version, Role(receiver))
    check_refused(near)


# ---------------------------------------------------------------------------- params.invalid


def _params_strategy(version: str, receiver: str, method: str) -> st.SearchStrategy[NearMiss]:
    ctx = Ctx(VERSIONS[version], Role(receiver).peer, SIZE)
    return params_invalid_near(ctx, frozenset({method}))


_PARAMS_CASES = _params_cases()


@pytest.mark.parametrize(
    ("version", "receiver", "method"), _PARAMS_CASES, ids=map(_case_id, _PARAMS_CASES)
)
@_SETTINGS
@given(data=st.data())
def test_params_invalid_is_refused(
    version: str, receiver: str, method: str, data: st.DataObject
) -> None:
    near = data.draw(_params_strategy(version, receiver, method), label="near miss")
    assert near.rule == "params.invalid"
    check_refused(near)


# ---------------------------------------------------------------------------- (b) repaired


@functools.cache
def _validator(version: str, name: str) -> Any:
    schema = load_schema(version)
    key = "definitions" if "definitions" in schema else "$defs"
    return jsonschema.validators.validator_for(schema)({**schema, "$ref": f"#/{key}/{name}"})


def validate_message(version: str, data: bytes) -> None:
    """One line against the schema: a request or notification against its own
    definition, anything else (answers, batches) against ``JSONRPCMessage``."""
    value = orjson.loads(data)
    members = value if isinstance(value, list) else [value]
    for member in members:
        definition = _method_definitions(version).get(member.get("method"), "JSONRPCMessage")
        _validator(version, definition).validate(member)


@pytest.mark.parametrize(("name", "version", "receiver"), ALL_CASES, ids=map(_case_id, ALL_CASES))
@settings(
    max_examples=REPAIR_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_repaired_is_accepted(name: str, version: str, receiver: str, data: st.DataObject) -> None:
    near = data.draw(_strategy(name, version, receiver), label="near miss")
    for line in near.exchange:
        assert line.data.endswith(b"\n")
        assert line.data.count(b"\n") == 1
        validate_message(version, line.data)
    repaired = near.repaired
    if repaired is None:
        # Only where no valid counterpart exists: a response or request to a 2026 party
        # that never asks or is never asked.
        assert name in UNREPAIRABLE, name
        assert VERSIONS[version].era is Era.STATELESS
        return
    assert (repaired.version, repaired.sender) == (near.version, near.sender)
    for line in repaired.exchange:
        validate_message(version, line.data)
    validate_message(version, repaired.message)
    events = repaired.play()
    assert not any(isinstance(e, InvalidMessage) for e in events), (events, near.note)
    fixed = orjson.loads(repaired.message)
    if isinstance(fixed, dict) and "id" in fixed and "method" in fixed:
        # A repaired request reaches the application, under its own id.
        assert [(type(e.id), e.id) for e in events if isinstance(e, Request)] == [
            (type(fixed["id"]), fixed["id"])
        ], (events, near.note)


UNREPAIRABLE = frozenset(
    {
        "envelope.invalid-response",
        "response.unknown-id",
        "method.unknown",
        "method.wrong-direction",
        "stateless.server-request",
    }
)


# ---------------------------------------------------------------------------- the catalog


def test_every_rule_has_cases_and_a_documented_code() -> None:
    for r in RULES.values():
        assert r.cases, r.name
        assert r.summary
        assert r.level in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "implied", "ours")
        if r.reply != "error":
            assert r.code is None, r.name
        assert r.eras
        assert r.roles
        assert r.versions
        for version, receiver in r.cases:
            assert r.applies(version, receiver)
            assert r in rules_for(version, receiver)


def test_rule_lookup() -> None:
    assert rule("envelope.parse-error").code == -32700
    with pytest.raises(KeyError, match="known rules"):
        rule("no.such-rule")


def test_where_rules_apply_comes_from_the_tables() -> None:
    batch_versions = {v for v, spec in VERSIONS.items() if spec.batches}
    assert set(RULES["envelope.empty-batch"].versions) == batch_versions
    assert not set(RULES["envelope.batch-not-allowed"].versions) & batch_versions
    modern = {v for v, spec in VERSIONS.items() if spec.era is Era.STATELESS}
    assert set(RULES["meta.missing"].versions) == modern
    assert RULES["meta.missing"].roles == {Role.SERVER}
    # 2026: a server sends no requests, so a client has no duplicate ids to catch.
    assert not any(RULES["ids.duplicate-request-id"].applies(v, Role.CLIENT) for v in modern)
    assert RULES["capability.undeclared-client-capability"].eras == {Era.INITIALIZE}


def test_near_misses_arguments() -> None:
    with pytest.raises(ValueError, match="at least"):
        near_misses("2025-06-18", max_message_size=10)
    with pytest.raises(ValueError, match="none of the rules"):
        near_misses("2025-06-18", rules=["meta.missing"])
    with pytest.raises(KeyError):
        near_misses("2025-06-18", rules=["no.such-rule"])
    with pytest.raises(KeyError):
        near_misses("1999-01-01")


def test_full_capabilities_come_from_the_schema() -> None:
    caps = full_capabilities("2025-11-25", Role.CLIENT)
    assert caps["elicitation"] == {"form": {}, "url": {}}
    assert caps["roots"] == {"listChanged": True}
    assert "elicitation" not in full_capabilities("2025-03-26", Role.CLIENT)
    assert full_capabilities("2024-11-05", Role.SERVER)["resources"] == {
        "listChanged": True,
        "subscribe": True,
    }


def test_expect_check() -> None:
    error = Expect(reply="error", code=-32600, id=7)
    assert (
        error.check([{"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "x"}}])
        is None
    )
    assert "id" in (error.check([{"jsonrpc": "2.0", "id": "7", "error": {"code": -32600}}]) or "")
    assert "code" in (error.check([{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601}}]) or "")
    assert "exactly one" in (error.check([]) or "")
    assert error.check([[{"jsonrpc": "2.0", "id": 7, "error": {"code": -32600}}]]) is None
    assert "an error" in (error.check([{"jsonrpc": "2.0", "id": 7, "result": {}}]) or "")
    none = Expect(reply="none", pending=1)
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    assert none.check([log, {"jsonrpc": "2.0", "id": 1, "result": {}}]) is None
    assert "no reply" in (none.check([{"jsonrpc": "2.0", "id": 2, "result": {}}]) or "")
    result = Expect(reply="result", id=1, versions=frozenset({"2025-06-18"}))
    assert (
        result.check([{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}])
        is None
    )
    assert "protocolVersion" in (
        result.check([{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "x"}}]) or ""
    )
    assert "a result" in (result.check([{"jsonrpc": "2.0", "id": 1, "result": 3}]) or "")
    data = Expect(reply="error", id=1, data={"requested": "x"}, data_keys=("supported",))
    ok = {"code": 1, "message": "m", "data": {"requested": "x", "supported": []}}
    assert data.check([{"jsonrpc": "2.0", "id": 1, "error": ok}]) is None
    for bad in (None, {"requested": "y", "supported": []}, {"requested": "x"}):
        assert data.check([{"jsonrpc": "2.0", "id": 1, "error": dict(ok, data=bad)}])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_setup_is_the_senders_lines_and_receiver_lines_are_answers_for_a_server(
    data: st.DataObject,
) -> None:
    """What a harness driving a live server replays: the client's lines; the server's
    lines in a script for a server receiver are all answers or acknowledgements."""
    version = data.draw(st.sampled_from(sorted(VERSIONS)))
    near = data.draw(near_misses(version, sender=Role.CLIENT))
    assert near.setup == tuple(line.data for line in near.exchange if line.sender is Role.CLIENT)
    if not near.receiver_initiates:
        for line in near.exchange:
            if line.sender is Role.SERVER:
                obj = line.json()
                assert "id" not in obj or "method" not in obj
    events = near.play()
    assert (
        all(isinstance(e, (InvalidMessage, Request, Notification)) for e in events)
        or near.expect.reply == "close"
    )


def test_listen_flags_are_the_receivers() -> None:
    # The near misses keep the listen flags as a sender sees them; the Connection that
    # receives them has its own table: they must name the same flags and notifications.
    from mcp_sansio import _connection
    from mcp_sansio.testing._faults._ground import LISTEN_FLAGS

    assert dict(LISTEN_FLAGS) == dict(_connection._LISTEN_FLAGS)
