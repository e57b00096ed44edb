"""What handlers get: :class:`ContextBase` (everything that is not about waiting, once),
the :class:`AsyncContext` protocol, and :class:`ClientView`."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .._events import RequestId
from .._versions import Era
from ._base import SessionBase
from ._calls import Call, Job
from ._client import ClientSession

#: For each session served with ``auth=``: the principal of a request, by its id (set by
#: the HTTP server, :func:`bind_principals`; weak, so that a session ended is forgotten).
_PRINCIPALS: weakref.WeakKeyDictionary[SessionBase, Callable[[RequestId | None], Any]] = (
    weakref.WeakKeyDictionary()
)


def bind_principals(session: SessionBase, lookup: Callable[[RequestId | None], Any]) -> None:
    """``lookup(request_id)`` is the principal of the request ``request_id`` on
    ``session`` (what :attr:`ContextBase.principal` returns). The lookup must not hold the
    session (the table is weak on it)."""
    _PRINCIPALS[session] = lookup


class ContextBase:
    """What a handler gets as its first argument: the request it serves and ways to talk
    back. The adapters subclass it; they supply ``_write`` (send bytes now, or queue
    them) and the waiting half of ``elicit``, ``sample`` and ``list_roots``
    (``await`` in asyncio and trio, a blocking wait in :mod:`mcp_sansio.blocking`).
    """

    def __init__(self, session: SessionBase, job: Job, clock: Callable[[], float]) -> None:
        self.session = session
        """The session the request arrived on."""
        self.job = job
        """The job being run."""
        self._clock = clock

    def _write(self, data: bytes) -> None:  # pragma: no cover - adapters override
        raise NotImplementedError

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request being handled (``None`` for a 2026 input request)."""
        return self.job.id

    @property
    def principal(self) -> Any:
        """Who the request's access token speaks for: the ``Principal``
        (``mcp_sansio.auth._resource``) the HTTP server verified on the request that
        carried this message (a server with ``auth=``; see ``docs/auth-server.rst``), else
        ``None``. Its ``scopes`` are those of that request's token."""
        lookup = _PRINCIPALS.get(self.session)
        return None if lookup is None else lookup(self.job.id)

    @property
    def method(self) -> str:
        """The method being handled."""
        return self.job.method

    @property
    def params(self) -> Mapping[str, Any]:
        """The request's params."""
        return self.job.params

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled the request (its answer will not be sent)."""
        return self.job.cancelled

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the session (or of this request, in 2026-07-28)."""
        return self.session.connection.protocol_version

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on this request (nothing happens when it has no progress token)."""
        data = self.session.progress(self.job, progress, total, message)
        if data:
            self._write(data)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message, if the client's log level lets it through."""
        out = self.session.log(self.job, level, data, logger)
        if out:
            self._write(out)

    def resource_updated(self, uri: str) -> None:
        """Tell subscribers of ``uri`` that it changed."""
        if self.session.broadcast is not None:
            self.session.broadcast(lambda session: session.resource_updated(uri))
        else:
            data = self.session.resource_updated(uri)
            if data:
                self._write(data)

    def list_changed(self, kind: str) -> None:
        """Tell the client that the list of ``kind`` (tools, prompts, resources) changed."""
        if self.session.broadcast is not None:
            self.session.broadcast(lambda session: session.list_changed(kind))
        else:
            data = self.session.list_changed(kind)
            if data:
                self._write(data)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification to the peer: an application method's (``methods=``), or a
        built-in one. The session's connection checks it as every message: a method it may
        not send now raises :class:`~mcp_sansio.LocalProtocolError`, and nothing is sent."""
        self._write(self.session.notify(method, params))

    def close_stream(self) -> None:
        """Over Streamable HTTP in the initialize era, end the HTTP response that carries
        this request now; the client reconnects after the stream's ``retry`` delay and
        resumes with ``Last-Event-ID``, and what the handler sends meanwhile waits in the
        replay buffer. Elsewhere it does nothing."""
        hook = self.session.on_close_stream
        if hook is not None and self.job.id is not None:
            hook(self.job.id)

    def _ask(
        self, method: str, params: Mapping[str, Any], timeout: float | None = None
    ) -> tuple[Call | None, Any]:
        """Start asking the client; returns ``(call, None)`` to wait on, or ``(None, answer)``.

        The adapters' ``elicit``, ``sample`` and ``list_roots`` return the whole result
        object the client sent (``ElicitResult``, ``CreateMessageResult``,
        ``ListRootsResult``)."""
        call, data, answer = self.session.ask(self.job, method, params, self._clock(), timeout)
        if call is not None:
            self._write(data)
        return call, answer

    @staticmethod
    def elicitation_params(
        message: str, requested_schema: Mapping[str, Any] | None = None, *, url: str | None = None
    ) -> dict[str, Any]:
        """The params of ``elicitation/create``: a form (``requested_schema``) or a URL."""
        if url is not None:
            return {"mode": "url", "message": message, "url": url}
        return {
            "message": message,
            "requestedSchema": dict(requested_schema or {"type": "object", "properties": {}}),
        }


class AsyncContextBase(ContextBase):
    """The context of the async runtimes (asyncio, trio): :class:`ContextBase` with the
    questions to the client as coroutines. A runtime supplies ``_write`` and
    ``_wait`` (and ``sleep``); everything else is here, once.

    In a server handler, :meth:`elicit`, :meth:`sample` and :meth:`list_roots` send a
    request to the client in the initialize era; in 2026-07-28 they make the request end
    with ``input_required``, and the handler runs again when the client retries with the
    answer (so code before the question may run more than once). Let every exception from
    them propagate.
    """

    async def _wait(self, call: Call | None) -> Any:  # pragma: no cover - runtimes override
        """Wait for ``call``'s outcome (``None``: nothing to wait for, a checkpoint)."""
        raise NotImplementedError

    async def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        call, answer = self._ask(method, params)
        result: dict[str, Any] = await self._wait(call)
        return answer if call is None else result

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client (``elicitation/create``): a form described by
        ``requested_schema``, or a ``url`` to visit. Returns the client's result
        (``{"action": "accept" | "decline" | "cancel", "content": {...}}``)."""
        params = self.elicitation_params(message, requested_schema, url=url)
        return await self._request("elicitation/create", params)

    async def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage`` with these params); returns
        the client's result."""
        return await self._request("sampling/createMessage", params)

    async def list_roots(self) -> dict[str, Any]:
        """Ask the client for its roots (``roots/list``); returns its ``ListRootsResult``
        (``{"roots": [{"uri", "name"?}, ...]}``)."""
        return await self._request("roots/list", {})


