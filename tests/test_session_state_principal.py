"""``ServerSession.state_principal``: the session seals its ``requestState`` for it and opens
a state only for it (the HTTP server's authorization sets it to the principal that opened
the session, so a state one user's round produced cannot be replayed by another)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sansio import LocalProtocolError
from mcp_sansio.server import Server
from mcp_sansio.session import Job, NeedInput, ServerSession

KEY = b"k" * 32


def _job(params: dict[str, Any]) -> Job:
    return Job(1, "tools/call", params, lambda *a: None, ())


class _Kept:
    """The session's seal, keeping each state it seals (and the principal it was given)."""

    def __init__(self, seal: Any) -> None:
        self.seal_ = seal
        self.sealed: list[tuple[str, str | None]] = []

    def seal(self, data: Any, **kw: Any) -> str:
        out: str = self.seal_.seal(data, **kw)
        self.sealed.append((out, kw.get("principal")))
        return out


def _state(principal: str | None) -> str:
    session = ServerSession(Server("s"), versions=["2026-07-28"], state_keys=KEY)
    session.state_principal = principal
    kept = session._seal = _Kept(session._seal)  # type: ignore[assignment]
    job = _job({"name": "t", "arguments": {}})
    job.inputs = {"k0": {"action": "accept"}}
    need = NeedInput("k1", {"method": "elicitation/create", "params": {}})
    # finish() seals the state, then answers through the connection, which has no such
    # request in flight here: the answer is refused, the state is sealed all the same
    with pytest.raises(LocalProtocolError):
        session.finish(job, None, need, 0.0)
    ((sealed, given),) = kept.sealed
    assert given == principal
    return sealed


def _restore(principal: str | None, state: str) -> dict[str, Any]:
    session = ServerSession(Server("s"), versions=["2026-07-28"], state_keys=KEY)
    session.state_principal = principal
    job = _job({"name": "t", "arguments": {}, "requestState": state})
    session._restore_inputs(job, 1.0)
    return dict(job.inputs)


def test_the_same_principal_gets_its_answers_back() -> None:
    assert _restore("alice", _state("alice")) == {"k0": {"action": "accept"}}


@pytest.mark.parametrize(("sealed_for", "opened_by"), [("alice", "mallory"), ("alice", None)])
def test_another_principal_is_refused(sealed_for: str, opened_by: str | None) -> None:
    from mcp_sansio.types import ValidationError

    with pytest.raises(ValidationError, match="another principal"):
        _restore(opened_by, _state(sealed_for))
