"""Requiring tokens on the Streamable HTTP server, sans-IO: what
:class:`~mcp_sansio.http.HttpServer` does with ``auth=`` (a
:class:`~mcp_sansio.auth._resource.ServerAuth`).

For each request, before anything else is decided about it (a session found, made, or
fed):

1. a ``GET`` of one of the resource's metadata paths gets the protected resource metadata
   (RFC 9728 section 3.2: "A successful response **MUST** use the 200 OK HTTP status code
   and return a JSON object using the ``application/json`` content type"), no token
   needed; another method there gets 405;
2. a request to the MCP endpoint with ``access_token`` in its query gets 400
   ``invalid_request`` ("Access tokens **MUST NOT** be included in the URI query string");
3. no ``Authorization: Bearer`` token: 401 with ``resource_metadata`` and ``scope`` and no
   error (RFC 6750 section 3); a malformed one: 400 ``invalid_request``. With
   ``ServerAuth.dpop``, ``Authorization: DPoP`` is read first (with ``required``, only it),
   and its ``DPoP`` proof is checked (:class:`~mcp_sansio.auth.DPoPProofs`): refused, 401
   with ``DPoP error="invalid_dpop_proof"``; every 401 then carries a ``DPoP`` challenge
   with ``algs`` too;
4. the token is verified (the verifier may ask for HTTP requests: :class:`Fetch` work for
   the binding); refused: 401 ``invalid_token``; without the required scopes: 403
   ``insufficient_scope`` with ``scope``; not checkable now (the verifier's authorization
   server did not answer usably): 503 with ``Retry-After``. With ``ServerAuth.dpop``, a
   DPoP token must be bound (``cnf.jkt``) to the proof's key, and a bound token sent as
   ``Bearer`` is refused (RFC 9449 section 7.2): 401 ``invalid_token``;
5. the ``Authorization`` header (and ``DPoP``) is dropped from the exchange (the token goes
   no further: "MCP servers **MUST NOT** accept or transit any other tokens") and the
   principal is kept on it, for the session it reaches: a new session belongs to it, a session of
   another principal is not found (404: the security best practices' "``<user_id>:
   <session_id>``" key, so that "even if an attacker guesses a session ID, they cannot
   impersonate another user"), each request's handler sees it
   (:attr:`~mcp_sansio.session.ContextBase.principal`), and ``requestState`` is sealed for
   it (a state sealed for one principal does not open for another).

Every answer of 401, 403 and 503 is a JSON-RPC error body as the server's other refusals are
(its ``id`` null: the body was not read), and no answer or log ever holds the token.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable
from typing import Any, Final

from .._events import RequestId
from ..auth._dpop_proof import BadProof, bound_key
from ..auth._oauth import HttpRequest
from ..auth._resource import (
    InvalidToken,
    Principal,
    ServerAuth,
    Unavailable,
    Verification,
    bearer_token,
    query_token,
)
from ..session import ServerSession
from ..session._context import bind_principals
from ._sessions import Exchange, Fetch, HttpSession, Wake, Work

__all__ = ["authorize", "bind_session", "fetched", "same_principal"]

_log = logging.getLogger("mcp_sansio.http")
_AUTHORIZATION: Final = "authorization"
_DPOP: Final = "dpop"
#: The most HTTP requests one verification may ask for (a bound on a faulty verifier).
MAX_FETCHES: Final = 4


def _refuse(ex: Exchange, answer: tuple[int, tuple[tuple[str, str], ...]], why: str) -> None:
    status, headers = answer
    ex.headers.pop(_AUTHORIZATION, None)
    ex.headers.pop(_DPOP, None)
    ex.respond(status, why, headers=headers)


def authorize(server: Any, ex: Exchange, path: str, auth: ServerAuth) -> bool:
    """Steps 1 to 4 for ``ex`` (its head arrived; ``path`` is its target's path). ``True``:
    go on, the principal is on the exchange; ``False``: the answer is queued, or the
    verification waits for a :class:`Fetch` (:attr:`Exchange.verification`)."""
    resource = auth.resource
    if path != server.path:
        if ex.method == "GET":
            ex.respond(200, body=auth.document_bytes(), headers=(("cache-control", "max-age=300"),))
        elif ex.method == "HEAD":
            # RFC 9728 section 3.1 names GET; a HEAD answer carries no content (RFC 9110
            # section 9.3.2: the server "MUST NOT send content in the response")
            ex.respond(405, headers=(("allow", "GET"),))
        else:
            ex.respond(405, f"{ex.method} is not allowed", headers=(("allow", "GET"),))
        return False
    if query_token(ex.target):
        _refuse(
            ex,
            resource.bad_request("the access token is in the URI query", proofs=auth.dpop),
            "access tokens MUST NOT be included in the URI query string (MCP, Access Token "
            "Usage): send it in the Authorization header",
        )
        return False
    proofs = auth.dpop
    header = ex.headers.get(_AUTHORIZATION)
    token: str | None = None
    try:
        if proofs is not None:
            token = bearer_token(header, "DPoP")
        dpop = token is not None
        if token is None and (proofs is None or not proofs.required):
            token = bearer_token(header)
    except ValueError as exc:
        _refuse(
            ex, resource.bad_request(str(exc), proofs=proofs), f"malformed authorization: {exc}"
        )
        return False
    if token is None:
        scheme = "DPoP" if proofs is not None and proofs.required else "Bearer"
        _refuse(
            ex,
            resource.unauthorized(proofs=proofs),
            f"authorization required: send an access token (Authorization: {scheme}) issued "
            f"for {resource.resource}",
        )
        return False
    ex.headers.pop(_AUTHORIZATION, None)  # the token goes no further than this function
    proof = ex.headers.pop(_DPOP, None)  # nor does a proof
    now = server.state_clock()
    key: str | None = None
    if dpop:
        assert proofs is not None
        checked = proofs.check(
            proof,
            method=ex.method,
            target=resource.resource,
            token=token,
            now=now,
        )
        if isinstance(checked, BadProof):
            _log.info("DPoP proof refused for %s %s: %s", ex.method, server.path, checked.reason)
            _refuse(
                ex,
                resource.unauthorized(
                    "invalid_dpop_proof", checked.reason, proofs=proofs, dpop=True
                ),
                f"invalid DPoP proof: {checked.reason}",
            )
            return False
        key = checked
    verification = auth.verifier.verify(token, resource=resource.resource, now=now)
    del token
    return _step(server, ex, verification, auth, 0, (dpop, key)) is None


def _bound(step: Principal, auth: ServerAuth, dpop: bool, key: str | None) -> str | None:
    """Why a verified token may not be taken in the scheme it came in, else ``None``."""
    if auth.dpop is None:
        return None
    jkt = bound_key(step.claims)
    if dpop and jkt is None:
        return "the token is not DPoP-bound (it has no cnf.jkt) but was sent as a DPoP one"
    if dpop and jkt != key:
        return (
            "the token is bound to another key than the DPoP proof's (RFC 9449 section 4.3: "
            "the key the access token is bound to MUST match the proof's)"
        )
    if not dpop and jkt is not None:
        return (
            "a DPoP-bound token was sent as a Bearer token (RFC 9449 section 7.2: a resource "
            "that supports both schemes MUST reject it)"
        )
    return None


def _step(
    server: Any,
    ex: Exchange,
    verification: Verification,
    auth: ServerAuth,
    fetches: int,
    scheme: tuple[bool, str | None],
) -> HttpRequest | None:
    """Go on with ``verification``: the request it asks for (kept on the exchange), or
    ``None`` with the verdict applied (the answer queued, or the principal set).
    ``scheme``: whether the token came as a DPoP one, and the proof's key."""
    step = verification.next_step()
    if isinstance(step, HttpRequest):
        if fetches >= MAX_FETCHES:
            # the verifier's fault, not the token's
            step = Unavailable(f"the verification asked for more than {MAX_FETCHES} requests")
        else:
            ex.verification = (verification, fetches + 1, scheme)
            return step
    ex.verification = None
    resource = auth.resource
    dpop, key = scheme
    if isinstance(step, Principal):
        binding = _bound(step, auth, dpop, key)
        if binding is not None:
            step = InvalidToken(binding)
    if isinstance(step, InvalidToken):
        _log.info("token refused for %s %s: %s", ex.method, server.path, step.reason)
        _refuse(
            ex,
            resource.unauthorized("invalid_token", step.reason, proofs=auth.dpop, dpop=dpop),
            f"invalid token: {step.reason}",
        )
        return None
    if isinstance(step, Unavailable):
        _log.warning("token not checked for %s %s: %s", ex.method, server.path, step.reason)
        _refuse(
            ex,
            resource.unavailable(step),
            f"the access token could not be checked now ({step.reason}); try again later",
        )
        return None
    missing = [s for s in resource.required_scopes if s not in step.scopes]
    if missing:
        # MCP 2025-11-25 and later, Scope Challenge Handling: the server SHOULD include
        # "the scopes needed to satisfy the current request" (the recommended approach:
        # with the granted ones it needs, so that none is lost).
        _refuse(
            ex,
            resource.forbidden(
                resource.required_scopes,
                f"needs scope {' '.join(missing)}",
                proofs=auth.dpop,
                dpop=dpop,
            ),
            f"insufficient scope: this server needs {' '.join(resource.required_scopes)}",
        )
        return None
    ex.principal = step
    return None


def pending(ex: Exchange) -> list[Work] | None:
    """The :class:`Fetch` work of an exchange whose verification waits, else ``None``."""
    if ex.verification is None:
        return None
    verification = ex.verification[0]
    step = verification.next_step()
    assert isinstance(step, HttpRequest)
    return [Fetch(ex, step)]


def fetched(
    server: Any,
    ex: Exchange,
    status: int,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    auth: ServerAuth,
) -> list[Work] | None:
    """The answer to a :class:`Fetch`: more work (another :class:`Fetch`, or the exchange
    answered and to be woken), or ``None`` when the request is authorized (the server goes
    on with it)."""
    if ex.verification is None or ex.finished:
        return [Wake((ex,))]
    verification, fetches, scheme = ex.verification
    verification.receive_response(status, headers, body, now=server.state_clock())
    request = _step(server, ex, verification, auth, fetches, scheme)
    if request is not None:
        return [Fetch(ex, request)]
    if ex.finished:
        return [Wake((ex,))]
    return None


def same_principal(hs: HttpSession, ex: Exchange) -> bool:
    """Whether ``ex`` may use ``hs``: the same principal started it (``key``), or no
    ``auth=``."""
    mine, theirs = hs.principal, ex.principal
    if mine is None and theirs is None:
        return True
    return isinstance(mine, Principal) and isinstance(theirs, Principal) and mine.key == theirs.key


def bind_session(hs: HttpSession, principal: Principal) -> None:
    """``hs`` belongs to ``principal``: its ``requestState`` is sealed for it, and its
    handlers see the principal of the request they serve."""
    hs.principal = principal
    session: ServerSession = hs.session
    session.state_principal = principal.key
    ref = weakref.ref(hs)

    def principal_of(request_id: RequestId | None) -> Any:
        owner = ref()
        if owner is None:
            return None
        stream = owner.by_request.get(request_id) if request_id is not None else None
        if stream is not None and stream.principal is not None:
            return stream.principal
        return owner.principal

    bind_principals(session, principal_of)


class AuthHooks:
    """What ``auth=`` adds to :class:`~mcp_sansio.http.HttpServer`: :meth:`fetched`."""

    auth: ServerAuth | None = None
    """The resource and verifier (``None``: no token is required)."""

    def fetched(
        self,
        ex: Exchange,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
    ) -> list[Work]:
        """The answer to a :class:`Fetch` for ``ex`` (``status`` 0: the request could not
        be made). Returns the work to carry out, as :meth:`end` does (wake ``ex``: its
        answer may be ready)."""
        server: Any = self  # an HttpServer
        assert self.auth is not None
        out = fetched(server, ex, status, headers, body, self.auth)
        if out is not None:
            return out
        server._head(ex)  # the rest of begin(), now that the principal is known
        return [Wake((ex,)), *server.end(ex)]
