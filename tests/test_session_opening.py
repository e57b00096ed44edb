"""Opening a client session, sans-IO: what happens when the server never answers, and when
the probe is refused."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from helpers import sent

from mcp_sansio.session import CallFinished, ClientSession, McpError, RequestTimeout


def test_a_2026_only_client_has_no_fallback_its_discover_just_times_out() -> None:
    session = ClientSession(versions=["2026-07-28"], timeout=5.0, probe_timeout=0.5)
    (discover,) = sent(session.open(0.0))
    assert discover["method"] == "server/discover"
    # Not a probe: the probe timeout does not apply.
    assert session.next_deadline() == pytest.approx(5.0)
    actions = session.expire(5.0)
    assert [m["method"] for m in sent(actions)] == ["notifications/cancelled"]
    (finished,) = [a for a in actions if isinstance(a, CallFinished)]
    assert isinstance(finished.call.error, RequestTimeout)
    assert not session.is_open


def test_a_client_of_both_eras_falls_back_to_initialize_when_its_probe_times_out() -> None:
    session = ClientSession(timeout=5.0, probe_timeout=0.5)
    (probe,) = sent(session.open(0.0))
    assert probe["method"] == "server/discover"
    assert session.next_deadline() == pytest.approx(0.5)
    actions = session.expire(0.5)
    assert [m["method"] for m in sent(actions)] == ["initialize"]
    assert not any(isinstance(a, CallFinished) for a in actions)


def _refuse(session: ClientSession, probe: dict[str, Any], data: dict[str, Any]) -> list[Any]:
    error = {"code": -32000, "message": "authorization failed: token request: x", "data": data}
    line = orjson.dumps({"jsonrpc": "2.0", "id": probe["id"], "error": error}) + b"\n"
    return session.receive_data(line, 1.0)


def test_a_probe_refused_for_want_of_authorization_fails_the_opening_with_no_fallback() -> None:
    """The HTTP client's failed flow (data.authorization) is no answer of the server's, so
    it says nothing of the era: ``initialize`` would meet the same 401 (and a person would
    be asked again), so the opening fails with the error the runtime turns into the flow's
    AuthError."""
    session = ClientSession(timeout=5.0, probe_timeout=0.5)
    (probe,) = sent(session.open(0.0))
    data = {"status": 401, "authorization": {"failure": 1, "step": "token request"}}
    actions = _refuse(session, probe, data)
    assert sent(actions) == []
    (finished,) = [a for a in actions if isinstance(a, CallFinished)]
    assert isinstance(finished.call.error, McpError)
    assert finished.call.error.data == data
    assert session.opening is None
    assert not session.is_open


@pytest.mark.parametrize(
    "data",
    [
        {"status": 401},  # a 401 no flow answered: the server's own refusal
        {"status": 400, "authorization": "a server's word"},  # not the transport's mark
    ],
)
def test_any_other_error_to_the_probe_still_falls_back(data: dict[str, Any]) -> None:
    session = ClientSession(timeout=5.0, probe_timeout=0.5)
    (probe,) = sent(session.open(0.0))
    actions = _refuse(session, probe, data)
    assert [m["method"] for m in sent(actions)] == ["initialize"]
    assert not any(isinstance(a, CallFinished) for a in actions)
