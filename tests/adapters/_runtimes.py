"""The one per-runtime shim of the adapter contract suite: "run this scenario in runtime X".

A scenario is written once, as ``async def scenario() -> ...``, against :class:`Face` (a
client seen through one async API) and :meth:`Runtime.handler` (a handler written once, as
``async def body(ctx, params)``). The async runtimes run it under ``asyncio.run`` /
``trio.run``, bounded in time, and check that no task is left; the blocking runtime calls
the sync face: its scenario coroutine never suspends, and :func:`drive` runs it to the end
in one step (a scenario that would suspend there is a bug in the scenario, and says so).

Only public API is used: ``Client.connect_unix``, ``Context`` methods, ``serve_unix``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

import pytest
import trio

from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio import blocking
from mcp_sansio import trio as mcp_trio

T = TypeVar("T")
#: The bound on one scenario, in seconds.
LIMIT = 30.0
#: The default timeout of a call in the suite (every call is bounded).
CALL_TIMEOUT = 10.0
#: How long a block of :meth:`Runtime.background` waits for its tasks (less than
#: :data:`CALL_TIMEOUT`: a call that hangs is told from one that timed out).
BACKGROUND_LIMIT = 5.0
NAMES = ("blocking", "asyncio", "trio")

Body = Callable[[Any, Mapping[str, Any]], Coroutine[Any, Any, Any]]


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, in this thread."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a blocking scenario awaited something that suspends")


class _AwaitableContext:
    """A blocking handler's ``Context`` with the async face of the other runtimes'."""

    def __init__(self, ctx: blocking.Context) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    async def elicit(self, message: str, schema: Mapping[str, Any], **options: Any) -> Any:
        return self._ctx.elicit(message, schema, **options)

    async def sample(self, params: Mapping[str, Any]) -> Any:
        return self._ctx.sample(params)

    async def list_roots(self) -> Any:
        return self._ctx.list_roots()

    async def sleep(self, seconds: float) -> None:
        self._ctx.sleep(seconds)


class Face:
    """A client of any runtime, through one async API (every call bounded)."""

    def __init__(self, runtime: Runtime, client: Any) -> None:
        self.runtime = runtime
        self.client = client

    async def _do(self, result: Any) -> Any:
        return await result if self.runtime.is_async else result

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        options.setdefault("timeout", CALL_TIMEOUT)
        return await self._do(self.client.request(method, params, **options))

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> Any:
        options.setdefault("timeout", CALL_TIMEOUT)
        return await self._do(self.client.call_tool(name, arguments, **options))

    async def ping(self, **options: Any) -> Any:
        options.setdefault("timeout", CALL_TIMEOUT)
        return await self._do(self.client.ping(**options))

    async def listen(self, **options: Any) -> Any:
        options.setdefault("timeout", CALL_TIMEOUT)
        return await self._do(self.client.listen(**options))

    async def idle(self, seconds: float) -> None:
        """Let the client handle what arrives for ``seconds``."""
        if self.runtime.name == "asyncio":
            await asyncio.sleep(seconds)
        elif self.runtime.name == "trio":
            await trio.sleep(seconds)
        else:
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0:
                if not self.client.poll(left):
                    time.sleep(min(left, 0.01))

    async def until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Let the client work until ``predicate()`` holds; fail after ``timeout``."""
        end = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < end, f"not within {timeout} s"
            await self.idle(0.01)

    async def wait_without_calls(self, predicate: Callable[[], bool], timeout: float = 3.0) -> None:
        """Wait until ``predicate()`` holds, making no call on the client meanwhile (the
        blocking face sleeps: it does not pump); fail after ``timeout``."""
        end = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < end, f"not within {timeout} s"
            if self.runtime.name == "asyncio":
                await asyncio.sleep(0.01)
            elif self.runtime.name == "trio":
                await trio.sleep(0.01)
            else:
                time.sleep(0.01)

    @property
    def closed(self) -> bool:
        return bool(self.client.closed)

    async def cancel_after(self, delay: float, call: Callable[[], Awaitable[Any]]) -> bool:
        """Start ``call()`` in a task (a cancel scope), cancel it after ``delay`` seconds;
        whether the cancellation came out of it unchanged (async runtimes only)."""
        if self.runtime.name == "asyncio":
            task = asyncio.ensure_future(call())
            await asyncio.sleep(delay)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return True
            return False
        assert self.runtime.name == "trio", "the blocking runtime has no task to cancel"
        with trio.move_on_after(delay) as scope:
            await call()
        return scope.cancelled_caught


