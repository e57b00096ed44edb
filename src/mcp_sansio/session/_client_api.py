"""The client's convenience calls, written once for every runtime.

:data:`TABLE` is the one table: each entry is a function with the call's signature and
docstring (its parameters, then ``**options`` for :meth:`request`), which builds the
request from :mod:`mcp_sansio.requests`. :class:`AsyncClientMethods` (``await
client.list_tools()``) and :class:`SyncClientMethods` (``client.list_tools()``) are made
from it: a runtime's client inherits one of them and supplies ``request`` and ``session``.
``listen`` is here too: the session finishes its call at the stream's acknowledgement, in
every runtime alike.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Final, ParamSpec, Protocol

from .. import requests
from ._errors import DEFAULT, DEFAULT_MAX_TIMEOUT, DefaultType

if TYPE_CHECKING:
    from ._calls import Call
    from ._client import ClientSession

__all__ = ["TABLE", "AsyncClientMethods", "SyncClientMethods"]

_P = ParamSpec("_P")


class _Request:
    """What a convenience call asks for: a request, or (``set_logging_level`` in
    2026-07-28) nothing to send, when ``method`` is ``None``."""

    __slots__ = ("method", "options", "params")

    def __init__(
        self, method: str | None, params: Mapping[str, Any] | None, options: dict[str, Any]
    ) -> None:
        self.method = method
        self.params = params
        self.options = options


class _HasSession(Protocol):
    @property
    def session(self) -> ClientSession: ...


def _build(req: tuple[str, Mapping[str, Any] | None], options: dict[str, Any]) -> _Request:
    return _Request(req[0], req[1], options)


# ---------------------------------------------------------------------- the table
# Each function takes the session (for what depends on it) and the call's own arguments.


def ping(session: ClientSession, /, **options: Any) -> _Request:
    """``ping`` (initialize era). ``options`` (here and below): as for :meth:`request`."""
    return _build(requests.ping(), options)


def list_tools(session: ClientSession, /, cursor: str | None = None, **options: Any) -> _Request:
    """``tools/list``: ``{"tools": [...], "nextCursor"?}``."""
    return _build(requests.list_tools(cursor), options)


def call_tool(
    session: ClientSession,
    /,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    **options: Any,
) -> _Request:
    """``tools/call``: ``{"content": [...], "isError"?, "structuredContent"?}`` (a tool that
    failed answers ``isError: true``, not an exception)."""
    return _build(requests.call_tool(name, arguments), options)


def list_resources(
    session: ClientSession, /, cursor: str | None = None, **options: Any
) -> _Request:
    """``resources/list``."""
    return _build(requests.list_resources(cursor), options)


def list_resource_templates(
    session: ClientSession, /, cursor: str | None = None, **options: Any
) -> _Request:
    """``resources/templates/list``."""
    return _build(requests.list_resource_templates(cursor), options)


def read_resource(session: ClientSession, /, uri: str, **options: Any) -> _Request:
    """``resources/read``: ``{"contents": [...]}``."""
    return _build(requests.read_resource(uri), options)


def subscribe(session: ClientSession, /, uri: str, **options: Any) -> _Request:
    """``resources/subscribe`` (initialize era); updates reach ``on_notification``."""
    return _build(requests.subscribe(uri), options)


def unsubscribe(session: ClientSession, /, uri: str, **options: Any) -> _Request:
    """``resources/unsubscribe`` (initialize era)."""
    return _build(requests.unsubscribe(uri), options)


def list_prompts(session: ClientSession, /, cursor: str | None = None, **options: Any) -> _Request:
    """``prompts/list``."""
    return _build(requests.list_prompts(cursor), options)


def get_prompt(
    session: ClientSession,
    /,
    name: str,
    arguments: Mapping[str, str] | None = None,
    **options: Any,
) -> _Request:
    """``prompts/get``: ``{"messages": [...], "description"?}``."""
    return _build(requests.get_prompt(name, arguments), options)


def complete(
    session: ClientSession,
    /,
    ref: Mapping[str, Any],
    argument_name: str,
    value: str,
    context_arguments: Mapping[str, str] | None = None,
    **options: Any,
) -> _Request:
    """``completion/complete``: ``{"completion": {"values": [...], ...}}``; ``ref`` is
    ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``."""
    return _build(requests.complete(ref, argument_name, value, context_arguments), options)


def set_logging_level(session: ClientSession, /, level: str, **options: Any) -> _Request:
    """Receive log messages at ``level`` and above: ``logging/setLevel`` in the
    initialize era; in 2026-07-28, the level goes with every later request (and this
    returns ``{}`` at once)."""
    req = session.logging_request(level)
    return _Request(None, None, options) if req is None else _build(req, options)


def listen(
    session: ClientSession,
    /,
    *,
    tools: bool = False,
    prompts: bool = False,
    resources: bool = False,
    resource_uris: Sequence[str] = (),
    **options: Any,
) -> _Request:
    """``subscriptions/listen`` (2026-07-28): open a notification stream and return the
    server's acknowledgement (``{"notifications": what was granted, "_meta": ...}``) as soon
    as it arrives. The stream's notifications (the acknowledgement first) then reach
    ``on_notification``; it lasts until the server ends it or the connection closes.
    ``timeout`` (``options``) bounds the wait for the acknowledgement."""
    req = requests.listen(
        tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
    )
    return _build(req, options)


#: The convenience calls, by name.
TABLE: Final = {
    fn.__name__: fn
    for fn in (
        ping,
        list_tools,
        call_tool,
        list_resources,
        list_resource_templates,
        read_resource,
        subscribe,
        unsubscribe,
        list_prompts,
        get_prompt,
        complete,
        set_logging_level,
        listen,
    )
}


# ---------------------------------------------------------------------- the two faces


class _AsyncRequester(_HasSession, Protocol):
    @property
    def request(self) -> Callable[..., Awaitable[Any]]: ...


class _SyncRequester(_HasSession, Protocol):
    @property
    def request(self) -> Callable[..., Any]: ...


def _signature(entry: Callable[..., Any], call: Callable[..., Any]) -> None:
    """Show ``call`` as a method: ``entry``'s name, docstring and signature, with ``self``
    for the session."""
    call.__name__ = entry.__name__
    call.__qualname__ = entry.__name__
    call.__doc__ = entry.__doc__
    sig = inspect.signature(entry)
    first, *rest = sig.parameters.values()
    self_param = first.replace(name="self", annotation=inspect.Parameter.empty)
    call.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *rest], return_annotation="dict[str, Any]"
    )


def _async(
    entry: Callable[Concatenate[ClientSession, _P], _Request],
) -> Callable[Concatenate[_AsyncRequester, _P], Coroutine[Any, Any, dict[str, Any]]]:
    async def call(self: _AsyncRequester, /, *args: _P.args, **kwargs: _P.kwargs) -> dict[str, Any]:
        req = entry(self.session, *args, **kwargs)
        if req.method is None:
            return {}
        result: dict[str, Any] = await self.request(req.method, req.params, **req.options)
        return result

    _signature(entry, call)
    return call


def _sync(
    entry: Callable[Concatenate[ClientSession, _P], _Request],
) -> Callable[Concatenate[_SyncRequester, _P], dict[str, Any]]:
    def call(self: _SyncRequester, /, *args: _P.args, **kwargs: _P.kwargs) -> dict[str, Any]:
        req = entry(self.session, *args, **kwargs)
        if req.method is None:
            return {}
        result: dict[str, Any] = self.request(req.method, req.params, **req.options)
        return result

    _signature(entry, call)
    return call


_REQUEST_DOC: Final = """Send a request and return its result.

        :param timeout: seconds before the request is cancelled and
            :class:`~mcp_sansio.session.RequestTimeout` raised (default: the client's
            ``timeout``, itself 60 s by default; ``None``: no limit).
        :param on_progress: called with the params of each ``notifications/progress`` for
            this request (``progress``, ``total``, ``message``); if it raises, the request
            is cancelled and the exception raised here.
        :param reset_on_progress: restart the timeout on each progress notification (a
            progress token is sent even without ``on_progress``)…
        :param max_timeout: …but never beyond this many seconds in all.

        Raises :class:`~mcp_sansio.session.McpError` for an error answer,
        :class:`~mcp_sansio.session.RequestTimeout`,
        :class:`~mcp_sansio.session.ConnectionLost` (also once the client is closed), and
        :class:`~mcp_sansio.LocalProtocolError` for a request the protocol forbids now
        (nothing is sent). If the calling task is cancelled (async runtimes), the server is
        told (``notifications/cancelled``) and the cancellation goes on.
        """

_NOTIFY_DOC: Final = """Send a notification (an application method's, ``methods=``, or a
        built-in one). Raises :class:`~mcp_sansio.LocalProtocolError` for one the protocol
        forbids now (nothing is sent), :class:`~mcp_sansio.session.ConnectionLost` once the
        connection is closed."""


class _ClientFace:
    """What the async and the sync face share: the hooks a runtime supplies, and the start
    of a call."""

    session: ClientSession

    def _check_open(self) -> None:  # pragma: no cover - runtimes override
        raise NotImplementedError

    def _now(self) -> float:  # pragma: no cover - runtimes override
        raise NotImplementedError

    def _wrap_progress(
        self, on_progress: Callable[[Mapping[str, Any]], Any]
    ) -> Callable[[Mapping[str, Any]], Any]:
        """The callback the session calls (a runtime may run what it returns as a task)."""
        return on_progress

    def _begin(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float | DefaultType | None,
        reset_on_progress: bool,
        max_timeout: float | None,
        on_progress: Callable[[Mapping[str, Any]], Any] | None,
    ) -> tuple[Call, bytes]:
        """The call of :meth:`request` and the bytes to write (once the client is open)."""
        self._check_open()
        return self.session.call(
            method,
            params,
            now=self._now(),
            timeout=timeout,
            reset_on_progress=reset_on_progress,
            max_timeout=max_timeout,
            on_progress=None if on_progress is None else self._wrap_progress(on_progress),
        )


class AsyncClientMethods(_ClientFace):
    """The calls of an async client (asyncio, trio): :meth:`request`, :meth:`notify` and
    the convenience calls of :data:`TABLE`. A runtime supplies ``session`` and three hooks:
    ``_check_open()`` (raise when no call can go out), ``_now()``, and
    ``_send_call(call, data)`` (write, wait, return the outcome)."""

    async def _send_call(self, call: Call, data: bytes) -> Any:  # pragma: no cover
        raise NotImplementedError

    async def _send(self, data: bytes) -> None:  # pragma: no cover - runtimes override
        raise NotImplementedError

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | DefaultType | None = DEFAULT,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> Any:
        call, data = self._begin(
            method, params, timeout, reset_on_progress, max_timeout, on_progress
        )
        return await self._send_call(call, data)

    request.__doc__ = _REQUEST_DOC

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._check_open()
        await self._send(self.session.notify(method, params))

    notify.__doc__ = _NOTIFY_DOC

    ping = _async(ping)
    list_tools = _async(list_tools)
    call_tool = _async(call_tool)
    list_resources = _async(list_resources)
    list_resource_templates = _async(list_resource_templates)
    read_resource = _async(read_resource)
    subscribe = _async(subscribe)
    unsubscribe = _async(unsubscribe)
    list_prompts = _async(list_prompts)
    get_prompt = _async(get_prompt)
    complete = _async(complete)
    set_logging_level = _async(set_logging_level)
    listen = _async(listen)


class SyncClientMethods(_ClientFace):
    """The calls of a blocking client: :meth:`request`, :meth:`notify` and the
    convenience calls of :data:`TABLE`, with the hooks of :class:`AsyncClientMethods`
    (``_send_call`` and ``_send`` not coroutines)."""

    def _send_call(self, call: Call, data: bytes) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _send(self, data: bytes) -> None:  # pragma: no cover - runtimes override
        raise NotImplementedError

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | DefaultType | None = DEFAULT,
        reset_on_progress: bool = False,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        on_progress: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> Any:
        call, data = self._begin(
            method, params, timeout, reset_on_progress, max_timeout, on_progress
        )
        return self._send_call(call, data)

    request.__doc__ = _REQUEST_DOC

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._check_open()
        self._send(self.session.notify(method, params))

    notify.__doc__ = _NOTIFY_DOC

    ping = _sync(ping)
    list_tools = _sync(list_tools)
    call_tool = _sync(call_tool)
    list_resources = _sync(list_resources)
    list_resource_templates = _sync(list_resource_templates)
    read_resource = _sync(read_resource)
    subscribe = _sync(subscribe)
    unsubscribe = _sync(unsubscribe)
    list_prompts = _sync(list_prompts)
    get_prompt = _sync(get_prompt)
    complete = _sync(complete)
    set_logging_level = _sync(set_logging_level)
    listen = _sync(listen)
