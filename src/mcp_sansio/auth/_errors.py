"""The failures of the authorization flow: one class per failure, each naming its step.

Every error says which step of the flow failed (:attr:`AuthError.step`) and why
(:attr:`AuthError.reason`). None ever holds an access token, a refresh token, an
authorization code, a code verifier or a client secret: the flow builds each message from
URLs, field names, statuses and the authorization server's own ``error`` and
``error_description`` (cut to :data:`MAX_DETAIL` characters), never from a credential.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_DETAIL",
    "AuthError",
    "AuthUsageError",
    "AuthorizationDeniedError",
    "AuthorizationResponseError",
    "ChallengeError",
    "ClientBindingError",
    "InsecureEndpointError",
    "IssuerMismatchError",
    "IssuerResponseMismatchError",
    "PkceUnsupportedError",
    "RegistrationError",
    "RegistrationErrorResponse",
    "ResourceMetadataError",
    "ResourceMismatchError",
    "ServerMetadataError",
    "StateMismatchError",
    "TokenErrorResponse",
    "TokenResponseError",
]

#: The longest text taken from a peer (an ``error_description``, a field value) into a message.
MAX_DETAIL: Final = 200

#: The steps of the flow, as :attr:`AuthError.step` names them.
STEPS: Final = (
    "challenge",
    "resource metadata",
    "server metadata",
    "registration",
    "authorization request",
    "authorization response",
    "token request",
    "usage",
)


def detail(text: object) -> str:
    """``text`` made safe to quote: printable, at most :data:`MAX_DETAIL` characters."""
    out = "".join(c if c.isprintable() else "?" for c in str(text))
    return out if len(out) <= MAX_DETAIL else out[: MAX_DETAIL - 3] + "..."


class AuthError(Exception):
    """A step of the authorization flow failed.

    ``step`` is one of ``"challenge"``, ``"resource metadata"``, ``"server metadata"``,
    ``"registration"``, ``"authorization request"``, ``"authorization response"``,
    ``"token request"`` or ``"usage"``; ``reason`` says why. ``str(error)`` is
    ``"<step>: <reason>"``.
    """

    #: The step a subclass fails at when the caller does not name it.
    default_step = "usage"

    def __init__(self, reason: str, *, step: str | None = None) -> None:
        self.step: str = step if step is not None else self.default_step
        """The step that failed."""
        self.reason: str = reason
        """Why, in a sentence that holds no credential."""
        super().__init__(f"{self.step}: {reason}")


class AuthUsageError(AuthError):
    """The flow was driven out of order (a response fed when none was asked for, a redirect
    before the person's step) or built with invalid arguments."""


class ChallengeError(AuthError):
    """A ``WWW-Authenticate`` field is not valid (RFC 9110 section 11.6.1)."""

    default_step = "challenge"


class InsecureEndpointError(AuthError):
    """An endpoint is not ``https`` and not on a loopback host.

    MCP 2025-06-18 and later, Communication Security: "All authorization server endpoints
    **MUST** be served over HTTPS." and "All redirect URIs **MUST** be either ``localhost``
    or use HTTPS." (2025-03-26: "All authorization endpoints **MUST** be served over
    HTTPS"; "Redirect URIs **MUST** be either localhost URLs or HTTPS URLs".)
    """


class ResourceMetadataError(AuthError):
    """Protected resource metadata (RFC 9728) could not be found or is not valid."""

    default_step = "resource metadata"


class ResourceMismatchError(ResourceMetadataError):
    """The protected resource metadata names another resource (RFC 9728 section 3.3:
    "If these values are not identical, the data contained in the response **MUST NOT** be
    used.")."""


class ServerMetadataError(AuthError):
    """Authorization server metadata (RFC 8414, OpenID Connect Discovery) could not be found
    or is not valid."""

    default_step = "server metadata"


class IssuerMismatchError(ServerMetadataError):
    """The metadata's ``issuer`` is not the issuer identifier its URL was built from
    (RFC 8414 section 3.3: "If these values are not identical, the data contained in the
    response **MUST NOT** be used.")."""


class PkceUnsupportedError(ServerMetadataError):
    """The authorization server does not advertise PKCE with ``S256``.

    MCP 2025-11-25 and 2026-07-28: "If ``code_challenge_methods_supported`` is absent, the
    authorization server does not support PKCE and MCP clients **MUST** refuse to proceed."
    """


class ClientBindingError(AuthError):
    """The client has no registration for the authorization server found (none given for
    it, none kept, no Client ID Metadata Document it takes, no ``registration_endpoint``:
    "Prompt the user to enter the client information if no other option is available"),
    or its registration is bound to another one.

    MCP 2026-07-28, Authorization Server Binding: clients "**MUST** associate those
    credentials with the specific authorization server that issued them, keyed by the
    authorization server's ``issuer`` identifier" and "**MUST NOT** reuse client
    credentials from a different authorization server".
    """

    default_step = "server metadata"


class RegistrationError(AuthError):
    """Dynamic Client Registration (RFC 7591) failed: the registration endpoint's answer is
    not a valid client information response (section 3.2.1), or the client it registered
    cannot be used (another ``redirect_uri``, an unknown ``token_endpoint_auth_method``)."""

    default_step = "registration"


class RegistrationErrorResponse(RegistrationError):
    """The registration endpoint answered with an error response (RFC 7591 section 3.2.2:
    ``invalid_redirect_uri``, ``invalid_client_metadata``, ``invalid_software_statement``,
    ``unapproved_software_statement``...). MCP 2026-07-28: "When a registration request is
    rejected, clients **SHOULD** surface a meaningful error to the user or developer"."""

    def __init__(self, status: int, error: str, description: str | None) -> None:
        self.status = status
        """The HTTP status of the answer."""
        self.error = detail(error)
        """The server's ``error`` code."""
        self.description = None if description is None else detail(description)
        """The server's ``error_description``, if it gave one."""
        text = f"the registration endpoint answered {status} error={self.error!r}"
        if self.description:
            text += f" ({self.description})"
        super().__init__(text)


class AuthorizationResponseError(AuthError):
    """The redirect that ends the person's step cannot be used."""

    default_step = "authorization response"


class StateMismatchError(AuthorizationResponseError):
    """The redirect's ``state`` is missing or is not the one sent.

    MCP 2025-06-18 and later: "MCP clients **SHOULD** use and verify state parameters in
    the authorization code flow and discard any results that do not include or have a
    mismatch with the original state." This client always sends one, so always checks it.
    """


class IssuerResponseMismatchError(AuthorizationResponseError):
    """The redirect's ``iss`` is missing where the server advertises it, or is not the
    recorded issuer (RFC 9207 section 2.4; MCP 2026-07-28, Authorization Response
    Validation)."""


class AuthorizationDeniedError(AuthorizationResponseError):
    """The authorization server answered the authorization request with an error
    (RFC 6749 section 4.1.2.1): ``error`` and ``error_description`` say which."""

    def __init__(self, error: str, description: str | None) -> None:
        self.error = detail(error)
        """The server's ``error`` code."""
        self.description = None if description is None else detail(description)
        """The server's ``error_description``, if it gave one."""
        text = f"the authorization server answered error={self.error!r}"
        if self.description:
            text += f" ({self.description})"
        super().__init__(text)


class TokenResponseError(AuthError):
    """The token endpoint's answer is not a valid token response (RFC 6749 section 5.1)."""

    default_step = "token request"


class TokenErrorResponse(TokenResponseError):
    """The token endpoint answered with an error response (RFC 6749 section 5.2)."""

    def __init__(self, status: int, error: str, description: str | None) -> None:
        self.status = status
        """The HTTP status of the answer."""
        self.error = detail(error)
        """The server's ``error`` code (``invalid_grant``, ``invalid_client``...)."""
        self.description = None if description is None else detail(description)
        """The server's ``error_description``, if it gave one."""
        text = f"the token endpoint answered {status} error={self.error!r}"
        if self.description:
            text += f" ({self.description})"
        super().__init__(text)
