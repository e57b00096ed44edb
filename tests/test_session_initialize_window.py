"""The initialize window, through the sessions, in every initialize-era version: after the
server has answered ``initialize`` and before ``notifications/initialized`` arrives.

MCP, Basic > Lifecycle > Initialization (2024-11-05 to 2025-11-25): "The client SHOULD NOT
send requests other than pings before the server has responded to the initialize request"
(so once it has, the client may), and "The server SHOULD NOT send requests other than pings
and logging before receiving the initialized notification" (a duty of the server's, not a
reason for the client to refuse one). Over Streamable HTTP the two POSTs can arrive in either
order, so a server meets a request before ``notifications/initialized`` in normal use.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers import sent, state_of

from mcp_sansio import State
from mcp_sansio.example import build_server
from mcp_sansio.session import (
    CallFinished,
    ClientSession,
    HandleJob,
    PeerNotification,
    Send,
    ServerSession,
)

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def _line(message: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def _hello(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "window-test", "version": "0"},
    }


def _decode(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines()]


def _run_jobs(session: ServerSession, actions: list[Any]) -> list[Any]:
    """Run the handlers the actions ask for (the example's list handlers are plain
    functions), and return the answers they make."""
    answers: list[Any] = []
    for action in actions:
        if isinstance(action, HandleJob):
            job = action.job
            assert not job.is_async, job
            value = job.handler(None, *job.args)
            answers += _decode(session.finish(job, value))
        elif isinstance(action, Send):
            answers += sent([action])
    return answers


@pytest.mark.parametrize("version", LEGACY)
def test_the_server_session_serves_a_request_before_initialized(version: str) -> None:
    session = ServerSession(build_server(), versions=[version])
    (result,) = sent(
        session.receive_data(
            _line({"id": 0, "method": "initialize", "params": _hello(version)}), 0.0
        )
    )
    assert result["id"] == 0
    assert result["result"]["protocolVersion"] == version
    assert state_of(session.connection) is State.INITIALIZED
    # tools/list, then ping, overtaking notifications/initialized (as two HTTP POSTs may).
    actions = session.receive_data(
        _line({"id": 1, "method": "tools/list"}) + _line({"id": 2, "method": "ping"}), 0.0
    )
    answers = {a["id"]: a for a in _run_jobs(session, actions)}
    assert set(answers) == {1, 2}, answers
    assert "error" not in answers[1], answers[1]
    assert [t["name"] for t in answers[1]["result"]["tools"]]
    assert answers[2]["result"] == {}
    assert state_of(session.connection) is State.INITIALIZED
    assert sent(session.receive_data(_line({"method": "notifications/initialized"}), 0.0)) == []
    assert state_of(session.connection) is State.OPERATING
    actions = session.receive_data(_line({"id": 3, "method": "tools/list"}), 0.0)
    assert [a["id"] for a in _run_jobs(session, actions)] == [3]


@pytest.mark.parametrize("version", LEGACY)
def test_the_server_session_still_refuses_before_the_initialize_result(version: str) -> None:
    """Before the server has answered ``initialize`` there is no agreed version to serve
    the request under: it is refused with an error, which the text leaves to the server."""
    session = ServerSession(build_server(), versions=[version])
    (refusal,) = sent(session.receive_data(_line({"id": 1, "method": "tools/list"}), 0.0))
    assert refusal["id"] == 1
    assert "error" in refusal


@pytest.mark.parametrize("version", LEGACY)
def test_the_client_session_takes_a_server_request_sent_before_initialized_arrived(
    version: str,
) -> None:
    """The server's request right behind its initialize result (it has not received
    ``notifications/initialized`` yet: its own SHOULD NOT) reaches the client session,
    which answers it: the client has sent ``initialized`` by the time it reads it."""
    roots = {"roots": [{"uri": "file:///w", "name": "w"}]}
    session = ClientSession(versions=[version], handlers={"roots/list": lambda ctx, params: roots})
    (hello,) = sent(session.open(0.0))
    assert hello["method"] == "initialize"
    result = {
        "protocolVersion": version,
        "capabilities": {"logging": {}},
        "serverInfo": {"name": "s", "version": "0"},
    }
    data = (
        _line({"id": hello["id"], "result": result})
        + _line({"id": "s1", "method": "roots/list"})
        + _line({"method": "notifications/message", "params": {"level": "info", "data": 1}})
    )
    actions = session.receive_data(data, 0.0)
    out = sent(actions)
    assert out[0] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert any(isinstance(a, CallFinished) for a in actions)
    answers = [m for m in out if m.get("id") == "s1"]
    if not answers:  # the handler runs as a job, as the adapters run it
        (job,) = [a.job for a in actions if isinstance(a, HandleJob)]
        answers = _decode(session.finish(job, job.handler(None, *job.args)))
    assert answers == [{"jsonrpc": "2.0", "id": "s1", "result": roots}]
    assert [a.notification.method for a in actions if isinstance(a, PeerNotification)] == [
        "notifications/message"
    ]
    assert state_of(session.connection) is State.OPERATING
