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
