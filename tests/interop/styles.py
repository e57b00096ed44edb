"""The three client styles under one roof, for tests that run the same exchange on each.

The async styles (asyncio, trio) share one API, so a test writes its exchange once as a
coroutine taking a :class:`Runtime`, and :meth:`Runtime.run` runs it on that event loop
within a time bound. The blocking style gets its own (synchronous) version of each test.
A style whose adapter module has not landed yet is skipped, saying so.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

ASYNC_STYLES = ("asyncio", "trio")
ALL_STYLES = ("asyncio", "trio", "blocking")


def adapter(style: str) -> ModuleType:
    """``mcp_sansio.<style>``, or skip the test when that adapter does not exist (yet)."""
    try:
        return importlib.import_module(f"mcp_sansio.{style}")
    except ImportError as exc:  # pragma: no cover - only before the adapter lands
        pytest.skip(f"the {style} adapter is not importable: {exc}")


class Runtime:
    """One async style: its ``Client`` and the few runtime calls the tests need."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.module = adapter(name)
        self.Client: Any = self.module.Client

    def run(self, fn: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Run ``fn()`` on a new event loop of this style, failing after ``timeout`` s."""
        if self.name == "asyncio":

            async def bounded_asyncio() -> T:
                return await asyncio.wait_for(fn(), timeout)

            return asyncio.run(bounded_asyncio())
        import trio

        async def bounded_trio() -> T:
            with trio.fail_after(timeout):
                return await fn()

        return trio.run(bounded_trio)

    async def sleep(self, seconds: float) -> None:
        if self.name == "asyncio":
            await asyncio.sleep(seconds)
        else:
            import trio

            await trio.sleep(seconds)

    async def gather(self, *thunks: Callable[[], Awaitable[Any]]) -> list[Any]:
        """Run the thunks concurrently; their results, in order."""
        if self.name == "asyncio":
            return list(await asyncio.gather(*(thunk() for thunk in thunks)))
        import trio

        results: list[Any] = [None] * len(thunks)

        async def one(index: int, thunk: Callable[[], Awaitable[Any]]) -> None:
            results[index] = await thunk()

        async with trio.open_nursery() as nursery:
            for index, thunk in enumerate(thunks):
                nursery.start_soon(one, index, thunk)
        return results

    async def until(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait (polling) until ``predicate()`` holds; fail with ``what`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f"{self.name}: no {what} within {timeout:g} s")
            await self.sleep(0.02)

    def __repr__(self) -> str:
        return self.name


def until_blocking(client: Any, predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """The blocking client's :meth:`Runtime.until`: pump the connection until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"blocking: no {what} within {timeout:g} s")
        client.poll(min(left, 0.05))


def texts(result: Any) -> list[str]:
    """The texts of a ``CallToolResult``'s content."""
    return [c["text"] for c in result.get("content") or [] if c.get("type") == "text"]


def methods(notes: Sequence[Any]) -> list[str]:
    """The methods of a list of :class:`~mcp_sansio.Notification`."""
    return [note.method for note in notes]
