"""Tokens and client registrations and where they are kept: the :class:`TokenStore` and
:class:`ClientStore` interfaces and the default :class:`MemoryTokenStore` (both at once).

Tokens are kept per authorization server and resource (:class:`TokenKey`): MCP 2026-07-28
(Authorization Server Location): "Clients **MUST** maintain separate registration state
(client credentials, tokens) per authorization server and **MUST NOT** assume that
credentials valid for one authorization server will be accepted by another"; a token is
for the one resource it was requested for (RFC 8707, the ``resource`` parameter). A client
registered by RFC 7591 is kept per issuer (:class:`ClientStore`): MCP 2026-07-28,
Authorization Server Binding: clients that "persist client credentials obtained via
Dynamic Client Registration, **MUST** associate those credentials with the specific
authorization server that issued them, keyed by the authorization server's ``issuer``
identifier". The ``repr`` of :class:`Tokens` never shows a token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, runtime_checkable

from ._errors import AuthUsageError

__all__ = [
    "AuthMethod",
    "ClientInfo",
    "ClientStore",
    "MemoryTokenStore",
    "TokenKey",
    "TokenStore",
    "Tokens",
]

#: Client authentication at the token endpoint (RFC 7591 section 2 names these three).
AuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]
_METHODS: Final = ("client_secret_basic", "client_secret_post", "none")


@dataclass(frozen=True)
class ClientInfo:
    """The client's registration with one authorization server: pre-registered, registered
    by RFC 7591 (:func:`~mcp_sansio.auth.parse_registration_response`), or the URL of its
    Client ID Metadata Document as ``client_id`` (with ``auth_method="none"``)."""

    client_id: str
    """The client identifier."""
    client_secret: str | None = field(default=None, repr=False)
    """The secret of a confidential client."""
    auth_method: AuthMethod | None = None
    """How to authenticate at the token endpoint; None: ``client_secret_basic`` with a
    secret (RFC 8414's default when the server lists none; ``client_secret_post`` if the
    server lists only that), ``none`` without."""
    issuer: str | None = None
    """The issuer of the authorization server that issued these credentials; set, the
    flow refuses to use them with another one (MCP 2026-07-28, Authorization Server
    Binding)."""
    expires_at: int | None = None
    """RFC 7591's ``client_secret_expires_at`` of a registered client (seconds since the
    epoch, 0 for never), when the server gave it; the flow does not compare it (it reads
    no clock): an expired secret shows as ``invalid_client``, and the registration is
    forgotten."""

    def method_for(self, supported: tuple[str, ...] | None) -> AuthMethod:
        """The method to use with a server that lists ``supported``
        (``token_endpoint_auth_methods_supported``; RFC 8414 section 2: "If omitted, the
        default is ``client_secret_basic``").

        ``auth_method`` when set (a registration says which method it was registered
        with). Else, without a secret, ``none``; with one, ``client_secret_basic`` unless
        the server lists methods without it: then ``client_secret_post`` if listed, else
        ``none`` if listed (the server authenticates no secret), else
        ``client_secret_basic``."""
        if self.auth_method is not None:
            if self.auth_method not in _METHODS:
                raise AuthUsageError(f"unknown client authentication {self.auth_method!r}")
            if self.auth_method != "none" and self.client_secret is None:
                raise AuthUsageError(f"{self.auth_method} needs a client_secret")
            return self.auth_method
        if self.client_secret is None:
            return "none"
        if supported is None or "client_secret_basic" in supported:
            return "client_secret_basic"
        if "client_secret_post" in supported:
            return "client_secret_post"
        if "none" in supported:
            return "none"
        return "client_secret_basic"


@dataclass(frozen=True)
class TokenKey:
    """Which tokens: those the authorization server ``issuer`` issued for ``resource``."""

    issuer: str
    """The authorization server's issuer identifier."""
    resource: str
    """The resource (the MCP server's canonical URI, RFC 8707) they are for."""


@dataclass(frozen=True)
class Tokens:
    """A successful token response (RFC 6749 section 5.1). ``repr`` hides the tokens."""

    access_token: str = field(repr=False)
    """The access token, sent as ``Authorization: Bearer <token>``."""
    token_type: str = "Bearer"
    """The token type: ``Bearer``, or the server's value of another type the flow was told
    to take (``DPoP``, RFC 9449 section 5)."""
    expires_in: int | None = None
    """The lifetime in seconds, if the server gave one."""
    refresh_token: str | None = field(default=None, repr=False)
    """The refresh token, if the server issued one."""
    scope: str | None = None
    """The granted scopes, space-delimited, if the server said (RFC 6749 section 5.1:
    "**OPTIONAL**, if identical to the scope requested by the client")."""
    obtained_at: float | None = None
    """When the response came, in the caller's clock, if the caller passed one."""

    def expires_at(self) -> float | None:
        """``obtained_at + expires_in``, or None when either is unknown."""
        if self.obtained_at is None or self.expires_in is None:
            return None
        return self.obtained_at + self.expires_in

    def expired(self, now: float, margin: float = 0.0) -> bool:
        """Whether the access token has expired at ``now`` (in the clock of
        ``obtained_at``), ``margin`` seconds early; False when the expiry is unknown."""
        end = self.expires_at()
        return end is not None and now + margin >= end

    def authorization(self) -> tuple[str, str]:
        """The ``Authorization`` header (MCP: "MCP client **MUST** use the Authorization
        request header field")."""
        scheme = "DPoP" if self.token_type.lower() == "dpop" else "Bearer"
        # RFC 9449 section 7.1: a DPoP-bound token goes with the DPoP scheme
        return ("Authorization", f"{scheme} {self.access_token}")


class TokenStore(Protocol):
    """Where the flow keeps tokens; implement it to keep them elsewhere (a keyring, a
    file readable by its owner only: MCP, Token Theft: "Clients and servers **MUST**
    implement secure token storage")."""

    def load(self, key: TokenKey) -> Tokens | None:
        """The tokens kept under ``key``, or None."""

    def save(self, key: TokenKey, tokens: Tokens) -> None:
        """Keep ``tokens`` under ``key``, replacing what was there."""

    def delete(self, key: TokenKey) -> None:
        """Forget the tokens under ``key`` (nothing if there are none)."""


@runtime_checkable
class ClientStore(Protocol):
    """Where the flow keeps the clients it registered (RFC 7591), by the ``issuer`` of the
    authorization server that registered them; implement it (with :class:`TokenStore`) to
    keep them across runs: a registered ``client_secret`` is a credential, kept as safely
    as the tokens."""

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None."""

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        """Keep ``client`` as the registration with ``issuer``, replacing what was there."""

    def delete_client(self, issuer: str) -> None:
        """Forget the registration with ``issuer`` (nothing if there is none)."""


class MemoryTokenStore:
    """The default :class:`TokenStore` and :class:`ClientStore`: two dicts, for as long as
    the process lives."""

    def __init__(self) -> None:
        self._tokens: dict[TokenKey, Tokens] = {}
        self._clients: dict[str, ClientInfo] = {}

    def load(self, key: TokenKey) -> Tokens | None:
        """The tokens kept under ``key``, or None."""
        return self._tokens.get(key)

    def save(self, key: TokenKey, tokens: Tokens) -> None:
        """Keep ``tokens`` under ``key``."""
        self._tokens[key] = tokens

    def delete(self, key: TokenKey) -> None:
        """Forget the tokens under ``key``."""
        self._tokens.pop(key, None)

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None."""
        return self._clients.get(issuer)

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        """Keep ``client`` under ``issuer``."""
        self._clients[issuer] = client

    def delete_client(self, issuer: str) -> None:
        """Forget the registration with ``issuer``."""
        self._clients.pop(issuer, None)

    def __len__(self) -> int:
        """How many token sets are kept (registrations are not counted)."""
        return len(self._tokens)
