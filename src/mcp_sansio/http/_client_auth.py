"""Authorization of a Streamable HTTP client's requests, sans-IO: the sequencing every runtime
shares (hold the request, run the flow's steps, send the request again).

The transport takes one :class:`~mcp_sansio.auth.ClientAuth` (``auth=``) for the MCP server
at ``url``. It never reads a clock of its own: ``clock`` (the binding's, a wall clock by
default) gives the ``now`` of every call into the :class:`~mcp_sansio.auth.ClientAuth` and
its flows.

- **Headers.** Each time the HTTP layer writes a request to the MCP server (a POST, the GET
  stream, a resumption, the ``DELETE``), it adds
  :meth:`~HttpClientTransport.request_headers`: the
  :meth:`~mcp_sansio.auth.ClientAuth.headers` for that method and URL, as of that moment (a
  request sent again after a flow carries the new token, and a DPoP proof is made per
  request).
- **Every answer.** The status and headers (names in lower case) of every answer of the MCP
  server, a success or not, go to :meth:`~mcp_sansio.auth.ClientAuth.answered` as they
  arrive, before a 401 or 403 goes on as a challenge (a server's ``DPoP-Nonce`` on a
  success is taken there).
- **A challenge.** A 401 or 403 answer (its body read, and dropped) to a request that still
  matters (a POST that owes answers, or a follow-up; the GET stream; a resumption; the
  ``DELETE`` aside) is handed to :meth:`~mcp_sansio.auth.ClientAuth.challenged`, unless a
  flow is under way (the request then waits for that one: two challenges at once never
  start two flows), or the request went out before the last flow ended (it is sent again,
  with the new headers, without asking). ``None`` back: the request fails with that status,
  as without ``auth``. A :class:`~mcp_sansio.auth.Flow` back: the request is *held*, and the
  flow's steps come out as actions: :class:`AuthFetch` (make this HTTP request, to any
  origin; hand the answer to :meth:`~HttpClientTransport.auth_response`) and
  :class:`AuthOpenUrl` (a person opens the URL; hand the redirect URL to
  :meth:`~HttpClientTransport.auth_redirect`). A binding given no ``open_url`` handler
  never sees an :class:`AuthOpenUrl`: the flow fails there with an
  :class:`~mcp_sansio.auth.AuthError` of step ``"authorization request"`` that says so.
- **The end.** :class:`~mcp_sansio.auth.Authorized`: the transport tells
  :meth:`~mcp_sansio.auth.ClientAuth.authorized`, then sends every held request again,
  exactly as it was (the same stream number, method, target, headers and JSON-RPC body;
  only the authorization headers are made anew), once per flow: a challenge to the resent
  request goes to :meth:`~mcp_sansio.auth.ClientAuth.challenged` again, which decides
  whether there is another flow. A failure (the :class:`~mcp_sansio.auth.AuthError` a step
  raised, an :class:`AuthFetch` that got no answer, the ``open_url`` handler's exception)
  fails every held request: its requests get a JSON-RPC error (code
  :data:`~mcp_sansio.http._client.TRANSPORT_ERROR`, ``"authorization failed: <step>:
  <reason>"``, ``data`` ``{"status": 401, "authorization": {"failure": n, "step": ...,
  "error": <class name>}}``), and the runtime clients raise the error itself
  (:func:`authorization_failure`) rather than an ``McpError``.

No token is ever in an action's ``repr``, a message or a log line: the transport quotes only
an :class:`~mcp_sansio.auth.AuthError`'s own text (which holds none) or an exception's class
name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from ..auth._client_auth import ClientAuth, Flow
from ..auth._errors import AuthError, AuthUsageError
from ..auth._flow import Authorized, OpenUrl
from ..auth._oauth import HttpRequest as AuthHttpRequest
from ..session._client import AUTHORIZATION_FAILURE
from ._client_base import TransportBase
from ._client_parts import (
    _DELETE,
    _LISTEN,
    _NONE,
    _POST,
    _REOPEN,
    _RESUME,
    DEFAULT_FETCH_MAX_BODY,
    DEFAULT_FETCH_TIMEOUT,
    AuthFetch,
    AuthOpenUrl,
    ClientAction,
    FetchError,
    FetchResponse,
    HttpRequest,
    ToSession,
    TransportProblem,
    _Exchange,
)

__all__ = [
    "AUTH_STATUSES",
    "DEFAULT_FETCH_MAX_BODY",
    "DEFAULT_FETCH_TIMEOUT",
    "AuthFetch",
    "AuthOpenUrl",
    "Authorizing",
    "FetchError",
    "FetchResponse",
    "authorization_failure",
]

#: The statuses that are handed to :meth:`~mcp_sansio.auth.ClientAuth.challenged`.
AUTH_STATUSES: Final = frozenset({401, 403})
#: How many failures the transport keeps for :func:`authorization_failure` (the oldest go).
_KEPT_FAILURES: Final = 32
#: The step an :class:`AuthFetch` that got no answer failed at, by the flow's ``phase``.
_STEP_OF_PHASE: Final = {
    "resource metadata": "resource metadata",
    "server metadata": "server metadata",
    "refresh": "token request",
    "token": "token request",
}


class _Run:
    """A flow under way: its number, the status that started it, the requests it holds."""

    __slots__ = ("flow", "held", "number", "status")

    def __init__(self, number: int, flow: Flow, status: int) -> None:
        self.number = number
        self.flow = flow
        self.status = status
        self.held: list[_Exchange] = []


def _failure_text(error: BaseException) -> str:
    """What a message says of ``error``: an :class:`~mcp_sansio.auth.AuthError`'s own text
    (it holds no credential), else only the class of an exception of someone else's."""
    if isinstance(error, AuthError):
        return str(error)
    return f"{type(error).__name__} raised"


