"""Discovery: what each protocol version's authorization text says to fetch, in which
order, and the checks of the two metadata documents.

:data:`PROFILES` holds one :class:`AuthProfile` per protocol version; the flow reads its
fields and never compares versions. What each version's text says:

- **2025-03-26** (basic/authorization.mdx, Server Metadata Discovery): no protected
  resource metadata; "The authorization base URL **MUST** be determined from the MCP
  server URL by discarding any existing ``path`` component" and "The metadata endpoint
  **MUST** be at" ``<base>/.well-known/oauth-authorization-server``; "For servers that do
  not implement OAuth 2.0 Authorization Server Metadata, clients **MUST** use the following
  default endpoint paths": ``/authorize``, ``/token``, ``/register``; "Clients **MUST**
  first attempt to discover endpoints via the metadata document before falling back to
  default paths" (the fallback on a 404, as its diagram shows).
- **2025-06-18**: "MCP clients **MUST** use OAuth 2.0 Protected Resource Metadata for
  authorization server discovery" and "**MUST** follow the OAuth 2.0 Authorization Server
  Metadata [RFC8414] specification". The text gives no order of well-known URIs: the
  resource metadata comes from the header's ``resource_metadata`` (servers "**MUST** use
  the HTTP header ``WWW-Authenticate``"), else from RFC 9728 section 3.1's path-inserted
  URI, then the root one of its diagram; the server metadata from RFC 8414 section 3.1's
  path-inserted URI alone (this text names no OpenID Connect Discovery).
- **2025-11-25** and **2026-07-28** (Protected Resource Metadata Discovery
  Requirements): clients "**MUST** ... use the resource metadata URL from the parsed
  ``WWW-Authenticate`` headers when present; otherwise, they **MUST** fall back to
  constructing and requesting the well-known URIs in the order listed above" (the MCP
  endpoint's path, then the root); Authorization Server Metadata Discovery: "clients
  **MUST** try endpoints in the following priority order": RFC 8414 with path insertion,
  OpenID Connect with path insertion, OpenID Connect with path appending (for an issuer
  with a path; RFC 8414 then OpenID Connect at the root for one without).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from ._errors import (
    AuthError,
    IssuerMismatchError,
    PkceUnsupportedError,
    ResourceMetadataError,
    ResourceMismatchError,
    ServerMetadataError,
    detail,
)
from ._oauth import HttpRequest
from ._urls import (
    OAUTH_SERVER,
    OIDC,
    PROTECTED_RESOURCE,
    check_endpoint,
    has_path,
    origin,
    path_appended,
    path_inserted,
    same_resource,
)

__all__ = [
    "PROFILES",
    "AuthProfile",
    "MetadataCandidate",
    "ResourceMetadata",
    "ServerMetadata",
    "check_pkce",
    "default_server_metadata",
    "parse_resource_metadata",
    "parse_server_metadata",
    "resource_metadata_candidates",
    "server_metadata_candidates",
]


@dataclass(frozen=True)
class AuthProfile:
    """What one protocol version's authorization text asks of a client."""

    version: str
    """The protocol version."""
    resource_metadata: bool
    """Whether protected resource metadata (RFC 9728) names the authorization server;
    else the MCP server's own origin is the authorization server (2025-03-26)."""
    openid_discovery: bool
    """Whether OpenID Connect Discovery 1.0 URIs follow RFC 8414's (2025-11-25 on)."""
    default_endpoints: bool
    """Whether a 404 for the metadata means the default ``/authorize``, ``/token`` and
    ``/register`` of the authorization base URL (2025-03-26)."""
    pkce_metadata_required: bool
    """Whether metadata without ``code_challenge_methods_supported`` is refused (MCP
    2025-11-25 and 2026-07-28, Authorization Code Protection: "MCP clients **MUST** rely
    on authorization server metadata to verify this capability ... If
    ``code_challenge_methods_supported`` is absent ... MCP clients **MUST** refuse to
    proceed"). Earlier texts ask only that clients implement PKCE: a list that omits
    ``S256`` is refused in every version (OAuth 2.1 section 4.1.1, and this client sends
    ``S256`` only), an absent one only here."""
    step_up_union: bool = False
    """Whether a step-up (a challenge with ``error="insufficient_scope"``) asks for the
    challenge's scopes together with those asked for before (2026-07-28, Step-Up
    Authorization Flow: "**Determine required scopes** by computing the union of the
    client's previously requested scope set and the scopes from the current challenge");
    2025-11-25 determines them "as outlined in Scope Selection Strategy" (the challenge's
    alone). 2026-07-28 says the same of any re-authorization (Scope Selection Strategy:
    "When re-authorizing, clients **SHOULD** include these scopes alongside any previously
    granted scopes"): a flow given a ``previous_scope`` unites it with the challenge's."""
    discovery_version_header: bool = False
    """Whether the metadata requests carry ``MCP-Protocol-Version`` (2025-03-26, Server
    Metadata Discovery Headers: "MCP clients *SHOULD* include the header
    ``MCP-Protocol-Version: <protocol-version>`` during Server Metadata Discovery")."""
    client_id_metadata_documents: bool = False
    """Whether a Client ID Metadata Document URL is used as ``client_id`` where the server
    sets ``client_id_metadata_document_supported`` (2025-11-25 and 2026-07-28, Client
    Registration: second in the priority order, after pre-registered information and
    before Dynamic Client Registration); earlier texts know only pre-registration and
    RFC 7591."""
    offline_access: bool = False
    """Whether ``offline_access`` joins the requested scopes when the authorization
    server's ``scopes_supported`` lists it (2026-07-28, Refresh Tokens: MCP clients that
    desire refresh tokens "**MAY** add ``offline_access`` to the ``scope`` parameter of the
    authorization and token requests when the Authorization Server metadata contains it in
    ``scopes_supported``"); earlier texts say nothing of it."""


