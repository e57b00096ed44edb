"""The OAuth client of one MCP server: :class:`OAuthClient`, the
:class:`~mcp_sansio.auth.ClientAuth` of the authorization code flow.

It holds what outlives one flow: the tokens in use, the scope asked for so far, the stores
of tokens and registered clients, and how many times a challenge was answered. Each
challenge worth answering gets a new :class:`~mcp_sansio.auth.AuthFlow`; the flows make
every other decision (discovery, registration, refresh, scope). Like them it does no I/O
and reads no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from urllib.parse import urlsplit

from ._challenge import BearerChallenge, bearer_challenge
from ._client_auth import Flow
from ._errors import ChallengeError
from ._flow import AuthFlow, Authorized
from ._oauth import ClientInfo
from ._register import ApplicationType
from ._store import ClientStore, MemoryTokenStore, TokenStore
from ._urls import canonical_resource, check_endpoint

__all__ = ["DEFAULT_MAX_STEP_UPS", "OAuthClient"]

#: The default retry limit: two step-ups per scope set, so at most three authorizations
#: for one set in all (2025-11-25 and 2026-07-28, Step-Up Authorization Flow: "Retry the
#: original request with the new authorization no more than a few times and treat this as
#: a permanent authorization failure"; "Clients **SHOULD** implement retry limits").
DEFAULT_MAX_STEP_UPS = 2
#: How many different sets of challenged scopes :class:`OAuthClient` steps up for, until
#: :meth:`OAuthClient.reset` (a server that asks for a new set each time gets no more).
DEFAULT_MAX_SCOPE_SETS = 8


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """Scheme, host and port of ``url`` (RFC 6454; the default port made explicit), or
    None when it has no host or a bad port."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not parts.hostname:
        return None
    return (scheme, parts.hostname.lower(), port or _DEFAULT_PORTS.get(scheme))


