"""Authorization for Streamable HTTP (OAuth 2.1), sans-IO: the client and the resource
server.

The client: parsing ``WWW-Authenticate`` (:func:`parse_www_authenticate`,
:func:`bearer_challenge`); :class:`Discovery` of protected resource metadata (RFC 9728)
and authorization server metadata (RFC 8414, OpenID Connect Discovery) in the order of
each protocol version's authorization text (:data:`PROFILES`); PKCE with ``S256``
(:class:`Pkce`); the authorization request, the token requests and the parsers of their
answers; and :class:`AuthFlow`, the authorization code flow as a state machine that
returns the HTTP requests to make and the URL a person must open, with a
:class:`TokenStore` (:class:`MemoryTokenStore` by default).

Client registration (pre-registered, Client ID Metadata Documents, RFC 7591) and
:class:`OAuthClient`, the :class:`ClientAuth` the HTTP clients take (step-up with a retry
limit, ``offline_access``, credentials per issuer), are here too; so are :class:`BearerToken`
(a given token) and the extensions' grants: client credentials, the JWT bearer grant
(workload identity), enterprise-managed authorization (:class:`GrantAuth`), and DPoP
(:class:`DPoPAuth`; these sign with joserfc, the optional ``auth`` extra, imported only
when a JWT is made). The resource server's side: :class:`ServerAuth` (a
:class:`ProtectedResource` and a :class:`TokenVerifier`: :class:`JwtVerifier`,
:class:`IntrospectionVerifier`; with :class:`DPoPProofs`, DPoP-bound tokens), which the
HTTP servers take as ``auth=``; see
``docs/auth-server.rst``.

It does no I/O, starts nothing and never reads the clock (the caller passes ``now`` where
expiry matters); it needs only the standard library and the core's orjson. See
``docs/auth.rst``.
"""

from ._challenge import BearerChallenge, Challenge, bearer_challenge, parse_www_authenticate
from ._client_auth import ClientAuth, Flow
from ._discovery import Discovered, Discovery
from ._dpop import DPoPAuth, DPoPFlow, DPoPKey
from ._dpop_proof import BadProof, DPoPProofs, bound_key
from ._errors import (
    AuthError,
    AuthorizationDeniedError,
    AuthorizationResponseError,
    AuthUsageError,
    ChallengeError,
    ClientBindingError,
    InsecureEndpointError,
    IssuerMismatchError,
    IssuerResponseMismatchError,
    PkceUnsupportedError,
    RegistrationError,
    RegistrationErrorResponse,
    ResourceMetadataError,
    ResourceMismatchError,
    ServerMetadataError,
    StateMismatchError,
    TokenErrorResponse,
    TokenResponseError,
)
from ._flow import AuthFlow, Authorized, OpenUrl, Step
from ._grants import (
    ClientCredentials,
    EnterpriseManaged,
    Grant,
    GrantAuth,
    GrantFlow,
    HttpResponse,
    JwtBearer,
    client_assertion,
)
from ._introspection import IntrospectionVerifier, parse_introspection
from ._jwt import JwtVerifier
from ._metadata import (
    PROFILES,
    AuthProfile,
    MetadataCandidate,
    ResourceMetadata,
    ServerMetadata,
    default_server_metadata,
    parse_resource_metadata,
    parse_server_metadata,
    resource_metadata_candidates,
    server_metadata_candidates,
)
from ._oauth import (
    AuthMethod,
    AuthorizationCode,
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
from ._oauth_client import DEFAULT_MAX_SCOPE_SETS, DEFAULT_MAX_STEP_UPS, OAuthClient
from ._register import (
    ApplicationType,
    application_type_for,
    check_client_metadata_url,
    parse_registration_response,
    registration_auth_method,
    registration_request,
)
from ._resource import (
    Decided,
    InvalidToken,
    Principal,
    ProtectedResource,
    ServerAuth,
    TokenVerifier,
    Unavailable,
    VerdictCache,
    Verification,
    audience_matches,
)
from ._static import BearerToken
from ._store import ClientStore, MemoryTokenStore, TokenKey, Tokens, TokenStore
from ._urls import canonical_resource, check_endpoint, is_loopback

__all__ = [
    "DEFAULT_MAX_SCOPE_SETS",
    "DEFAULT_MAX_STEP_UPS",
    "PROFILES",
    "ApplicationType",
    "AuthError",
    "AuthFlow",
    "AuthMethod",
    "AuthProfile",
    "AuthUsageError",
    "AuthorizationCode",
    "AuthorizationDeniedError",
    "AuthorizationResponseError",
    "Authorized",
    "BearerChallenge",
    "Challenge",
    "ChallengeError",
    "ClientAuth",
    "ClientBindingError",
    "ClientInfo",
    "ClientStore",
    "Flow",
    "HttpRequest",
    "InsecureEndpointError",
    "IssuerMismatchError",
    "IssuerResponseMismatchError",
    "MemoryTokenStore",
    "MetadataCandidate",
    "OAuthClient",
    "OpenUrl",
    "Pkce",
    "PkceUnsupportedError",
    "RegistrationError",
    "RegistrationErrorResponse",
    "ResourceMetadata",
    "ResourceMetadataError",
    "ResourceMismatchError",
    "ServerMetadata",
    "ServerMetadataError",
    "StateMismatchError",
    "Step",
    "TokenErrorResponse",
    "TokenKey",
    "TokenResponseError",
    "TokenStore",
    "Tokens",
    "application_type_for",
    "authorization_url",
    "bearer_challenge",
    "canonical_resource",
    "check_client_metadata_url",
    "check_endpoint",
    "code_grant",
    "default_server_metadata",
    "is_loopback",
    "parse_authorization_response",
    "parse_registration_response",
    "parse_resource_metadata",
    "parse_server_metadata",
    "parse_token_response",
    "parse_www_authenticate",
    "refresh_grant",
    "registration_auth_method",
    "registration_request",
    "resource_metadata_candidates",
    "server_metadata_candidates",
    "token_request",
    "DPoPAuth",
    "DPoPFlow",
    "DPoPKey",
    "DPoPProofs",
    "BadProof",
    "bound_key",
    "ClientCredentials",
    "Discovered",
    "Discovery",
    "EnterpriseManaged",
    "Grant",
    "GrantAuth",
    "GrantFlow",
    "JwtBearer",
    "client_assertion",
    "BearerToken",
    "HttpResponse",
    "IntrospectionVerifier",
    "parse_introspection",
    "JwtVerifier",
    "Decided",
    "InvalidToken",
    "Principal",
    "ProtectedResource",
    "ServerAuth",
    "TokenVerifier",
    "Unavailable",
    "VerdictCache",
    "Verification",
    "audience_matches",
]
