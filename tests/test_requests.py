"""The session's records (``mcp_sansio._requests``): one record per request in flight, one
table per direction, and the Session a refused batch puts back by one copy."""

from __future__ import annotations

from mcp_sansio import Config, Role, State
from mcp_sansio._ids import IdHistory, RecentIds
from mcp_sansio._requests import Listen, Pending, RequestTable, Session, with_meta
from mcp_sansio._versions import UNDECIDED


def _table() -> RequestTable:
    return RequestTable(IdHistory(16), RecentIds(16), RecentIds(16), RecentIds(16))


def test_add_and_retire_keep_the_indexes_and_counts() -> None:
    table = _table()
    first = Pending(1, "tools/call", {}, "t1", 5000)
    second = Pending("b", "ping", None, None, 0)
    second.rank = 3
    table.add(first)
    table.add(second)
    assert list(table.pending) == [1, "b"]
    assert table.tokens == {"t1": first}
    assert table.bytes == 5000
    assert table.lowest_rank() == 3
    assert table.retire(1) is first
    assert table.tokens == {}
    assert table.bytes == 0
    table.retire("b")
    assert table.lowest_rank() == -1
    assert table.ranks == [0] * len(table.ranks)


def test_owed_errors_are_counted_per_id() -> None:
    table = _table()
    table.remember_owed(7)
    table.remember_owed(7)
    table.forget_owed(7)
    assert 7 in table.owed
    table.forget_owed(7)
    assert 7 not in table.owed


def test_a_copy_shares_nothing_mutable() -> None:
    table = _table()
    entry = Pending(1, "subscriptions/listen", {"notifications": {}}, "t", 0)
    entry.listen = Listen({"toolsListChanged": True})
    table.add(entry)
    table.ids.add(1)
    copied = table.copy()
    # The copy's token index points at the copy's records.
    assert copied.tokens["t"] is copied.pending[1]
    assert copied.pending[1] is not entry
    copied.pending[1].progress = 5
    assert copied.pending[1].listen is not None
    copied.pending[1].listen.granted = frozenset({"x"})
    copied.retire(1)
    copied.ids.add(2)
    assert entry.progress is None
    assert entry.listen.granted is None
    assert list(table.pending) == [1]
    assert 2 not in table.ids


def test_with_meta_reads_the_2026_request() -> None:
    meta = {
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
        "io.modelcontextprotocol/logLevel": "warning",
    }
    entry = with_meta(Pending(1, "tools/call", {"_meta": meta}, None, 0), meta)
    assert entry.caps == {"sampling": {}}
    assert entry.rank >= 0
    params = {"notifications": {"toolsListChanged": True}, "_meta": meta}
    listen = with_meta(Pending(2, "subscriptions/listen", params, None, 0), meta)
    assert listen.rank == -1  # a listen's level is not counted
    assert listen.listen is not None
    assert listen.listen.wanted == {"toolsListChanged": True}


def test_a_session_copy_is_independent() -> None:
    session = Session(Config(role=Role.SERVER), Role.SERVER, UNDECIDED, State.IDLE)
    session.theirs.add(Pending(1, "ping", None, None, 0))
    session.subscriptions.add("file:///a")
    copied = session.copy()
    copied.theirs.retire(1)
    copied.subscriptions.discard("file:///a")
    copied.log_level = "error"
    assert list(session.theirs.pending) == [1]
    assert "file:///a" in session.subscriptions
    assert session.log_level is None
    assert copied.config is session.config
    assert copied.policy is session.policy