class OAuthClient:
    """How an HTTP client authorizes its requests to the MCP server ``server_url`` with
    OAuth 2.1's authorization code flow, following the authorization text of ``version``.

    The client's identity, in the order of Client Registration (see
    :class:`~mcp_sansio.auth.AuthFlow`): ``client`` (pre-registered: one
    :class:`~mcp_sansio.auth.ClientInfo`, or one per issuer), else a client registered
    before (kept in ``registrations``, by default ``store``), else
    ``client_metadata_url`` (a Client ID Metadata Document's URL, 2025-11-25 and later,
    where the server supports them), else Dynamic Client Registration (RFC 7591, as
    ``client_name``, with ``application_type`` and ``registration_metadata``).
    ``redirect_uri`` is where the person's browser comes back (``https`` or a loopback
    host). ``store`` keeps tokens (and registrations, when it is a
    :class:`~mcp_sansio.auth.ClientStore`); by default a
    :class:`~mcp_sansio.auth.MemoryTokenStore`. ``offline_access`` (2026-07-28) asks for
    refresh tokens where the server lists that scope. ``token_types`` are the token types
    taken (``Bearer``; add ``DPoP`` under a DPoP wrapper). ``max_step_ups`` is the retry limit
    and ``max_scope_sets`` the number of scope sets stepped up for (see :meth:`challenged`).

    The runtimes run one flow at a time: a challenge that comes while a flow runs should
    wait for it.
    """

    def __init__(
        self,
        server_url: str,
        *,
        version: str,
        redirect_uri: str,
        client: ClientInfo | Mapping[str, ClientInfo] | None = None,
        client_metadata_url: str | None = None,
        client_name: str | None = None,
        application_type: ApplicationType | None = None,
        registration_metadata: Mapping[str, object] | None = None,
        store: TokenStore | None = None,
        registrations: ClientStore | None = None,
        authorization_server: str | None = None,
        offline_access: bool = True,
        token_types: Collection[str] = ("bearer",),
        max_step_ups: int = DEFAULT_MAX_STEP_UPS,
        max_scope_sets: int = DEFAULT_MAX_SCOPE_SETS,
    ) -> None:
        if max_step_ups < 0:
            raise ValueError("max_step_ups must be 0 or more")
        if max_scope_sets < 0:
            raise ValueError("max_scope_sets must be 0 or more")
        check_endpoint(server_url, "the MCP server URL", "usage")
        self.server_url = canonical_resource(server_url)
        """The MCP server's canonical URI."""
        self.version = version
        """The protocol version whose authorization text the flows follow."""
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        """Where the tokens are kept."""
        if registrations is None:
            if isinstance(self.store, ClientStore):
                registrations = self.store
            else:
                registrations = MemoryTokenStore()
        self.registrations: ClientStore = registrations
        """Where registered clients are kept, by issuer."""
        self.max_step_ups = max_step_ups
        """The retry limit (see :meth:`challenged`)."""
        self.max_scope_sets = max_scope_sets
        """How many scope sets are stepped up for (see :meth:`challenged`)."""
        self._redirect_uri = redirect_uri
        self._client = client
        self._metadata_url = client_metadata_url
        self._client_name = client_name
        self._application_type = application_type
        self._registration_metadata = registration_metadata
        self._authorization_server = authorization_server
        self._offline_access = offline_access
        self._token_types = tuple(token_types)
        self.authorization: Authorized | None = None
        """The tokens in use (and where they are kept), once a flow has ended."""
        self.scope: str | None = None
        """The scope asked for last (a 2026-07-28 step-up asks for it again)."""
        # a flow built now checks every argument once, before any request is made
        self._flow(None)
        self._last: AuthFlow | None = None
        self._step_ups: dict[frozenset[str], int] = {}
        self._rejected = 0

    # -- ClientAuth -----------------------------------------------------------------

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        """``Authorization: Bearer <token>`` for a request to the MCP server's origin once a
        token is held, else nothing. MCP: "authorization **MUST** be included in every HTTP
        request from client to server"; a token is never sent elsewhere (RFC 8707: it is
        for this resource). An expired token is sent all the same: the server's 401 starts
        a flow that refreshes it (the runtime cannot run one from here)."""
        held = self.authorization
        origin = _origin(url)
        if held is None or origin is None or origin != _origin(self.server_url):
            return ()
        return (held.tokens.authorization(),)

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        """The flow that answers a 401 or a 403, or None to fail the request.

        - a challenge with ``error="insufficient_scope"`` (a 403, as RFC 6750 section 3.1
          and MCP's Runtime Insufficient Scope Errors say, or a 401): a *step-up*, a flow
          that asks the person for the challenge's ``scope`` (in 2026-07-28 with the scope
          asked for before); at most ``max_step_ups`` per set of challenged scopes ("track
          scope upgrade attempts to avoid repeated failures for the same resource and
          operation combination"), then None; and for at most ``max_scope_sets`` different
          sets until :meth:`reset` (so a server asking for a new set each time neither
          prompts the person without end nor grows the client's count table);
        - any other 401: a flow (it refreshes the token first when it can). A 401 for a
          token that had not expired at ``now`` (its expiry known) counts as a rejection
          of a fresh token (so does one for a token issued with ``expires_in`` 0); after
          ``max_step_ups`` of them in a row, None: a server that refuses every token it is
          given does not loop the client;
        - any other 403 (and any other status): None.

        A ``WWW-Authenticate`` that is not valid is read as none (the flow then finds the
        resource metadata at its well-known URIs).
        """
        values: list[str] | None = [v for k, v in headers if k.lower() == "www-authenticate"]
        challenge: BearerChallenge | None = None
        if values:
            try:
                challenge = bearer_challenge(values)
            except ChallengeError:
                values = None
        else:
            values = None
        step_up = challenge is not None and challenge.error == "insufficient_scope"
        if status == 403 and step_up:
            assert challenge is not None
            return self._step_up(challenge, values)
        if status != 401:
            return None
        if step_up:
            assert challenge is not None
            return self._step_up(challenge, values)
        held = self.authorization
        if held is not None:
            end = held.tokens.expires_at()
            if end is not None and now >= end and held.tokens.expires_in:
                # a token that lived and expired: its refresh is no rejection. One that
                # was issued expired (expires_in 0) counts: else a server issuing such
                # tokens would get refresh after refresh, without end
                self._rejected = 0
            else:
                if self._rejected >= self.max_step_ups:
                    return None
                self._rejected += 1
        return self._start(values)

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        """Nothing: only a challenge (:meth:`challenged`) changes what is sent."""

    def authorized(self, result: Authorized, *, now: float) -> None:
        """Keep ``result``'s tokens for :meth:`headers`, and the scope its flow asked for."""
        self.authorization = result
        last = self._last
        if last is not None and last.phase == "done" and last.key == result.key:
            self.scope = last.scope if last.scope is not None else result.tokens.scope
        elif result.tokens.scope is not None:
            self.scope = result.tokens.scope

    # -- the rest -------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the retry counts (the tokens and registrations stay)."""
        self._step_ups.clear()
        self._rejected = 0

    def _step_up(self, challenge: BearerChallenge, values: list[str] | None) -> Flow | None:
        key = frozenset((challenge.scope or "").split())
        done = self._step_ups.get(key, 0)
        if done >= self.max_step_ups:
            return None
        if not done and len(self._step_ups) >= self.max_scope_sets:
            return None
        self._step_ups[key] = done + 1
        return self._start(values)

    def _start(self, values: list[str] | None) -> AuthFlow:
        flow = self._last = self._flow(values)
        return flow

    def _flow(self, values: list[str] | None) -> AuthFlow:
        return AuthFlow(
            self.server_url,
            version=self.version,
            redirect_uri=self._redirect_uri,
            client=self._client,
            client_metadata_url=self._metadata_url,
            client_name=self._client_name,
            application_type=self._application_type,
            registration_metadata=self._registration_metadata,
            www_authenticate=values,
            store=self.store,
            registrations=self.registrations,
            authorization_server=self._authorization_server,
            previous_scope=self.scope,
            offline_access=self._offline_access,
            token_types=self._token_types,
        )
