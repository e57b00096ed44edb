"""``IdHistory``: the compact memory of used request ids (DESIGN.md, "Bounded memory"): a
contiguous run of integers plus a bounded set of the rest; past the bound the oldest of the
rest is forgotten (documented), and nothing that was never added is ever reported."""

from __future__ import annotations

import copy
import random
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from mcp_sansio import IdHistory
from mcp_sansio._ids import DEFAULT_ID_MEMORY_BYTES, RecentIds, Subscriptions, id_cost

Id = int | str


def _recent(history: IdHistory) -> int:
    """How many ids sit outside the run (white box: the bounded part of the memory)."""
    return len(history._recent)


def test_empty() -> None:
    history = IdHistory(10)
    assert len(history) == 0
    for rid in (0, 1, -1, "0", ""):
        assert rid not in history


def test_sequential_ids_cost_nothing() -> None:
    history = IdHistory(4)
    for rid in range(1000):
        assert rid not in history
        history.add(rid)
        assert rid in history
    assert len(history) == 1000
    assert _recent(history) == 0
    assert all(rid in history for rid in range(1000))
    assert 1000 not in history
    assert -1 not in history


def test_a_run_may_start_anywhere_and_grow_both_ways() -> None:
    history = IdHistory(4)
    for rid in (100, 101, 99, 98, 102):
        history.add(rid)
    assert _recent(history) == 0
    assert [r for r in range(95, 106) if r in history] == [98, 99, 100, 101, 102]


def test_out_of_order_ids_are_absorbed_into_the_run() -> None:
    history = IdHistory(10)
    for rid in (0, 5, 6, 3, 7, 1, 2, 4):
        history.add(rid)
    assert len(history) == 8
    assert _recent(history) == 0
    assert all(r in history for r in range(8))
    assert 8 not in history


def test_absorption_below_the_run() -> None:
    history = IdHistory(10)
    for rid in (10, 7, 8, 9):
        history.add(rid)
    assert _recent(history) == 0
    assert [r for r in range(5, 12) if r in history] == [7, 8, 9, 10]


def test_strings_and_integers_are_different() -> None:
    history = IdHistory(10)
    history.add("1")
    assert "1" in history
    assert 1 not in history
    history.add(1)
    history.add("abc")
    assert {"1", 1, "abc"} <= {r for r in ("1", 1, "abc", "2", 2) if r in history}
    assert "2" not in history
    assert 2 not in history
    assert len(history) == 3


def test_negative_and_huge_integers() -> None:
    history = IdHistory(10)
    for rid in (-5, 2**62, -(2**62), 0):
        history.add(rid)
    for rid in (-5, 2**62, -(2**62), 0):
        assert rid in history
    assert 2**62 + 1 not in history


def test_past_the_bound_the_oldest_is_forgotten() -> None:
    """Documented behaviour: reuse of a forgotten id is no longer detected."""
    history = IdHistory(3)
    for rid in ("a", "b", "c", "d"):
        history.add(rid)
    assert "a" not in history
    assert all(rid in history for rid in ("b", "c", "d"))
    assert len(history) == 3
    history.add("e")
    assert "b" not in history
    assert len(history) == 3


def test_the_run_is_never_forgotten() -> None:
    history = IdHistory(2)
    for rid in range(50):
        history.add(rid)
    others: list[Id] = ["x", "y", "z", 1000, 2000]
    for other in others:
        history.add(other)
    assert all(rid in history for rid in range(50))
    assert _recent(history) == 2


def test_absorbed_ids_free_room_in_the_bound() -> None:
    history = IdHistory(2)
    history.add(0)
    history.add(2)
    history.add("s")
    history.add(1)  # absorbs 2: the run is 0..2 and only "s" is outside it
    history.add("t")
    assert all(rid in history for rid in (0, 1, 2, "s", "t"))


def test_memory_stays_bounded_for_1e5_ids() -> None:
    """1e5 integer ids in random order: the part outside the run never exceeds the bound,
    and the memory used stays well under 1 MiB."""
    bound = 1000
    history = IdHistory(bound)
    ids = list(range(100_000))
    random.Random(7).shuffle(ids)
    tracemalloc.start()
    try:
        for rid in ids:
            history.add(rid)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert _recent(history) <= bound
    assert len(history) <= 100_000
    assert peak < 2**20