class Runtime:
    """One runtime: how to run a scenario, open a client, and write a handler."""

    name: str
    is_async: bool
    module: Any

    def run(self, scenario: Callable[[], Coroutine[Any, Any, T]], limit: float = LIMIT) -> T:
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def client(self, path: str, **options: Any) -> AsyncIterator[Face]:
        """A client of the server at ``path`` (2025-11-25 unless ``versions=`` says)."""
        options.setdefault("versions", ["2025-11-25"])
        options.setdefault("timeout", CALL_TIMEOUT)
        client = self.module.Client.connect_unix(path, **options)
        if self.is_async:
            async with client:
                yield Face(self, client)
        else:
            with client:
                yield Face(self, client)

    @contextlib.asynccontextmanager
    async def background(self) -> AsyncIterator[Callable[[Callable[[], Awaitable[Any]]], None]]:
        """``start(fn)`` runs ``fn()`` in a task (asyncio) or the nursery (trio) that this
        block waits for, bounded, at its end (async runtimes only: the blocking runtime
        makes one call at a time)."""
        if self.name == "asyncio":
            tasks: list[asyncio.Future[Any]] = []
            yield lambda fn: tasks.append(asyncio.ensure_future(fn()))
            await asyncio.wait_for(asyncio.gather(*tasks), BACKGROUND_LIMIT)
        else:
            assert self.name == "trio", "the blocking runtime makes one call at a time"
            with trio.fail_after(BACKGROUND_LIMIT):
                async with trio.open_nursery() as nursery:
                    yield lambda fn: nursery.start_soon(fn)

    def handler(self, body: Body) -> Callable[..., Any]:
        """``body`` as a handler of this runtime (tool, client handler…)."""
        if self.is_async:
            return body

        def handler(ctx: Any, params: Mapping[str, Any]) -> Any:
            return drive(body(_AwaitableContext(ctx), params))

        handler.__doc__ = body.__doc__
        handler.__name__ = body.__name__
        return handler

    def __repr__(self) -> str:
        return self.name


class Blocking(Runtime):
    name = "blocking"
    is_async = False
    module = blocking

    def run(self, scenario: Callable[[], Coroutine[Any, Any, T]], limit: float = LIMIT) -> T:
        started = time.monotonic()
        value = drive(scenario())
        assert time.monotonic() - started < limit
        return value


class Asyncio(Runtime):
    name = "asyncio"
    is_async = True
    module = mcp_asyncio

    def run(self, scenario: Callable[[], Coroutine[Any, Any, T]], limit: float = LIMIT) -> T:
        async def main() -> T:
            value = await asyncio.wait_for(scenario(), limit)
            here = asyncio.current_task()
            end = time.monotonic() + 2
            while (left := [t for t in asyncio.all_tasks() if t is not here]) and (
                time.monotonic() < end
            ):
                await asyncio.sleep(0.01)
            assert not left, f"tasks left: {left}"
            return value

        return asyncio.run(main())


class Trio(Runtime):
    name = "trio"
    is_async = True
    module = mcp_trio

    def run(self, scenario: Callable[[], Coroutine[Any, Any, T]], limit: float = LIMIT) -> T:
        async def main() -> T:
            before = trio.lowlevel.current_statistics().tasks_living
            with trio.fail_after(limit):
                value = await scenario()
            left = trio.lowlevel.current_statistics().tasks_living - before
            assert left <= 0, f"{left} tasks left"
            return value

        return trio.run(main)


RUNTIMES: dict[str, Runtime] = {"blocking": Blocking(), "asyncio": Asyncio(), "trio": Trio()}


def runtimes(**drift: str) -> pytest.MarkDecorator:
    """Parametrize a test's ``rt`` over the three runtimes; ``name="what it does today"``
    marks that runtime's case a strict xfail (``drift: ...``): it turns into a failing
    XPASS the moment the runtime follows docs/policy.rst."""
    unknown = set(drift) - set(NAMES)
    assert not unknown, unknown
    params = [
        pytest.param(
            name,
            id=name,
            marks=(
                [pytest.mark.xfail(strict=True, reason=f"drift: {drift[name]}")]
                if name in drift
                else []
            ),
        )
        for name in NAMES
    ]
    return pytest.mark.parametrize("rt", params, indirect=True)


def async_runtimes(**drift: str) -> pytest.MarkDecorator:
    """As :func:`runtimes`, for a scenario the blocking runtime has no counterpart of
    (docs/policy.rst: it has no task to cancel and makes one call at a time)."""
    params = [
        pytest.param(
            name,
            id=name,
            marks=(
                [pytest.mark.xfail(strict=True, reason=f"drift: {drift[name]}")]
                if name in drift
                else []
            ),
        )
        for name in ("asyncio", "trio")
    ]
    return pytest.mark.parametrize("rt", params, indirect=True)
