"""A small, careful timer: calibrated loops, interleaved repeats, median, GC off.

A benchmark is a *loop function* ``run(n)`` that performs its operation ``n`` times in its
own tight loop (so no per-operation call through the harness is measured).
:func:`measure_group` takes the loops that are to be compared with each other (e.g. the
floor, mcp-sansio and the SDK on one message), calibrates each one's ``n`` so that one
repeat lasts about ``target_s``, warms each up, then times ``repeats`` rounds, each round
running every loop once in turn (so drift in the machine's speed hits all of them alike),
and reports the median time per operation of each.

The garbage collector is disabled while a loop is timed. Before the group, everything
alive is collected and frozen (``gc.freeze``), so the collection before each timed repeat
only has the benchmark's own garbage to look at: with the SDK imported, a full collection
of the heap takes tens of milliseconds.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["Settings", "Timing", "measure", "measure_group"]

Loop = Callable[[int], object]


@dataclass(frozen=True)
class Settings:
    """How long and how often to measure."""

    target_s: float = 0.15
    """Wall time one repeat should last (the loop count is calibrated to it)."""
    repeats: int = 7
    """Timed repeats; the median is reported."""
    warmup_s: float = 0.05
    """Untimed running before the repeats."""
    max_n: int = 1_000_000


@dataclass(frozen=True)
class Timing:
    """The result of one measurement."""

    median_ns: float
    """Median over repeats of the time per operation, in nanoseconds."""
    min_ns: float
    max_ns: float
    n: int
    """Operations per repeat."""
    repeats: int

    @property
    def median_us(self) -> float:
        return self.median_ns / 1000.0


def _time_once(run: Loop, n: int) -> int:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        run(n)
        return time.perf_counter_ns() - t0
    finally:
        gc.enable()


def _calibrate(run: Loop, settings: Settings) -> int:
    """The loop count that makes one repeat last about ``settings.target_s``."""
    target_ns = settings.target_s * 1e9
    n = 1
    while True:
        elapsed = _time_once(run, n)
        if elapsed >= target_ns / 10 or n >= settings.max_n:
            break
        n *= 10 if elapsed < target_ns / 100 else 2
    per_op = max(elapsed / n, 1.0)
    return max(1, min(settings.max_n, round(target_ns / per_op)))


def _warm_up(run: Loop, n: int, seconds: float) -> None:
    deadline = time.perf_counter() + seconds
    while True:
        run(max(1, n // 10))
        if time.perf_counter() >= deadline:
            break


def measure_group(
    loops: Mapping[str, Loop], settings: Settings
) -> tuple[dict[str, Timing], dict[str, BaseException]]:
    """Measure loops side by side (see the module docstring).

    Returns the timings, and the exception of each loop that raised (it is then left
    out of the remaining rounds).
    """
    gc.collect()
    gc.freeze()
    counts: dict[str, int] = {}
    errors: dict[str, BaseException] = {}
    for key, run in loops.items():
        try:
            counts[key] = _calibrate(run, settings)
            _warm_up(run, counts[key], settings.warmup_s)
        except Exception as exc:
            errors[key] = exc
    per_op: dict[str, list[float]] = {key: [] for key in counts}
    for _ in range(settings.repeats):
        for key, n in counts.items():
            if key in errors:
                continue
            try:
                per_op[key].append(_time_once(loops[key], n) / n)
            except Exception as exc:
                errors[key] = exc
    timings = {
        key: Timing(
            median_ns=statistics.median(values),
            min_ns=min(values),
            max_ns=max(values),
            n=counts[key],
            repeats=len(values),
        )
        for key, values in per_op.items()
        if key not in errors
    }
    return timings, errors


def measure(run: Loop, settings: Settings) -> Timing:
    """Median time per operation of one loop."""
    timings, errors = measure_group({"run": run}, settings)
    if "run" in errors:
        raise errors["run"]
    return timings["run"]
