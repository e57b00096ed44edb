"""Every example of the table of refusals (``mcp_sansio.testing._refusals``), run on a real
pair of Connections: the answer the table states, under the default ``Config`` and under
``strict=True`` (a strict-only row: accepted by default, refused as stated under strict).
The docs page of refusals is generated from the same table, so it is what the Connection
does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from _pair import transfer

from mcp_sansio import (
    NEED_DATA,
    Connection,
    Event,
    InvalidMessage,
    Notification,
    RemoteProtocolError,
    Request,
    Response,
    Role,
)
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._refusal_model import ANY_ID, Example, Refusal
from mcp_sansio.testing._refusals_late import REFUSALS

_CLIENT_INFO = {"name": "refusal-client", "version": "1"}
_SERVER_INFO = {"name": "refusal-server", "version": "1"}

CASES = [
    pytest.param(row, example, id=f"{n}-{i}-{example.version}-{example.receiver.value}")
    for n, row in enumerate(REFUSALS)
    for i, example in enumerate(row.examples)
]


def _event(message: Mapping[str, Any]) -> Event:
    if "method" in message:
        if "id" in message:
            return Request(id=message["id"], method=message["method"], params=message.get("params"))
        return Notification(method=message["method"], params=message.get("params"))
    return Response(id=message["id"], result=message["result"])


def _pass(sender: Connection, receiver: Connection, event: Event) -> None:
    got = transfer(sender, receiver, event)
    assert not any(isinstance(e, InvalidMessage) for e in got), got


def _pair(ex: Example, strict: bool) -> tuple[Connection, Connection]:
    """The receiver and its peer, in the state the example leads up to."""
    sides: dict[Role, Connection] = {}
    for role, caps, info in (
        (Role.CLIENT, ex.client_capabilities, _CLIENT_INFO),
        (Role.SERVER, ex.server_capabilities, _SERVER_INFO),
    ):
        mine = role is ex.receiver
        versions = ex.receiver_versions if mine and ex.receiver_versions else (ex.version,)
        config: dict[str, Any] = dict(ex.config) if mine else {}
        sides[role] = Connection(
            role,
            versions=versions,
            capabilities=caps,
            implementation=info,
            strict=strict and mine,
            **config,
        )
    client, server = sides[Role.CLIENT], sides[Role.SERVER]
    if VERSIONS[ex.version].policy.handshake:
        opening: list[tuple[Connection, Connection, Event]] = [
            (
                client,
                server,
                Request(
                    id=0,
                    method="initialize",
                    params={
                        "protocolVersion": ex.version,
                        "capabilities": dict(ex.client_capabilities),
                        "clientInfo": _CLIENT_INFO,
                    },
                ),
            ),
            (
                server,
                client,
                Response(
                    id=0,
                    result={
                        "protocolVersion": ex.version,
                        "capabilities": dict(ex.server_capabilities),
                        "serverInfo": _SERVER_INFO,
                    },
                ),
            ),
            (client, server, Notification(method="notifications/initialized")),
        ]
        for sender, receiver, event in opening[: ex.handshake]:
            _pass(sender, receiver, event)
    elif client.era is None and ex.handshake:
        _pass(client, server, Request(id="discover", method="server/discover"))
        result = {
            "resultType": "complete",
            "supportedVersions": [ex.version],
            "capabilities": dict(ex.server_capabilities),
            "ttlMs": 0,
            "cacheScope": "public",
        }
        _pass(server, client, Response(id="discover", result=result))
    for who, message in ex.lead:
        _pass(sides[who], sides[who.peer], _event(message))
    return sides[ex.receiver], sides[ex.receiver.peer]


def _line(ex: Example) -> bytes:
    if isinstance(ex.line, bytes):
        return ex.line if ex.eof or ex.line.endswith(b"\n") else ex.line + b"\n"
    return orjson.dumps(ex.line) + b"\n"


def _run(ex: Example, strict: bool) -> Any:
    """What the receiver's ``next_event()`` gives for the line (the exception, if any)."""
    receiver, _ = _pair(ex, strict)
    receiver.receive_data(_line(ex))
    if ex.eof:
        receiver.receive_data(b"")
    try:
        return receiver.next_event()
    except RemoteProtocolError as error:
        return error


def _check(ex: Example, got: Any) -> None:
    if ex.outcome == "fatal":
        assert isinstance(got, RemoteProtocolError), got
        return
    if ex.outcome == "ignored":
        assert got is NEED_DATA, got
        return
    assert isinstance(got, InvalidMessage), got
    if ex.code is not None:
        assert got.code == ex.code, got
    if ex.outcome == "dropped":
        assert got.reply is None, got
        return
    assert got.reply is not None, got
    assert got.reply.code == got.code
    if ex.reply_id is not ANY_ID:
        assert got.reply.id == ex.reply_id, got
        assert type(got.reply.id) is type(ex.reply_id), got


@pytest.mark.parametrize(("row", "example"), CASES)
def test_default(row: Refusal, example: Example) -> None:
    got = _run(example, strict=False)
    if example.strict_only:
        assert not isinstance(got, (InvalidMessage, RemoteProtocolError)), got
        assert got is not NEED_DATA
    else:
        _check(example, got)


@pytest.mark.parametrize(("row", "example"), CASES)
def test_strict(row: Refusal, example: Example) -> None:
    _check(example, _run(example, strict=True))


@pytest.mark.parametrize("row", REFUSALS, ids=lambda r: r.sends[:40])
def test_row_is_complete(row: Refusal) -> None:
    assert row.examples, row.sends
    assert row.levels
    assert row.why
    assert bool(row.citations) == ("ours" not in row.levels), row.sends
    assert ("strict" in row.why) == any(ex.strict_only for ex in row.examples), row.sends
    for ex in row.examples:
        assert ex.version in VERSIONS
        if row.citations:
            # The sentences cited are in the text of the example's version.
            assert any(c.covers(ex.version) for c in row.citations), (row.sends, ex.version)
    for c in row.citations:
        assert c.document != "MCP" or (c.versions and set(c.versions) <= set(VERSIONS)), c


def test_a_wrong_answer_fails() -> None:
    """The check itself can fail: the first row's example with another code."""
    ex = REFUSALS[0].examples[0]
    wrong = Example(ex.version, ex.receiver, ex.line, "reply", ex.code + 1 if ex.code else 1)
    with pytest.raises(AssertionError):
        _check(wrong, _run(wrong, strict=False))
    with pytest.raises(AssertionError):
        _check(Example(ex.version, ex.receiver, ex.line, "dropped"), _run(ex, strict=False))
