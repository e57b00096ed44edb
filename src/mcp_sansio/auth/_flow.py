"""The authorization code flow as a sans-IO state machine.

:class:`AuthFlow` never does I/O and never reads the clock. It says what to do next
(:meth:`AuthFlow.next_step`): make an :class:`~mcp_sansio.auth.HttpRequest` and hand the
answer back (:meth:`AuthFlow.receive_response`); or, at the one step that needs a person,
:class:`OpenUrl`: open the URL in a browser and hand back the URL the browser was
redirected to (:meth:`AuthFlow.receive_redirect`); until :class:`Authorized` holds the
tokens, also saved in the :class:`~mcp_sansio.auth.TokenStore`. The steps::

    401 + WWW-Authenticate ──► protected resource metadata (RFC 9728; not in 2025-03-26)
        ──► authorization server metadata (RFC 8414 / OpenID Connect)  [both: Discovery]
        ──► client registration (RFC 7591), if no client is known for the issuer
        ──► refresh_token grant, if the store holds a refresh token
        ──► OpenUrl (PKCE S256, state, resource, scope) ──► redirect (state, iss checked)
        ──► authorization_code grant ──► Authorized

A failure raises the :class:`~mcp_sansio.auth.AuthError` subclass of its step and ends
the flow (every later call raises :class:`~mcp_sansio.auth.AuthUsageError`).
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from ._challenge import BearerChallenge, bearer_challenge
from ._discovery import Discovery
from ._errors import (
    AuthError,
    AuthUsageError,
    ClientBindingError,
    ServerMetadataError,
    TokenErrorResponse,
    detail,
)
from ._metadata import PROFILES, ResourceMetadata, ServerMetadata
from ._oauth import (
    AuthMethod,
    ClientInfo,
    HttpRequest,
    Pkce,
    authorization_url,
    code_grant,
    parse_authorization_response,
    parse_token_response,
    refresh_grant,
    token_request,
)
from ._register import (
    ApplicationType,
    check_client_metadata_url,
    parse_registration_response,
    registration_auth_method,
    registration_request,
)
from ._store import ClientStore, MemoryTokenStore, TokenKey, Tokens, TokenStore
from ._urls import canonical_resource, check_endpoint

__all__ = ["AuthFlow", "Authorized", "OpenUrl", "Step"]


@dataclass(frozen=True)
class OpenUrl:
    """The person's step: open ``url`` (in a browser) and hand the redirect URL back to
    :meth:`AuthFlow.receive_redirect`."""

    url: str
    """The authorization request URL."""


@dataclass(frozen=True)
class Authorized:
    """The flow is done: ``tokens`` (saved under ``key``) authorize requests."""

    tokens: Tokens
    """The tokens; ``tokens.authorization()`` is the header to send."""
    key: TokenKey
    """Where they are kept in the store."""


#: What :meth:`AuthFlow.next_step` returns.
Step = HttpRequest | OpenUrl | Authorized

#: Where the flow's client came from (:attr:`AuthFlow.client_source`).
ClientSource = Literal["pre-registered", "stored", "metadata document", "registered"]

_REGISTER, _REFRESH, _AUTHORIZE, _TOKEN, _DONE, _FAILED = (
    "registration",
    "refresh",
    "authorize",
    "token",
    "done",
    "failed",
)


class AuthFlow:
    """One authorization of the client at the MCP server ``server_url``.

    ``version`` is the protocol version whose authorization text the flow follows
    (2025-03-26, 2025-06-18, 2025-11-25 or 2026-07-28). ``www_authenticate`` holds the
    ``WWW-Authenticate`` field value(s) of the 401 (or 403) that started it, if any.
    The client is found in the order of Client Registration (2025-11-25 and later:
    "Clients supporting all options **SHOULD** use the following priority order"):
    ``client``, the client's pre-registered identity, or one per issuer (a mapping: MCP
    2026-07-28 keys client credentials by the authorization server's ``issuer``; a
    :class:`~mcp_sansio.auth.ClientInfo` whose ``issuer`` is set is used with that
    authorization server only); else one registered before, from ``registrations`` (by
    default ``store``, when it is a :class:`~mcp_sansio.auth.ClientStore`); else
    ``client_metadata_url`` as the ``client_id`` when the server sets
    ``client_id_metadata_document_supported`` (2025-11-25 and later); else Dynamic Client
    Registration at the server's ``registration_endpoint`` (RFC 7591, with
    ``client_name``, ``application_type`` and ``registration_metadata``; the client
    registered is saved in ``registrations``); else
    :class:`~mcp_sansio.auth.ClientBindingError`.

    ``redirect_uri`` must be ``https`` or on a loopback host. ``store`` defaults to a new
    :class:`~mcp_sansio.auth.MemoryTokenStore`. ``authorization_server`` picks one of the
    resource's authorization servers (by default the first it lists: RFC 9728 section
    7.6 leaves the choice to the client). ``previous_scope`` is the scope the client asked
    for before (a step-up in 2026-07-28 asks for it too; by default the stored tokens'
    scope). ``offline_access`` (2026-07-28) asks for ``offline_access`` where the server
    lists it. ``token_types`` are the ``token_type`` values taken from the token endpoint
    (``Bearer`` by default; a DPoP wrapper adds ``DPoP``). ``state`` and ``code_verifier``
    are for tests: by default each is 32 random
    bytes. The flow reads no clock: the ``now`` given to :meth:`receive_response` (the
    caller's clock, any unit) is recorded in the tokens.
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
        www_authenticate: str | Iterable[str] | None = None,
        store: TokenStore | None = None,
        registrations: ClientStore | None = None,
        authorization_server: str | None = None,
        previous_scope: str | None = None,
        offline_access: bool = True,
        token_types: Collection[str] = ("bearer",),
        state: str | None = None,
        code_verifier: str | None = None,
    ) -> None:
        profile = PROFILES.get(version)
        if profile is None:
            raise AuthUsageError(
                f"no authorization text for version {detail(version)!r} (one of {sorted(PROFILES)})"
            )
        self.profile = profile
        """The version's :class:`~mcp_sansio.auth.AuthProfile`."""
        check_endpoint(server_url, "the MCP server URL", "usage")
        self.server_url = canonical_resource(server_url)
        """The MCP server's canonical URI (RFC 8707 section 2)."""
        self.redirect_uri = check_endpoint(
            redirect_uri, "the redirect_uri", "authorization request"
        )
        """Where the authorization server sends the person back."""
        self._clients = client
        self._metadata_url = (
            None if client_metadata_url is None else check_client_metadata_url(client_metadata_url)
        )
        self._client_name = client_name
        self._application_type = application_type
        self._registration_metadata = registration_metadata
        self.client: ClientInfo | None = None
        """The client's registration with the authorization server, once it is known."""
        self.client_source: ClientSource | None = None
        """Where :attr:`client` came from, once it is known."""
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        """Where the tokens are kept."""
        if registrations is None:
            if isinstance(self.store, ClientStore):
                registrations = self.store
            else:
                registrations = MemoryTokenStore()
        self.registrations: ClientStore = registrations
        """Where registered clients are kept, by issuer."""
        self.challenge: BearerChallenge | None = (
            None if www_authenticate is None else bearer_challenge(www_authenticate)
        )
        """The Bearer challenge that started the flow, if any."""
        self.resource_metadata: ResourceMetadata | None = None
        """The protected resource metadata, once fetched."""
        self.server_metadata: ServerMetadata | None = None
        """The authorization server metadata, once fetched (or the 2025-03-26 defaults)."""
        self.key: TokenKey | None = None
        """Where the tokens go in the store, once the issuer is known."""
        self.resource = self.server_url
        """The ``resource`` parameter sent (the metadata's ``resource`` once known)."""
        self.scope: str | None = None
        """The ``scope`` requested, chosen when the person's step starts."""
        self._previous_scope = previous_scope
        self._offline_access = offline_access
        self._token_types = tuple(token_types)
        self._state = state if state is not None else secrets.token_urlsafe(32)
        self._pkce = Pkce.make(code_verifier)
        self._refresh_token: str | None = None
        self._kept: Tokens | None = None
        self._result: Authorized | None = None
        self._request: HttpRequest | None = None
        self._requested_method: AuthMethod = "none"
        self._discovery: Discovery | None = Discovery(
            self.server_url,
            profile,
            challenge=self.challenge,
            authorization_server=authorization_server,
        )
        self._phase = self._discovery.phase

    @property
    def phase(self) -> str:
        """``"resource metadata"``, ``"server metadata"``, ``"registration"``,
        ``"refresh"``, ``"authorize"``, ``"token"``, ``"done"`` or ``"failed"``."""
        return self._phase

    # -- the caller's three verbs ---------------------------------------------------

    def next_step(self) -> Step:
        """What to do now (the same answer until a response or redirect is handed back)."""
        if self._discovery is not None and self._phase != _FAILED:
            return self._discovery.request
        if self._phase in (_REGISTER, _REFRESH, _TOKEN):
            assert self._request is not None
            return self._request
        if self._phase == _AUTHORIZE:
            return OpenUrl(self._authorization_url())
        if self._phase == _DONE:
            assert self._result is not None
            return self._result
        raise AuthUsageError("the flow has failed")

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        now: float | None = None,
    ) -> None:
        """Hand back the answer to the :class:`~mcp_sansio.auth.HttpRequest` of
        :meth:`next_step`. Raises the step's :class:`~mcp_sansio.auth.AuthError`."""
        discovery = self._discovery if self._phase != _FAILED else None
        if discovery is None and self._phase not in (_REGISTER, _REFRESH, _TOKEN):
            raise AuthUsageError(f"no HTTP request is waiting (phase {self._phase!r})")
        try:
            if discovery is not None:
                self._on_discovery(discovery, status, body)
            elif self._phase == _REGISTER:
                self._on_registration(status, body)
            elif self._phase == _REFRESH:
                self._on_refresh(status, body, now)
            else:
                self._on_token(status, body, now)
        except AuthError:
            self._phase = _FAILED
            raise

    def receive_redirect(self, url: str) -> None:
        """Hand back the URL the person's browser was redirected to after :class:`OpenUrl`
        (its state and ``iss`` are checked before the code is used)."""
        if self._phase != _AUTHORIZE:
            raise AuthUsageError(f"no redirect is waiting (phase {self._phase!r})")
        meta = self.server_metadata
        assert meta is not None
        try:
            code = parse_authorization_response(
                url,
                redirect_uri=self.redirect_uri,
                state=self._state,
                issuer=meta.issuer,
                iss_supported=meta.authorization_response_iss_parameter_supported,
            )
        except AuthError:
            self._phase = _FAILED
            raise
        grant = code_grant(code.code, self.redirect_uri, self._pkce.verifier)
        self._request = self._token_request(grant)
        self._phase = _TOKEN

    # -- the steps ------------------------------------------------------------------

    def _on_discovery(self, discovery: Discovery, status: int, body: bytes) -> None:
        found = discovery.receive(status, body)
        self.resource_metadata = discovery.resource_metadata
        if found is None:
            self._phase = discovery.phase
            return
        self._discovery = None
        self.resource = found.resource
        self._use_server(found.server)

    def _use_server(self, meta: ServerMetadata) -> None:
        if meta.authorization_endpoint is None:
            raise ServerMetadataError(
                "the server lists no grant type that uses an authorization endpoint, so the "
                "authorization code flow cannot run (RFC 8414 section 2)"
            )
        self.server_metadata = meta
        self.key = TokenKey(meta.issuer, self.resource)
        self._kept = self.store.load(self.key)
        found = self._client_for(meta)
        if found is None:
            assert meta.registration_endpoint is not None
            method = registration_auth_method(meta.token_endpoint_auth_methods_supported)
            self._requested_method = method
            self._request = registration_request(
                meta.registration_endpoint,
                redirect_uri=self.redirect_uri,
                auth_method=method,
                client_name=self._client_name,
                application_type=self._application_type,
                extra=self._registration_metadata,
            )
            self._phase = _REGISTER
            return
        self.client, self.client_source = found
        self._refresh_or_authorize()

    def _on_registration(self, status: int, body: bytes) -> None:
        meta = self.server_metadata
        assert meta is not None
        client = parse_registration_response(
            status,
            body,
            issuer=meta.issuer,
            redirect_uri=self.redirect_uri,
            requested_method=self._requested_method,
        )
        self.registrations.save_client(meta.issuer, client)
        self.client, self.client_source = client, "registered"
        # a refresh token is bound to the client it was issued to (RFC 6749 section 6):
        # one kept from before this registration is not this client's
        self._kept = None
        self._refresh_or_authorize()

    def _refresh_or_authorize(self) -> None:
        kept = self._kept
        if kept is not None and kept.refresh_token is not None and self._refresh_suffices(kept):
            self._refresh_token = kept.refresh_token
            self._request = self._token_request(refresh_grant(kept.refresh_token))
            self._phase = _REFRESH
        else:
            self._phase = _AUTHORIZE

    def _refresh_suffices(self, kept: Tokens) -> bool:
        """Whether a refresh can answer the challenge: not for a step-up, nor for a
        challenge whose ``scope`` names one the kept tokens were not granted (RFC 6749
        section 6: the refreshed scope "**MUST NOT** include any scope not originally
        granted by the resource owner")."""
        if self._step_up():
            return False
        challenge = self.challenge
        if challenge is None or challenge.scope is None or kept.scope is None:
            return True
        granted = set(kept.scope.split())
        return all(s in granted for s in challenge.scope.split())

    def _on_token(self, status: int, body: bytes, now: float | None) -> None:
        try:
            tokens = parse_token_response(status, body, now=now, token_types=self._token_types)
        except TokenErrorResponse as e:
            if e.error == "invalid_client" and self.client_source in ("stored", "registered"):
                # RFC 6749 section 5.2: "Client authentication failed": the registration
                # (or its secret) is no longer good; the next flow registers again
                self._forget_registration()
            raise
        self._finish(tokens)

    def _forget_registration(self) -> None:
        meta = self.server_metadata
        assert meta is not None
        self.registrations.delete_client(meta.issuer)

    def _on_refresh(self, status: int, body: bytes, now: float | None) -> None:
        try:
            tokens = parse_token_response(status, body, now=now, token_types=self._token_types)
        except TokenErrorResponse as e:
            if e.error == "invalid_client" and self.client_source in ("stored", "registered"):
                self._forget_registration()
            if e.error != "invalid_grant":
                raise
            # RFC 6749 section 5.2: the refresh token is "invalid, expired, revoked":
            # forget it and ask the person
            assert self.key is not None
            self.store.delete(self.key)
            self._phase = _AUTHORIZE
            return
        if tokens.refresh_token is None and self._refresh_token is not None:
            # RFC 6749 section 6: a new refresh token MAY be issued; else the old one stays
            tokens = Tokens(
                tokens.access_token,
                tokens.token_type,
                tokens.expires_in,
                self._refresh_token,
                tokens.scope,
                tokens.obtained_at,
            )
        self._finish(tokens)

    def _client_for(self, meta: ServerMetadata) -> tuple[ClientInfo, ClientSource] | None:
        """The client to use with ``meta``'s server, in the priority order of the class's
        docstring; None: register one (RFC 7591)."""
        issuer = meta.issuer
        clients = self._clients
        if isinstance(clients, ClientInfo):
            if clients.issuer is None or clients.issuer == issuer:
                return clients, "pre-registered"
            # 2026-07-28: "If the authorization server indicated by protected resource
            # metadata no longer matches the one the credentials were registered with,
            # clients SHOULD surface an error rather than silently attempting to use
            # mismatched credentials."
            raise ClientBindingError(
                f"the client's credentials are bound to {detail(clients.issuer)!r}, not the "
                f"authorization server {detail(issuer)!r} (they MUST NOT be reused)"
            )
        if clients is not None:
            found = clients.get(issuer)
            if found is not None:
                if found.issuer is not None and found.issuer != issuer:
                    raise ClientBindingError(
                        f"the credentials given for {detail(issuer)!r} are bound to "
                        f"{detail(found.issuer)!r} (they MUST NOT be reused)"
                    )
                return found, "pre-registered"
        stored = self.registrations.load_client(issuer)
        if stored is not None:
            if stored.issuer != issuer:
                raise ClientBindingError(
                    f"the registration kept for {detail(issuer)!r} is bound to "
                    f"{detail(stored.issuer)!r} (it MUST NOT be reused)"
                )
            return stored, "stored"
        if (
            self._metadata_url is not None
            and self.profile.client_id_metadata_documents
            and meta.client_id_metadata_document_supported
        ):
            # "Client IDs based on Client ID Metadata Documents are portable across
            # authorization servers"; the client authenticates with none (no secret)
            return ClientInfo(self._metadata_url, auth_method="none"), "metadata document"
        if meta.registration_endpoint is not None:
            return None
        raise ClientBindingError(
            f"no client for the authorization server {detail(issuer)!r}: none was given for "
            "it, it offers no registration_endpoint"
            + (
                ""
                if self._metadata_url is None or not self.profile.client_id_metadata_documents
                else " and does not set client_id_metadata_document_supported"
            )
            + " (the client information must be entered)"
        )

    def _step_up(self) -> bool:
        """Whether the flow answers an ``insufficient_scope`` challenge: then no refresh
        (RFC 6749 section 6: the refreshed scope "**MUST NOT** include any scope not
        originally granted by the resource owner"), the person is asked."""
        return self.challenge is not None and self.challenge.error == "insufficient_scope"

    def _finish(self, tokens: Tokens) -> None:
        assert self.key is not None
        if tokens.scope is None and self._phase == _TOKEN and self.scope is not None:
            # RFC 6749 section 5.1: scope is "OPTIONAL, if identical to the scope requested"
            tokens = Tokens(
                tokens.access_token,
                tokens.token_type,
                tokens.expires_in,
                tokens.refresh_token,
                self.scope,
                tokens.obtained_at,
            )
        self.store.save(self.key, tokens)
        self._result = Authorized(tokens, self.key)
        self._request = None
        self._phase = _DONE

    def _token_request(self, grant: dict[str, str]) -> HttpRequest:
        meta = self.server_metadata
        assert meta is not None
        client = self.client
        assert client is not None
        method = client.method_for(meta.token_endpoint_auth_methods_supported)
        return token_request(
            meta.token_endpoint, grant, client=client, method=method, resource=self.resource
        )

    def _choose_scope(self) -> str | None:
        """MCP 2025-11-25 and later, Scope Selection Strategy (SHOULD): the challenge's
        ``scope``, else every scope of the resource metadata's ``scopes_supported``,
        "omitting the ``scope`` parameter if ``scopes_supported`` is undefined"; on a
        step-up or another re-authorization in 2026-07-28, the scopes asked for before
        first (``previous_scope``; for a step-up else the kept tokens'), then the
        challenge's new ones
        (:attr:`~mcp_sansio.auth.AuthProfile.step_up_union`). Then, where
        :attr:`~mcp_sansio.auth.AuthProfile.offline_access` and the server's
        ``scopes_supported`` lists it, ``offline_access`` is added to a scope that is
        sent (never sent alone: a request without ``scope`` stays without)."""
        asked: list[str] | None = None
        if self.challenge is not None and self.challenge.scope is not None:
            asked = self.challenge.scope.split()
            kept = self._kept
            before_text = self._previous_scope
            if before_text is None and kept is not None:
                before_text = kept.scope
            # 2026-07-28, Scope Selection Strategy: "When re-authorizing, clients SHOULD
            # include these scopes alongside any previously granted scopes"; a step-up
            # also takes the kept grant when no earlier request is known
            again = self._step_up() or self._previous_scope is not None
            if again and self.profile.step_up_union and before_text:
                before = before_text.split()
                asked = before + [s for s in asked if s not in before]
        else:
            meta = self.resource_metadata
            if meta is not None and meta.scopes_supported:
                asked = list(meta.scopes_supported)
        if not asked:
            return None
        server = self.server_metadata
        if (
            self._offline_access
            and self.profile.offline_access
            and server is not None
            and server.scopes_supported is not None
            and "offline_access" in server.scopes_supported
            and "offline_access" not in asked
        ):
            asked.append("offline_access")
        return " ".join(dict.fromkeys(asked))

    def _authorization_url(self) -> str:
        meta = self.server_metadata
        assert meta is not None
        assert self.client is not None
        self.scope = self._choose_scope()
        assert meta.authorization_endpoint is not None  # (_use_server refused it)
        return authorization_url(
            meta.authorization_endpoint,
            client_id=self.client.client_id,
            redirect_uri=self.redirect_uri,
            state=self._state,
            pkce=self._pkce,
            resource=self.resource,
            scope=self.scope,
        )