#: One profile per protocol version that has an authorization text (2024-11-05 has none).
PROFILES: Final[Mapping[str, AuthProfile]] = {
    p.version: p
    for p in (
        AuthProfile("2025-03-26", False, False, True, False, discovery_version_header=True),
        AuthProfile("2025-06-18", True, False, False, False),
        AuthProfile("2025-11-25", True, True, False, True, client_id_metadata_documents=True),
        AuthProfile(
            "2026-07-28",
            True,
            True,
            False,
            True,
            step_up_union=True,
            client_id_metadata_documents=True,
            offline_access=True,
        ),
    )
}


@dataclass(frozen=True)
class MetadataCandidate:
    """One URL to try for a metadata document, and the identifier its answer must name."""

    url: str
    """Where to GET the document."""
    expected: str
    """The ``resource`` (RFC 9728 section 3.3) or ``issuer`` (RFC 8414 section 3.3) the
    document must carry."""
    also: str | None = None
    """A second acceptable ``resource``: the MCP server's URL for a document found at the
    root, which MCP 2025-11-25 and later lets describe an endpoint with a path ("At the
    root: ``https://example.com/.well-known/oauth-protected-resource``")."""


def resource_metadata_candidates(
    server_url: str, header_url: str | None
) -> list[MetadataCandidate]:
    """The URLs to try for protected resource metadata, in order.

    With a ``resource_metadata`` from the challenge, that URL alone, whose document must
    name the server URL (RFC 9728 section 3.3: "the ``resource`` value returned **MUST**
    be identical to the URL that the client used to make the request to the resource
    server"). Else the path-inserted well-known URI (when the server URL has a path), then
    the root one.
    """
    if header_url is not None:
        check_endpoint(header_url, "the resource_metadata URL", "resource metadata")
        return [MetadataCandidate(header_url, server_url)]
    out: list[MetadataCandidate] = []
    if has_path(server_url):
        out.append(MetadataCandidate(path_inserted(server_url, PROTECTED_RESOURCE), server_url))
    root = origin(server_url)
    out.append(MetadataCandidate(path_inserted(root, PROTECTED_RESOURCE), root, also=server_url))
    return out


def server_metadata_candidates(issuer: str, profile: AuthProfile) -> list[MetadataCandidate]:
    """The URLs to try for the metadata of the authorization server ``issuer``, in the
    order of ``profile``'s text (see the module's docstring)."""
    if not profile.resource_metadata:
        base = origin(issuer)
        return [MetadataCandidate(path_inserted(base, OAUTH_SERVER, issuer=True), base)]
    out = [MetadataCandidate(path_inserted(issuer, OAUTH_SERVER, issuer=True), issuer)]
    if profile.openid_discovery:
        if has_path(issuer):
            out.append(MetadataCandidate(path_inserted(issuer, OIDC, issuer=True), issuer))
            out.append(MetadataCandidate(path_appended(issuer, OIDC), issuer))
        else:
            out.append(MetadataCandidate(path_appended(issuer, OIDC), issuer))
    return out