def test_1e5_string_ids_keep_the_bound() -> None:
    bound = 1000
    history = IdHistory(bound)
    for i in range(100_000):
        history.add(f"s{i}")
        if i % 997 == 0:
            assert _recent(history) <= bound
    assert _recent(history) == bound
    assert len(history) == bound
    assert "s99999" in history
    assert "s0" not in history


def test_memory_for_1e5_sequential_ids_is_constant() -> None:
    history = IdHistory(16)
    tracemalloc.start()
    try:
        for rid in range(100_000):
            history.add(rid)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert _recent(history) == 0
    assert len(history) == 100_000
    assert peak < 64 * 1024


def _key(value: Id) -> tuple[type, Id]:
    return (type(value), value)


ids_strategy = st.lists(
    st.one_of(st.integers(min_value=-20, max_value=60), st.text(max_size=3)),
    unique_by=_key,
    max_size=80,
)


@given(ids=ids_strategy, bound=st.integers(min_value=1, max_value=10))
def test_model(ids: list[Id], bound: int) -> None:
    """Against a model: no false positives ever; the last ``bound`` ids added are always
    remembered; the size never exceeds what was added."""
    history = IdHistory(bound)
    added: list[Id] = []
    for rid in ids:
        history.add(rid)
        added.append(rid)
        for recent in added[-bound:]:
            assert recent in history
        assert len(history) <= len(added)
        assert _recent(history) <= bound
    never: list[Id] = [-21, 61, "never-added"]
    for missing in never:
        assert missing not in history
    keys = {(type(r), r) for r in added}
    for probe in range(-25, 65):
        if probe in history:
            assert (int, probe) in keys


def test_a_deep_copy_is_equal_and_independent() -> None:
    """A refused batch saves its connection's histories with ``copy.deepcopy``."""
    history = IdHistory(4)
    for request_id in (0, 1, 2, 7, "a"):
        history.add(request_id)
    twin = copy.deepcopy(history)
    assert [i in twin for i in (0, 1, 2, 3, 7, "a", "b")] == [True] * 3 + [False, True, True, False]
    twin.add(3)
    twin.add("b")
    assert (3 in twin, 3 in history) == (True, False)
    assert ("b" in twin, "b" in history) == (True, False)
    assert len(twin) == len(history) + 2


# ------------------------------------------------------- bounds in bytes (issue 16, class 1)

MIB = 1 << 20


def test_400_ids_of_1_mib_keep_the_bound_in_bytes() -> None:
    """A long id costs its length: 400 ids of 1 MiB each leave about ``max_bytes`` behind
    (4 MiB by default), not 400 MiB (+401 MiB before the byte budget)."""
    history = IdHistory(65536)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(400):
            history.add(f"{i:07d}" + "x" * MIB)
        kept = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert history.nbytes <= DEFAULT_ID_MEMORY_BYTES
    assert kept < 2 * DEFAULT_ID_MEMORY_BYTES
    assert f"{399:07d}" + "x" * MIB in history  # the newest are remembered
    assert f"{0:07d}" + "x" * MIB not in history  # the oldest are forgotten (documented)


def test_the_newest_id_is_kept_whatever_it_costs() -> None:
    history = IdHistory(10, max_bytes=16)
    history.add("a" * 8)
    history.add("b" * 100)
    assert "b" * 100 in history
    assert "a" * 8 not in history
    assert len(history) == 1
    history.add(5)  # an integer starts the run: it costs nothing, forgets nothing
    assert "b" * 100 in history


def test_id_cost_counts_bytes() -> None:
    assert id_cost("abc") == 3
    assert id_cost("é") == 4  # not ASCII: counted at CPython's widest, 4 bytes a character
    assert id_cost(7) == id_cost(2**63) == 8


def test_ids_outside_the_run_are_charged_and_refunded() -> None:
    history = IdHistory(10, max_bytes=100)
    history.add(0)
    history.add(2)  # outside the run [0, 1)
    history.add("abcd")
    assert history.nbytes == 8 + 4
    history.add(1)  # absorbs 2
    assert history.nbytes == 4
    twin = copy.deepcopy(history)
    assert twin.nbytes == 4


