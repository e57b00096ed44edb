"""The adapter contract suite's fixtures: ``rt`` (the runtime under test, parametrized by
``runtimes()``), a time bound on every test, and a check that no thread or file descriptor
outlives a test that passed."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

from ._peers import EXPECTED_ERRORS, ErrorLog
from ._runtimes import RUNTIMES, Runtime

#: The backstop bound on one test, in seconds (each wait inside is bounded far tighter).
TEST_LIMIT = 60.0


class SuiteTimeout(Exception):
    """A test of the suite ran past :data:`TEST_LIMIT`."""


@pytest.fixture
def rt(request: pytest.FixtureRequest) -> Runtime:
    """The runtime under test."""
    return RUNTIMES[request.param]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_PASSED] = report.passed and not hasattr(report, "wasxfail")
    return report


_PASSED = pytest.StashKey[bool]()


def _fds() -> dict[str, str]:
    table = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            table[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return table


@pytest.fixture(autouse=True)
def _bounded_and_clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test past :data:`TEST_LIMIT`; after a test that passed, nothing logged at
    ERROR by ``mcp_sansio`` (unless the test checks its own with ``error_log()``), no thread
    and no descriptor more than before it (waiting up to 5 s for them to go). Trio's idle worker
    threads ("Trio thread N", its thread cache, which keeps them up to 10 s for reuse) are
    trio's, not a runtime's, and are not counted."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise SuiteTimeout(f"{request.node.nodeid} ran for more than {TEST_LIMIT:g} s")

    logged = ErrorLog()
    logger = logging.getLogger("mcp_sansio")
    logger.addHandler(logged)
    expected = EXPECTED_ERRORS[0]
    threads = set(threading.enumerate())
    fds = _fds()
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, TEST_LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        logger.removeHandler(logged)
    if not request.node.stash.get(_PASSED, False):
        return
    if EXPECTED_ERRORS[0] == expected:
        assert not logged.records, [r.getMessage() for r in logged.records]
    end = time.monotonic() + 5
    while time.monotonic() < end:
        extra_threads = [
            t
            for t in threading.enumerate()
            if t not in threads and t.is_alive() and not t.name.startswith("Trio thread")
        ]
        extra_fds = {fd: what for fd, what in _fds().items() if fds.get(fd) != what}
        if not extra_threads and not extra_fds:
            return
        time.sleep(0.02)
    assert not extra_threads, f"threads left: {extra_threads}"
    assert not extra_fds, f"descriptors left: {extra_fds}"