class Authorizing(TransportBase):
    """A transport that authorizes its requests with a :class:`~mcp_sansio.auth.ClientAuth`
    (see the module docs); without ``auth`` it behaves as before.

    :param auth: the :class:`~mcp_sansio.auth.ClientAuth`, or ``None``.
    :param url: the MCP server's URL (what :meth:`~mcp_sansio.auth.ClientAuth.headers` is
        told); required with ``auth``.
    :param clock: the ``now`` of the calls into ``auth`` and its flows (default
        :func:`time.time`: a wall clock, so that tokens kept across runs expire right).
    :param open_url: whether the binding has a handler for :class:`AuthOpenUrl`; without
        one a flow that needs a person fails at that step.
    """

    def __init__(
        self,
        target: str = "/mcp",
        *,
        auth: ClientAuth | None = None,
        url: str | None = None,
        clock: Callable[[], float] | None = None,
        open_url: bool = False,
        headers: Iterable[tuple[str, str]] | Mapping[str, str] = (),
        **options: Any,
    ) -> None:
        super().__init__(target, headers=headers, **options)
        if auth is not None and url is None:
            raise ValueError("auth= needs the MCP server's url=")
        self.auth = auth
        """The :class:`~mcp_sansio.auth.ClientAuth`, or ``None``."""
        self.url = url or ""
        """The MCP server's URL."""
        self._clock = clock if clock is not None else time.time
        self._can_open_url = open_url
        self._flow: _Run | None = None  # the flow under way
        self._flows = 0  # flows started
        self._generation = 0  # flows ended with Authorized
        self._failures: dict[int, BaseException] = {}
        self._failure_count = 0

    # ------------------------------------------------------------------ introspection

    @property
    def authorizing(self) -> bool:
        """Whether a flow is under way."""
        return self._flow is not None

    def failure(self, number: int) -> BaseException | None:
        """The error that failed the flow numbered ``number`` in a JSON-RPC error's
        ``data.authorization.failure`` (the last few are kept)."""
        return self._failures.get(number)

    # ------------------------------------------------------------------ from the HTTP layer

    def request_headers(self, request: HttpRequest) -> list[tuple[str, str]]:
        """The headers to add to ``request`` now, as it is written (the HTTP layer calls it
        each time it writes a request of the transport's): the
        :meth:`~mcp_sansio.auth.ClientAuth.headers`, or none without ``auth``."""
        ex = self._exchanges.get(request.stream)
        if ex is not None:
            ex.request = request
            ex.generation = self._generation
        if self.auth is None:
            return []
        return list(self.auth.headers(request.method, self.url, now=self._clock()))

    def auth_response(
        self,
        flow: int,
        status: int,
        headers: Sequence[tuple[str, str]] = (),
        body: bytes = b"",
    ) -> list[ClientAction]:
        """The answer to the :class:`AuthFetch` of the flow ``flow``."""
        run = self._flow
        if run is None or run.number != flow:
            return []  # the flow has ended (failed, or the transport closed)
        try:
            run.flow.receive_response(status, headers, body, now=self._clock())
        except Exception as exc:
            return self._flush(self._flow_failed(run, exc))
        return self._flush(self._advance(run))

    def auth_redirect(self, flow: int, url: str) -> list[ClientAction]:
        """The URL the browser was redirected to after the :class:`AuthOpenUrl` of the flow
        ``flow``."""
        run = self._flow
        if run is None or run.number != flow:
            return []
        try:
            run.flow.receive_redirect(url)
        except Exception as exc:
            return self._flush(self._flow_failed(run, exc))
        return self._flush(self._advance(run))

    def auth_failed(self, flow: int, error: Exception) -> list[ClientAction]:
        """The step of the flow ``flow`` could not be carried out: an :class:`AuthFetch`
        got no answer (a :class:`~mcp_sansio.http._client_fetch.FetchError`, made an
        :class:`~mcp_sansio.auth.AuthError` of the flow's step), or the ``open_url`` handler
        raised ``error``. Every request the flow holds fails with it."""
        run = self._flow
        if run is None or run.number != flow:
            return []
        if isinstance(error, FetchError):
            phase = getattr(run.flow, "phase", None)
            step = _STEP_OF_PHASE.get(phase, "token request") if type(phase) is str else None
            wrapped = AuthError(f"no answer: {error}", step=step or "token request")
            wrapped.__cause__ = error
            error = wrapped
        return self._flush(self._flow_failed(run, error))

    # ------------------------------------------------------------------ the sequencing

    def _challenged(self, ex: _Exchange) -> list[ClientAction] | None:
        """``ex`` (just popped: its response has ended) was answered 401 or 403 with the
        headers in ``ex.challenge``: the actions when it is held, sent again or failed
        here; ``None`` when it fails as any such status."""
        auth = self.auth
        request = ex.request
        if auth is None or self.closed or request is None or ex.kind == _DELETE:
            return None
        if ex.kind in (_POST, _REOPEN, _RESUME) and not ex.owed and not ex.follow_up:
            return None  # nothing waits for it
        self._exchanges[ex.stream] = ex
        if ex.generation < self._generation:
            return self._resend(ex)  # it went out with the headers of before the last flow
        run = self._flow
        if run is not None:
            run.held.append(ex)  # wait for the flow under way
            return []
        challenge = ex.challenge or []
        try:
            flow = auth.challenged(ex.status, challenge, now=self._clock())
        except Exception as exc:
            return self._fail_held([ex], exc, ex.status)
        if flow is None:
            del self._exchanges[ex.stream]
            return None
        self._flows += 1
        run = self._flow = _Run(self._flows, flow, ex.status)
        run.held.append(ex)
        return self._advance(run)

    def _advance(self, run: _Run) -> list[ClientAction]:
        """The next step of ``run``'s flow, as actions."""
        try:
            step = run.flow.next_step()
            if isinstance(step, Authorized):
                assert self.auth is not None
                self.auth.authorized(step, now=self._clock())
        except Exception as exc:
            return self._flow_failed(run, exc)
        if isinstance(step, Authorized):
            self._flow = None
            self._generation += 1
            actions: list[ClientAction] = []
            for ex in run.held:
                actions.extend(self._resend(ex))
            return actions
        if isinstance(step, OpenUrl):
            if not self._can_open_url:
                return self._flow_failed(
                    run,
                    AuthError(
                        "the flow needs a person to open the authorization URL in a browser,"
                        " and the client has no open_url handler (give connect_http an"
                        " open_url=, or authorize beforehand)",
                        step="authorization request",
                    ),
                )
            return [AuthOpenUrl(run.number, step.url)]
        if isinstance(step, AuthHttpRequest):
            return [AuthFetch(run.number, step)]
        return self._flow_failed(
            run, AuthUsageError(f"a flow's step is {type(step).__name__}, not a Step")
        )

    def _resend(self, ex: _Exchange) -> list[ClientAction]:
        """Send the held ``ex`` again, exactly as it was (its authorization headers are made
        anew as it is written), unless it was dropped meanwhile."""
        if self.closed or self._exchanges.get(ex.stream) is not ex:
            return []
        request = ex.request
        assert request is not None
        if ex.kind in (_POST, _REOPEN, _RESUME) and not ex.owed and not ex.follow_up:
            del self._exchanges[ex.stream]  # cancelled meanwhile: nothing waits for it
            return [*self._release(ex.stream), *self._follow_up_over(ex.stream)]
        ex.status = 0
        ex.mode = _NONE
        ex.buffer = []
        ex.size = 0
        ex.truncated = False
        ex.decoder = None
        ex.oversized = 0
        ex.malformed = False
        ex.challenge = None
        if request.delay:
            request = attrs.evolve(request, delay=0.0)
        return [request]

    def _flow_failed(self, run: _Run, error: BaseException) -> list[ClientAction]:
        if self._flow is run:
            self._flow = None
        return self._fail_held(run.held, error, run.status)

    def _fail_held(
        self, held: list[_Exchange], error: BaseException, status: int
    ) -> list[ClientAction]:
        """Fail the requests ``held`` with ``error`` (see the module docs)."""
        self._failure_count += 1
        number = self._failure_count
        self._failures[number] = error
        while len(self._failures) > _KEPT_FAILURES:
            del self._failures[next(iter(self._failures))]
        message = f"authorization failed: {_failure_text(error)}"
        data = {
            "failure": number,
            "step": error.step if isinstance(error, AuthError) else None,
            "error": type(error).__name__,
        }
        out: list[bytes] = []
        actions: list[ClientAction] = []
        for ex in held:
            if self._exchanges.get(ex.stream) is not ex:
                continue  # dropped meanwhile (cancelled, closed)
            del self._exchanges[ex.stream]
            if ex.kind == _LISTEN:
                actions.append(TransportProblem(f"the GET stream: {message}"))
            elif ex.owed:
                self._fail_owed(ex, message, status, out, {AUTHORIZATION_FAILURE: data})
            else:
                actions.append(TransportProblem(f"a message was not delivered: {message}"))
            actions.extend(self._release(ex.stream))
            actions.extend(self._follow_up_over(ex.stream))
        if out:
            actions.insert(0, ToSession(b"".join(out)))
        return actions

    def _fail_owed(
        self,
        ex: _Exchange,
        message: str,
        status: int,
        out: list[bytes],
        data: Mapping[str, Any] | None = None,
    ) -> None:  # pragma: no cover - HttpClientTransport's
        raise NotImplementedError

    def _close_auth(self) -> None:
        """The transport is closing: the flow under way is dropped."""
        self._flow = None


def authorization_failure(source: object, error: BaseException) -> BaseException | None:
    """The error a call is to raise instead of ``error`` (an ``McpError``) when ``error`` is
    the JSON-RPC error of a failed authorization of ``source`` (an HTTP binding, or its
    transport); ``None`` otherwise. The runtime clients raise it."""
    transport = getattr(source, "transport", source)
    if not isinstance(transport, Authorizing):
        return None
    data = getattr(error, "data", None)
    found = data.get(AUTHORIZATION_FAILURE) if type(data) is dict else None
    number = found.get("failure") if type(found) is dict else None
    return transport.failure(number) if type(number) is int else None
