"""The blocking session pump (one per peer) and the handlers' Context."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from .._backpressure import stalled
from .._errors import RemoteProtocolError
from .._events import Notification, RequestId
from ..session import (
    Action,
    Call,
    ConnectionLost,
    Job,
    SessionBase,
    SyncContextBase,
    carry_out,
)
from ..session._policy import notify_application
from ._streams import (
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_WRITE_TIMEOUT,
    NotificationCallback,
    Stream,
    _clock,
)

# ---------------------------------------------------------------------- the pump


class _Endpoint:
    """What a client and a server connection share: the loop around a session."""

    #: Whether a job that arrives while another runs is run at once (nested) or queued.
    _nested_jobs: ClassVar[bool] = True

    def __init__(
        self,
        session: SessionBase,
        stream: Stream,
        on_notification: NotificationCallback | None,
        *,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        self.session = session
        self.stream = stream
        self._on_notification = on_notification
        self._eof = False  # the end has been fed to the session: read no more
        self._write_failed = False
        # Backpressure, for a stream that can write without blocking (PipeStream,
        # SocketStream): what it has not taken yet, and since when it has taken none.
        self.max_write_buffer = max_write_buffer
        self.write_timeout = write_timeout
        self._write_some: Callable[[bytes | bytearray], int] | None = getattr(
            stream, "write_some", None
        )
        self._wait_ready: Callable[..., tuple[bool, bool]] | None = getattr(
            stream, "wait_ready", None
        )
        if self._wait_ready is None:
            self._write_some = None
        self._outbox = bytearray()
        self._stalled_at: float | None = None
        self._failure: ConnectionLost | None = None
        self._busy = False
        self._backlog: deque[Job] = deque()
        self._opened: Mapping[str, Any] = {}
        # Streamable HTTP: where the session's writes go instead of the stream (the bytes
        # and the id of the request whose handler wrote them).
        self.route: Callable[[bytes, RequestId | None], None] | None = None

    def _write(self, data: bytes, job: Job | None = None) -> None:
        if data and self.route is not None:  # Streamable HTTP: onto the right response
            self.route(data, None if job is None else job.id)
            return
        if data and not self._write_failed:
            if self._write_some is None:  # a stream that can only block
                try:
                    self.stream.write(data)
                except (OSError, ValueError):  # the peer is gone (ValueError: a closed file)
                    self._write_failed = True
                return
            outbox = self._outbox
            if not outbox:  # the usual case: the stream takes it all at once
                try:
                    n = self._write_some(data)
                except (OSError, ValueError):
                    self._write_failed = True
                    return
                if n == len(data):
                    return
                outbox += memoryview(data)[n:]
                self._flush()
            else:
                outbox += data
                self._flush()
            if len(outbox) > self.max_write_buffer:
                # Past the bound: nothing more is read (nor done) until it is down to half.
                self._drain(self.max_write_buffer // 2)

    def _flush(self) -> None:
        """Write what the stream takes now, without blocking."""
        outbox, write_some = self._outbox, self._write_some
        assert write_some is not None
        progressed = False
        try:
            while outbox:
                n = write_some(outbox)
                if not n:
                    break
                del outbox[:n]
                progressed = True
        except (OSError, ValueError):  # the peer is gone (ValueError: a closed file)
            self._write_failed = True
            outbox.clear()
        if not outbox:
            self._stalled_at = None
        elif progressed or self._stalled_at is None:
            self._stalled_at = _clock()

    def _write_deadline(self) -> float | None:
        """When the connection breaks if the peer takes none of what waits (or ``None``)."""
        if self._stalled_at is None or self.write_timeout is None:
            return None
        return self._stalled_at + self.write_timeout

    def _drain(self, low: int, until: float | None = None) -> None:
        """Write, without reading, until at most ``low`` bytes wait; past the write deadline
        the connection is broken, at ``until`` (when closing) what is left is dropped."""
        wait_ready = self._wait_ready
        assert wait_ready is not None
        while len(self._outbox) > low and not self._write_failed:
            deadline = self._write_deadline()
            end = deadline if until is None else until if deadline is None else min(deadline, until)
            now = _clock()
            if end is not None and now >= end:
                if end == deadline:
                    self._stall()
                else:
                    self._outbox.clear()
                return
            if wait_ready(None if end is None else end - now, read=False, write=True)[1]:
                self._flush()

    def _stall(self) -> None:
        """The peer stopped reading: the connection is closed as broken."""
        assert self.write_timeout is not None
        message = stalled(self.session, len(self._outbox), self.write_timeout)
        self._failure = ConnectionLost(message)
        self._eof = self._write_failed = True
        self._outbox.clear()
        self._stalled_at = None

    def _pump(self, until: float | None = None) -> bool:
        """Wait for the peer's bytes until the session's next deadline (or ``until``), then
        carry out what follows; meanwhile write what waits, as the stream takes it. Returns
        whether anything arrived (bytes or the end)."""
        if self._eof:
            return False
        session = self.session
        deadline = session.next_deadline()
        if until is not None:
            deadline = until if deadline is None else min(deadline, until)
        data: bytes | None = None
        if self._write_failed:
            data = b""
        elif self._outbox:
            assert self._wait_ready is not None
            stall = self._write_deadline()
            end = deadline if stall is None else stall if deadline is None else min(deadline, stall)
            now = _clock()
            readable, writable = self._wait_ready(None if end is None else end - now)
            if writable:
                self._flush()
            stall = self._write_deadline()
            if stall is not None and _clock() >= stall:
                self._stall()
                return True
            if readable:
                data = self.stream.read_some(0)
        else:
            now = _clock()
            data = self.stream.read_some(None if deadline is None else deadline - now)
        now = _clock()
        if data is not None:
            self._eof = not data
            try:
                actions = session.receive_data(data, now)
            except RemoteProtocolError as exc:
                # The peer broke the session beyond repair; nothing more can be read.
                self._eof = True
                self._failure = ConnectionLost(f"the peer broke the protocol: {exc}")
                return True
            self._carry_out(actions)
        self._carry_out(session.expire(now))
        return data is not None

    def _carry_out(self, actions: Iterable[Action]) -> None:
        carry_out(actions, self)
        if self._nested_jobs or not self._busy:
            while self._backlog:
                self._run_job(self._backlog.popleft())

    # The runtime protocol (mcp_sansio.session.Runtime): what carry_out() calls.

    def write(self, data: bytes) -> None:
        """Write to the peer (with backpressure)."""
        self._write(data)

    def start_job(self, job: Job) -> None:
        """Queue a handler: it runs once the actions at hand are carried out."""
        self._backlog.append(job)

    def cancel_job(self, job: Job) -> None:
        """Nothing to interrupt: the session has set ``job.cancelled``, which a running
        handler sees (``ctx.cancelled``), and its answer is not sent."""

    def wake(self, call: Call) -> None:
        """Nothing to wake: a blocking wait polls ``call.done``."""

    def deliver(self, notification: Notification) -> None:
        """Give a notification to ``on_notification`` (its errors logged, as everywhere)."""
        if self._on_notification is not None:
            notify_application(self._on_notification, notification)

    def on_opened(self, result: Mapping[str, Any]) -> None:
        """The session is open: keep its result (the client's opening returns it)."""
        self._opened = result

    def on_closed(self) -> None:
        """Nothing to do: the session knows it is closed, and the pump sees it."""

    def _run_job(self, job: Job) -> None:
        value: Any = None
        error: BaseException | None = None
        if not job.cancelled:
            busy, self._busy = self._busy, True
            try:
                if job.is_async:
                    error = TypeError(
                        f"{job.method}: the blocking adapter cannot await {job.handler}"
                    )
                else:
                    value = job.handler(Context(self, job), *job.args)
            except Exception as exc:
                error = exc
            finally:
                self._busy = busy
        carry_out(self.session.complete(job, value, error, now=_clock()), self)

    def _wait(self, call: Call, job: Job | None = None) -> Any:
        """Pump until ``call`` is over; return its result or raise its error. If the wait is
        interrupted (KeyboardInterrupt, an exception from a callback), or the peer cancels
        ``job`` (the request whose handler made the call), the call is cancelled
        (``notifications/cancelled``) and the exception goes on."""
        try:
            while not call.done and not self._eof:
                if job is not None and job.cancelled:
                    self._write(self.session.cancel(call, "its request was cancelled"))
                    break
                self._pump()
        except BaseException:
            self._write(self.session.cancel(call, "the caller gave up"))
            raise
        if not call.done:  # the session broke (the peer's protocol error)
            raise self._failure or ConnectionLost()
        return call.outcome()


class Context(SyncContextBase):
    """What a handler gets first: the request (:attr:`params`, :attr:`request_id`,
    :attr:`cancelled`, …) and ways to talk back. :meth:`progress`, :meth:`log`,
    :meth:`resource_updated` and :meth:`list_changed` write at once; :meth:`elicit`,
    :meth:`sample` and :meth:`list_roots` block until the client answers, pumping the
    connection meanwhile (other requests wait their turn); if the client cancels this
    request meanwhile, the question is cancelled too and they raise
    :class:`McpError`. Only a server handler can ask the client.
    """

    def __init__(self, endpoint: _Endpoint, job: Job) -> None:
        super().__init__(endpoint.session, job, _clock)
        self._endpoint = endpoint

    def _write(self, data: bytes) -> None:
        self._endpoint._write(data, self.job)

    def _wait(self, call: Call) -> Any:
        return self._endpoint._wait(call, self.job)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, handling the connection meanwhile (so a cancellation of this
        request is noticed: the wait ends early with :attr:`cancelled` true)."""
        end = _clock() + seconds
        endpoint = self._endpoint
        while not self.cancelled and _clock() < end:
            if endpoint._eof:
                time.sleep(max(0.0, end - _clock()))
                return
            endpoint._pump(until=end)
