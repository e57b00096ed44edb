"""A :class:`~mcp_sansio.auth.ClientAuth` for a token the user already has:
:class:`BearerToken` (the command line's ``--token``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ._client_auth import Flow
from ._errors import AuthUsageError
from ._flow import Authorized

__all__ = ["BearerToken"]

#: RFC 6750 section 2.1: ``b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" /
#: "/" ) *"="``, what the ``Authorization: Bearer`` credentials are.
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class BearerToken:
    """Send ``token`` as ``Authorization: Bearer <token>`` (RFC 6750 section 2.1) with every
    request, and run no flow: a 401 or 403 fails the request (the call raises
    ``McpError``, with the server's JSON-RPC error where its answer holds one).

    ``token`` must be an RFC 6750 ``b64token`` (raises
    :class:`~mcp_sansio.auth.AuthUsageError` otherwise, without quoting it). The token is
    never shown: not in the ``repr``, not in an error.
    """

    def __init__(self, token: str) -> None:
        if not isinstance(token, str) or not _B64TOKEN.fullmatch(token):
            raise AuthUsageError(
                "a bearer token is 1 or more of A-Z a-z 0-9 - . _ ~ + / then any '='"
                " (RFC 6750 section 2.1, b64token); this one is not"
            )
        self._header = ("Authorization", f"Bearer {token}")

    def __repr__(self) -> str:
        return "BearerToken(<hidden>)"

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        """The ``Authorization`` header, for every request."""
        return (self._header,)

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        """``None``: a token given is all there is; the request fails with ``status``."""
        return None

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        """Nothing: a token given does not change."""

    def authorized(self, result: Authorized, *, now: float) -> None:
        """Never called (no flow is started); raises
        :class:`~mcp_sansio.auth.AuthUsageError`."""
        raise AuthUsageError("a BearerToken runs no flow")
