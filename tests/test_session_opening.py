"""Opening a client session, sans-IO: what happens when the server never answers."""

from __future__ import annotations

import pytest
from helpers import sent

from mcp_sansio.session import CallFinished, ClientSession, RequestTimeout


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
