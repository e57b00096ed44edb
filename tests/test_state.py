"""The lifecycle tables (``_state``): complete, consistent, and the lifecycle the spec
describes (MCP 2025-11-25, Base Protocol > Lifecycle and Utilities > Ping; the 2026-07-28 era
and the dual-era probe: MCP 2026-07-28, Base Protocol > Versioning and Compatibility)."""

from __future__ import annotations

from collections import deque

import pytest

from mcp_sansio._state import (
    ANY,
    LIFECYCLE_METHODS,
    NOTIFICATIONS_ALLOWED,
    REQUESTS_ALLOWED,
    TRANSITIONS,
    Every,
    Role,
    State,
    Trigger,
)
from mcp_sansio._versions import VERSIONS

EVERY_METHOD = {name for spec in VERSIONS.values() for name in spec.methods}


def test_roles() -> None:
    assert Role.CLIENT.peer is Role.SERVER
    assert Role.SERVER.peer is Role.CLIENT


def test_every_state_has_transitions_and_permissions() -> None:
    assert set(TRANSITIONS) == set(State)
    for table in (REQUESTS_ALLOWED, NOTIFICATIONS_ALLOWED):
        assert set(table) == {(state, role) for state in State for role in Role}


def test_the_transition_graph() -> None:
    edges = {
        (state, trigger, target)
        for state, moves in TRANSITIONS.items()
        for trigger, target in moves.items()
    }
    assert edges == {
        (State.IDLE, Trigger.INITIALIZE, State.INITIALIZING),
        (State.INITIALIZING, Trigger.INITIALIZE_RESULT, State.INITIALIZED),
        (State.INITIALIZING, Trigger.INITIALIZE_ERROR, State.IDLE),
        (State.INITIALIZED, Trigger.INITIALIZED, State.OPERATING),
        (State.IDLE, Trigger.PROBE, State.PROBING),
        (State.PROBING, Trigger.PROBE_MODERN, State.STATELESS),
        (State.PROBING, Trigger.PROBE_LEGACY, State.IDLE),
        (State.IDLE, Trigger.STATELESS_REQUEST, State.STATELESS),
        (State.STATELESS, Trigger.STATELESS_REQUEST, State.STATELESS),
    }


def test_every_state_is_reachable_and_every_trigger_used() -> None:
    seen = {State.IDLE}
    todo = deque([State.IDLE])
    while todo:
        for target in TRANSITIONS[todo.popleft()].values():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    assert seen == set(State)
    used = {trigger for moves in TRANSITIONS.values() for trigger in moves}
    assert used == set(Trigger)


def test_final_states() -> None:
    """The handshake cannot be undone once done; the stateless era is never left."""
    assert TRANSITIONS[State.OPERATING] == {}
    assert set(TRANSITIONS[State.STATELESS].values()) == {State.STATELESS}


@pytest.mark.parametrize("table", [REQUESTS_ALLOWED, NOTIFICATIONS_ALLOWED])
def test_explicit_sets_name_real_methods(table: dict[tuple[State, Role], object]) -> None:
    for allowed in table.values():
        names = allowed.also if isinstance(allowed, Every) else allowed
        assert isinstance(names, frozenset)
        assert names <= EVERY_METHOD
        if isinstance(allowed, Every):  # ANY never needs to name a method that is not lifecycle
            assert names <= LIFECYCLE_METHODS


def test_any_once_the_server_has_answered_initialize() -> None:
    """Everything is open once the handshake is done; in the initialize window (the result
    is out, notifications/initialized is not in), the client's side is open already and
    the server's is not: "The client SHOULD NOT send requests other than pings before the
    server has responded to the initialize request"; "The server SHOULD NOT send requests
    other than pings and logging before receiving the initialized notification"."""
    for table in (REQUESTS_ALLOWED, NOTIFICATIONS_ALLOWED):
        for (state, role), allowed in table.items():
            # Notifications are open to both sides in the window (the text restricts
            # requests only); requests to the client's side.
            window = state is State.INITIALIZED and (
                role is Role.CLIENT or table is NOTIFICATIONS_ALLOWED
            )
            assert isinstance(allowed, Every) == (
                state in (State.OPERATING, State.STATELESS) or window
            ), (state, role)


def test_lifecycle_methods() -> None:
    assert {"initialize", "notifications/initialized"} == LIFECYCLE_METHODS


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("state", [State.IDLE, State.INITIALIZING, State.INITIALIZED])
def test_ping_both_ways_before_the_handshake_is_done(role: Role, state: State) -> None:
    allowed = REQUESTS_ALLOWED[(state, role)]
    assert isinstance(allowed, Every) or "ping" in allowed


def test_before_the_initialize_result_only_ping_and_the_first_initialize() -> None:
    assert REQUESTS_ALLOWED[(State.IDLE, Role.CLIENT)] == frozenset({"initialize", "ping"})
    for role in Role:
        assert REQUESTS_ALLOWED[(State.INITIALIZING, role)] == frozenset({"ping"})
    assert REQUESTS_ALLOWED[(State.IDLE, Role.SERVER)] == frozenset({"ping"})
    assert REQUESTS_ALLOWED[(State.INITIALIZED, Role.SERVER)] == frozenset({"ping"})
    assert REQUESTS_ALLOWED[(State.INITIALIZED, Role.CLIENT)] == ANY


def test_initialized_only_from_the_client_after_the_result() -> None:
    for (state, role), allowed in NOTIFICATIONS_ALLOWED.items():
        names = allowed.also if isinstance(allowed, Every) else allowed
        has = "notifications/initialized" in names
        assert has == (state is State.INITIALIZED and role is Role.CLIENT), (state, role)


def test_server_may_log_before_initialized() -> None:
    allowed = NOTIFICATIONS_ALLOWED[(State.INITIALIZING, Role.SERVER)]
    assert not isinstance(allowed, Every)
    assert "notifications/message" in allowed
    assert NOTIFICATIONS_ALLOWED[(State.INITIALIZED, Role.SERVER)] == ANY
    client = NOTIFICATIONS_ALLOWED[(State.INITIALIZING, Role.CLIENT)]
    assert not isinstance(client, Every)
    assert "notifications/message" not in client


def test_no_new_request_while_probing() -> None:
    """While a client probes, it sends no request; a legacy server that has not seen the
    probe yet may still ping. Progress and cancellation of the pings in flight go on (a ping
    the client sent in IDLE may carry a progress token: the stateful machine found that a
    server's progress for it was refused once the client probed)."""
    assert REQUESTS_ALLOWED[(State.PROBING, Role.CLIENT)] == frozenset()
    assert REQUESTS_ALLOWED[(State.PROBING, Role.SERVER)] == frozenset({"ping"})


def test_cancel_and_progress_before_the_handshake() -> None:
    for state in (State.IDLE, State.PROBING, State.INITIALIZING, State.INITIALIZED):
        for role in Role:
            allowed = NOTIFICATIONS_ALLOWED[(state, role)]
            if isinstance(allowed, Every):  # the initialize window: all of them
                assert state is State.INITIALIZED
                continue
            assert {"notifications/cancelled", "notifications/progress"} <= allowed