@given(ids=ids_strategy, bound=st.integers(min_value=1, max_value=10))
def test_model_with_a_byte_budget(ids: list[Id], bound: int) -> None:
    """The ids outside the run never cost more than the budget, unless one id alone does;
    the newest id is always remembered; no false positives."""
    history = IdHistory(100, max_bytes=bound)
    keys = set()
    for rid in ids:
        history.add(rid)
        keys.add((type(rid), rid))
        assert rid in history
        assert history.nbytes <= bound or _recent(history) == 1
        assert history.nbytes == sum(id_cost(r) for r in history._recent)
    for probe in range(-25, 65):
        if probe in history:
            assert (int, probe) in keys


# ------------------------------------------------------------------------- RecentIds


def test_recent_ids_are_bounded_in_entries_and_bytes() -> None:
    table = RecentIds(3, max_bytes=10)
    for key in ("a", "b", "c", "d"):
        table.put(key)
    assert ["a" in table, "b" in table, "d" in table] == [False, True, True]
    assert len(table) == 3
    table.put("x" * 9)  # 9 + 1 ("d") fits 10 bytes; "b" and "c" go
    assert ["b" in table, "c" in table, "d" in table] == [False, False, True]
    assert table.nbytes == 10
    table.put("y" * 50)  # alone over the budget: kept, everything older forgotten
    assert len(table) == 1
    assert table.get("y" * 50) == 1


def test_recent_ids_values_and_discard() -> None:
    table = RecentIds(2)
    table.put("a", 1)
    table.put("b", 1)
    table.put("a", 2)  # a known key keeps its place: still the oldest
    assert table.get("a") == 2
    table.put("c")
    assert "a" not in table
    assert table.get("missing") == 0
    table.discard("b")
    table.discard("never")
    assert len(table) == 1
    assert table.nbytes == 1
    twin = copy.deepcopy(table)
    twin.put("d")
    assert ("d" in twin, "d" in table) == (True, False)


# --------------------------------------------------------------------- Subscriptions


def _covered(subscribed: set[str], uri: str) -> bool:
    """The rule, as a scan (what the connection did before)."""
    return any(uri == s or uri.startswith(s.rstrip("/") + "/") for s in subscribed)


def test_what_a_subscription_covers() -> None:
    subs = Subscriptions()
    subs.add("file:///d/")
    subs.add("file:///e")
    subs.add("mem://x")
    covered = ["file:///d/", "file:///d/x", "file:///d/x/y", "file:///e", "file:///e/f", "mem://x"]
    for uri in covered:
        assert subs.covers(uri), uri
    for uri in ["file:///d", "file:///dx", "file:///e2", "file:///", "mem://", "mem://xy"]:
        assert not subs.covers(uri), uri
    subs.discard("file:///d/")
    assert not subs.covers("file:///d/x")
    assert subs.covers("file:///e/f")


uris = st.text(alphabet="ab/", max_size=6)


@given(ops=st.lists(st.tuples(st.booleans(), uris), max_size=30), probes=st.lists(uris))
def test_subscriptions_model(ops: list[tuple[bool, str]], probes: list[str]) -> None:
    """Against the scan: the same answer for any URI after any subscribes and unsubscribes,
    and the byte count is that of the URIs subscribed."""
    subs = Subscriptions()
    model: set[str] = set()
    for subscribe, uri in ops:
        if subscribe:
            subs.add(uri)
            model.add(uri)
        else:
            subs.discard(uri)
            model.discard(uri)
        assert subs.nbytes == sum(len(u) for u in model)
    assert len(subs) == len(model)
    for uri in probes + [u for _, u in ops]:
        assert subs.covers(uri) == _covered(model, uri), uri
    twin = copy.deepcopy(subs)
    for uri in probes:
        assert twin.covers(uri) == subs.covers(uri)


def test_subscriptions_bounds_count_the_reserved() -> None:
    subs = Subscriptions()
    subs.add("a")
    assert subs.full("b", 2, 100) is None
    subs.reserve("b")
    assert subs.full("c", 2, 100) == "more than 2 subscriptions"
    assert subs.full("a", 2, 100) is None  # already subscribed: never refused
    subs.release("b")
    assert subs.full("c", 2, 100) is None
    assert subs.full("c" * 100, 2, 100) == "subscribed URIs over 100 bytes"