@dataclass(frozen=True)
class ResourceMetadata:
    """The fields of a protected resource metadata document (RFC 9728 section 2) that the
    flow reads; ``raw`` holds the whole document."""

    resource: str
    """The resource identifier (REQUIRED)."""
    authorization_servers: tuple[str, ...]
    """The issuer identifiers of its authorization servers."""
    scopes_supported: tuple[str, ...] | None = None
    """The scopes it names, or None when the field is absent."""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The whole document."""


def _strings(doc: Mapping[str, Any], name: str, error: type[AuthError]) -> tuple[str, ...] | None:
    value = doc.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise error(f"{name!r} is not a list of strings")
    return tuple(value)


def _string(doc: Mapping[str, Any], name: str, error: type[AuthError]) -> str | None:
    value = doc.get(name)
    if value is not None and not isinstance(value, str):
        raise error(f"{name!r} is not a string")
    return value


def parse_resource_metadata(doc: object, candidate: MetadataCandidate) -> ResourceMetadata:
    """Check a protected resource metadata document fetched for ``candidate``.

    RFC 9728 section 2: ``resource`` is REQUIRED; section 3.3: it "**MUST** be identical"
    to the identifier the URL was built from (or, from the challenge's URL, to the URL of
    the request), else "the data contained in the response **MUST NOT** be used"; compared
    with the case of the scheme and host folded and a lone ``/`` path equal to none. MCP
    2025-06-18 and later: the document "**MUST** include the ``authorization_servers``
    field containing at least one authorization server".
    """
    if not isinstance(doc, dict):
        raise ResourceMetadataError("the document is not a JSON object")
    resource = _string(doc, "resource", ResourceMetadataError)
    if resource is None:
        raise ResourceMetadataError("the document has no 'resource' (RFC 9728 section 2)")
    if "#" in resource:
        # the flow sends it as the resource parameter: RFC 8707 section 2, "It MUST NOT
        # include a fragment component."
        raise ResourceMetadataError(
            f"the document's resource {detail(resource)!r} has a fragment "
            "(RFC 8707 section 2: it MUST NOT)"
        )
    if not same_resource(resource, candidate.expected) and not (
        candidate.also is not None and same_resource(resource, candidate.also)
    ):
        raise ResourceMismatchError(
            f"the document from {detail(candidate.url)!r} is for resource "
            f"{detail(resource)!r}, not {detail(candidate.expected)!r} (RFC 9728 section 3.3)"
        )
    servers = _strings(doc, "authorization_servers", ResourceMetadataError)
    if not servers:
        raise ResourceMetadataError(
            "the document names no authorization_servers (MCP: it MUST include at least one)"
        )
    scopes = _strings(doc, "scopes_supported", ResourceMetadataError)
    return ResourceMetadata(resource, servers, scopes, doc)


@dataclass(frozen=True)
class ServerMetadata:
    """The fields of authorization server metadata (RFC 8414 section 2; OpenID Connect
    Discovery 1.0 section 3) that the flow reads; ``raw`` holds the whole document."""

    issuer: str
    """The issuer identifier."""
    authorization_endpoint: str | None
    """Where the person is sent; None for a server that supports no grant using it
    (RFC 8414 section 2: "REQUIRED unless no grant types are supported that use the
    authorization endpoint"), which the code flow refuses."""
    token_endpoint: str
    """Where codes and refresh tokens are exchanged."""
    registration_endpoint: str | None = None
    """The RFC 7591 registration endpoint, if any."""
    code_challenge_methods_supported: tuple[str, ...] | None = None
    """The PKCE methods, or None when absent."""
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    """The client authentication methods (RFC 8414: ``client_secret_basic`` if omitted)."""
    scopes_supported: tuple[str, ...] | None = None
    """The scopes the server names, or None."""
    authorization_response_iss_parameter_supported: bool = False
    """Whether authorization responses carry ``iss`` (RFC 9207 section 3)."""
    client_id_metadata_document_supported: bool = False
    """Whether URL client ids are fetched (MCP 2025-11-25 and later)."""
    defaults: bool = False
    """True for the 2025-03-26 default endpoints (no document was found)."""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The whole document."""


def parse_server_metadata(
    doc: object, candidate: MetadataCandidate, profile: AuthProfile, *, pkce: bool = True
) -> ServerMetadata:
    """Check an authorization server metadata document fetched for ``candidate``.

    RFC 8414 section 3.3: "The ``issuer`` value returned **MUST** be identical to the
    authorization server's issuer identifier value into which the well-known URI string
    was inserted to create the URL used to retrieve the metadata. If these values are not
    identical, the data contained in the response **MUST NOT** be used." (MCP 2026-07-28
    repeats it: "If they differ, the client **MUST NOT** use the metadata."). Compared as
    strings, exactly. Each endpoint must be HTTPS (or loopback); PKCE support as
    :attr:`AuthProfile.pkce_metadata_required` says, unless ``pkce`` is false (a flow
    with no authorization request, such as the client credentials grant, uses no PKCE).
    """
    step = "server metadata"
    if not isinstance(doc, dict):
        raise ServerMetadataError("the document is not a JSON object")
    issuer = _string(doc, "issuer", ServerMetadataError)
    if issuer is None:
        raise ServerMetadataError("the document has no 'issuer' (RFC 8414 section 2)")
    if issuer != candidate.expected:
        raise IssuerMismatchError(
            f"the document from {detail(candidate.url)!r} names issuer {detail(issuer)!r}, "
            f"not {detail(candidate.expected)!r} (RFC 8414 section 3.3)"
        )
    token = _string(doc, "token_endpoint", ServerMetadataError)
    if token is None:
        raise ServerMetadataError("the document has no 'token_endpoint'")
    token = check_endpoint(token, "the token_endpoint", step)
    authorize = _string(doc, "authorization_endpoint", ServerMetadataError)
    if authorize is not None:
        authorize = check_endpoint(authorize, "the authorization_endpoint", step)
    elif not _no_redirect_grant(doc):
        raise ServerMetadataError("the document has no 'authorization_endpoint'")
    registration = _string(doc, "registration_endpoint", ServerMetadataError)
    if registration is not None:
        check_endpoint(registration, "the registration_endpoint", step)
    methods = _strings(doc, "code_challenge_methods_supported", ServerMetadataError)
    if pkce:
        check_pkce(methods, profile)
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=authorize,
        token_endpoint=token,
        registration_endpoint=registration,
        code_challenge_methods_supported=methods,
        token_endpoint_auth_methods_supported=_strings(
            doc, "token_endpoint_auth_methods_supported", ServerMetadataError
        ),
        scopes_supported=_strings(doc, "scopes_supported", ServerMetadataError),
        authorization_response_iss_parameter_supported=(
            doc.get("authorization_response_iss_parameter_supported") is True
        ),
        client_id_metadata_document_supported=(
            doc.get("client_id_metadata_document_supported") is True
        ),
        raw=doc,
    )


def _no_redirect_grant(doc: Mapping[str, Any]) -> bool:
    """Whether the server lists its grant types and none of them uses the authorization
    endpoint (RFC 8414 section 2, ``grant_types_supported``: "If omitted, the default
    value is ``["authorization_code", "implicit"]``")."""
    grants = _strings(doc, "grant_types_supported", ServerMetadataError)
    return grants is not None and not {"authorization_code", "implicit"} & set(grants)


#: The largest metadata document read, in bytes.
MAX_METADATA: Final = 1 << 20


def metadata_request(url: str, profile: AuthProfile) -> HttpRequest:
    """The GET of a metadata document at ``url`` (with ``MCP-Protocol-Version`` where
    ``profile`` says discovery sends it)."""
    headers = [("Accept", "application/json")]
    if profile.discovery_version_header:
        headers.append(("MCP-Protocol-Version", profile.version))
    return HttpRequest("GET", url, tuple(headers))


def metadata_document(body: bytes, url: str, error: type[AuthError]) -> object:
    """The JSON of a metadata document fetched from ``url``; ``error`` when it is over
    :data:`MAX_METADATA` bytes or not JSON."""
    if len(body) > MAX_METADATA:
        raise error(f"the document at {detail(url)!r} is over {MAX_METADATA} bytes")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise error(f"the document at {detail(url)!r} is not JSON") from None


def check_pkce(methods: tuple[str, ...] | None, profile: AuthProfile) -> None:
    """Refuse an authorization server that does not offer ``S256`` (see
    :attr:`AuthProfile.pkce_metadata_required`; MCP 2025-11-25 and later: "MCP clients
    **MUST** use the ``S256`` code challenge method when technically capable")."""
    if methods is None:
        if profile.pkce_metadata_required:
            raise PkceUnsupportedError(
                "the metadata has no code_challenge_methods_supported: the server does not "
                f"support PKCE and MCP {profile.version} clients MUST refuse to proceed"
            )
        return
    if "S256" not in methods:
        raise PkceUnsupportedError(
            f"code_challenge_methods_supported is {[detail(m) for m in methods]!r}, "
            "without S256, the one method this client uses (OAuth 2.1 section 4.1.1)"
        )


def default_server_metadata(server_url: str) -> ServerMetadata:
    """The 2025-03-26 default endpoints of the authorization base URL of ``server_url``
    ("clients **MUST** use the following default endpoint paths")."""
    base = origin(server_url)
    step = "server metadata"
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=check_endpoint(
            f"{base}/authorize", "the authorization endpoint", step
        ),
        token_endpoint=check_endpoint(f"{base}/token", "the token endpoint", step),
        registration_endpoint=f"{base}/register",
        defaults=True,
    )