class SyncContextBase(ContextBase):
    """The context of the blocking runtime: the same as :class:`AsyncContextBase`, with
    the questions to the client as blocking calls. A runtime supplies ``_write`` and
    ``_wait`` (and ``sleep``)."""

    def _wait(self, call: Call) -> Any:  # pragma: no cover - runtimes override
        """Wait for ``call``'s outcome (its result, or raise its error)."""
        raise NotImplementedError

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        call, answer = self._ask(method, params)
        if call is None:
            return answer  # type: ignore[no-any-return]
        return self._wait(call)  # type: ignore[no-any-return]

    def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client (``elicitation/create``), for input matching
        ``requested_schema`` (or to visit ``url``); returns the ``ElicitResult``
        (``{"action": ..., "content": ...}``)."""
        params = self.elicitation_params(message, requested_schema, url=url)
        return self._request("elicitation/create", params)

    def sample(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage`` with ``params``); returns the
        ``CreateMessageResult``."""
        return self._request("sampling/createMessage", params)

    def list_roots(self) -> dict[str, Any]:
        """Ask the client for its roots; returns the ``ListRootsResult``."""
        return self._request("roots/list", {})


class AsyncContext(Protocol):
    """The context that handlers get from the asyncio and trio adapters: type handlers
    against this, and the same code runs on both (and, thanks to the session, in both
    eras).

    In 2026-07-28, a handler that asks the client for input runs again on the client's
    retry, and finds the answers it asked for: what it did before asking (progress, logs,
    changes) happens again. Ask first, act after.
    """

    @property
    def params(self) -> Mapping[str, Any]:
        """The request's params."""

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request being handled."""

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled the request."""

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on the request."""

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message."""

    def resource_updated(self, uri: str) -> None:
        """Tell subscribers that ``uri`` changed."""

    def list_changed(self, kind: str) -> None:
        """Tell the client that a list (tools, prompts, resources) changed."""

    async def sleep(self, seconds: float) -> None:
        """Sleep, in the adapter's runtime."""

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
    ) -> Any:
        """Ask the user (``elicitation/create``); returns the ``ElicitResult``."""

    async def sample(self, params: Mapping[str, Any]) -> Any:
        """Ask the client's model (``sampling/createMessage``); returns its result."""

    async def list_roots(self) -> Any:
        """Ask the client for its roots (``roots/list``); returns the ``ListRootsResult``."""


class ClientView:
    """What every adapter's ``Client`` tells about its session (a mixin: the adapter sets
    ``session``)."""

    session: ClientSession
    """The sans-IO session underneath."""

    @property
    def server_info(self) -> Mapping[str, Any] | None:
        """The server's ``serverInfo`` (``name``, ``version``, …), once open."""
        return self.session.server_info

    @property
    def server_capabilities(self) -> Mapping[str, Any] | None:
        """The server's capabilities, once known."""
        return self.session.connection.server_capabilities

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use."""
        return self.session.connection.protocol_version

    @property
    def era(self) -> Era | None:
        """The era of the session: ``Era.INITIALIZE`` or ``Era.STATELESS``."""
        return self.session.connection.era

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self.session.instructions
