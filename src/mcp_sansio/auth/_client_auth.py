"""What an HTTP client takes to authorize its requests: :class:`ClientAuth` and :class:`Flow`.

The HTTP clients of every runtime take one :class:`ClientAuth`. Before each request to the
MCP server they add :meth:`ClientAuth.headers` (``Authorization``, and a DPoP proof where
one is used). They show it every answer's status and headers
(:meth:`ClientAuth.answered`). When the server answers 401 or 403, they hand the answer to
:meth:`ClientAuth.challenged`; a :class:`Flow` back means "run this, then send the request
again"; ``None`` means the request fails with that status. Running a flow is the runtime's
only part: make each :class:`~mcp_sansio.auth.HttpRequest` it asks for and hand the answer
back, give an :class:`~mcp_sansio.auth.OpenUrl` to the user's handler and hand back the URL
the browser was redirected to, and on :class:`~mcp_sansio.auth.Authorized` tell the
:class:`ClientAuth` (:meth:`ClientAuth.authorized`) and resend. Every decision (which
challenge to answer, how often, with which grant) is the :class:`ClientAuth`'s, so the three
runtimes make the same ones. Neither protocol does I/O or reads a clock: ``now`` is the
caller's (any monotonic or wall clock, the same one throughout).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ._flow import Authorized, Step

__all__ = ["ClientAuth", "Flow"]


class Flow(Protocol):
    """A sans-IO grant: say the next step, take the answers back (:class:`~mcp_sansio.auth.AuthFlow`
    is one; the extensions' grants are others)."""

    def next_step(self) -> Step:
        """The HTTP request to make, the URL a person must open, or the result."""
        ...

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        now: float | None = None,
    ) -> None:
        """The answer to the last :class:`~mcp_sansio.auth.HttpRequest`; raises the step's
        :class:`~mcp_sansio.auth.AuthError` on a failure."""
        ...

    def receive_redirect(self, url: str) -> None:
        """The URL the person's browser was redirected to after an
        :class:`~mcp_sansio.auth.OpenUrl`."""
        ...


class ClientAuth(Protocol):
    """How an HTTP client authorizes its requests to one MCP server."""

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        """The headers to add to a request (``method`` ``url``) to the MCP server; empty
        before any token is held."""
        ...

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        """The MCP server answered ``status`` (401 or 403) with ``headers``: the flow to run
        before sending the request again, or ``None`` to fail the request with it."""
        ...

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        """The MCP server answered a request with ``status`` and ``headers`` (names in lower
        case): every answer, a success or not, before a 401 or 403 goes to
        :meth:`challenged`. What a server says on any answer (RFC 9449's ``DPoP-Nonce``) is
        kept from here; most implementations do nothing."""
        ...

    def authorized(self, result: Authorized, *, now: float) -> None:
        """A flow from :meth:`challenged` ended with ``result``; :meth:`headers` uses it."""
        ...
