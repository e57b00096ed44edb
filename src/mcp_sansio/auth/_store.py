"""Tokens and where they are kept: the :class:`TokenStore` interface and the default
:class:`MemoryTokenStore`.

Tokens are kept per authorization server and resource (:class:`TokenKey`): MCP 2026-07-28
(Authorization Server Location): "Clients **MUST** maintain separate registration state
(client credentials, tokens) per authorization server and **MUST NOT** assume that
credentials valid for one authorization server will be accepted by another"; a token is
for the one resource it was requested for (RFC 8707, the ``resource`` parameter). The
``repr`` of :class:`Tokens` never shows a token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["MemoryTokenStore", "TokenKey", "TokenStore", "Tokens"]


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
    """The token type (this client takes ``Bearer`` only)."""
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
        return ("Authorization", f"Bearer {self.access_token}")


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


class MemoryTokenStore:
    """The default :class:`TokenStore`: a dict, for as long as the process lives."""

    def __init__(self) -> None:
        self._tokens: dict[TokenKey, Tokens] = {}

    def load(self, key: TokenKey) -> Tokens | None:
        """The tokens kept under ``key``, or None."""
        return self._tokens.get(key)

    def save(self, key: TokenKey, tokens: Tokens) -> None:
        """Keep ``tokens`` under ``key``."""
        self._tokens[key] = tokens

    def delete(self, key: TokenKey) -> None:
        """Forget the tokens under ``key``."""
        self._tokens.pop(key, None)

    def __len__(self) -> int:
        return len(self._tokens)
