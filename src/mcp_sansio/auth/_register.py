"""Client registration: which of the three ways, and the messages of two of them.

Every text from 2025-11-25 on lists three ways and an order (2026-07-28, Client
Registration: "Clients supporting all options **SHOULD** use the following priority
order"):

1. "Use pre-registered client information for the server if the client has it available"
   (:class:`~mcp_sansio.auth.ClientInfo`);
2. "Use Client ID Metadata Documents if the Authorization Server indicates that it supports
   them (via ``client_id_metadata_document_supported`` in OAuth Authorization Server
   Metadata)": the ``client_id`` is the HTTPS URL of the client's metadata document, which
   the client hosts (:func:`check_client_metadata_url`); nothing is sent to register;
3. "Use Dynamic Client Registration as a fallback if the Authorization Server supports it
   (via ``registration_endpoint`` in OAuth Authorization Server Metadata)" (RFC 7591:
   :func:`registration_request`, :func:`parse_registration_response`);
4. "Prompt the user to enter the client information if no other option is available": the
   caller's part (the flow fails with :class:`~mcp_sansio.auth.ClientBindingError`).

2025-03-26 and 2025-06-18 know no metadata documents: pre-registration, else RFC 7591
("MCP clients and servers **SHOULD** support the OAuth 2.0 Dynamic Client Registration
Protocol"), at the default ``/register`` when 2025-03-26's metadata is absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal
from urllib.parse import urlsplit

import orjson

from ._errors import AuthUsageError, RegistrationError, RegistrationErrorResponse, detail
from ._oauth import AuthMethod, ClientInfo, HttpRequest
from ._urls import is_loopback

__all__ = [
    "ApplicationType",
    "application_type_for",
    "check_client_metadata_url",
    "parse_registration_response",
    "registration_auth_method",
    "registration_request",
]

#: OpenID Connect Dynamic Client Registration 1.0's ``application_type`` values.
ApplicationType = Literal["native", "web"]
_METHODS: Final = ("client_secret_basic", "client_secret_post", "none")
#: The largest registration response read, in bytes.
MAX_RESPONSE: Final = 1 << 20
#: RFC 7591 section 2 (``grant_types``): "authorization_code" and "refresh_token"; MCP
#: 2026-07-28, Refresh Tokens: clients that desire refresh tokens "**SHOULD** include
#: ``refresh_token`` in their ``grant_types`` client metadata".
GRANT_TYPES: Final = ("authorization_code", "refresh_token")


def check_client_metadata_url(url: str) -> str:
    """``url`` if it can be a Client ID Metadata Document's ``client_id``, else
    :class:`~mcp_sansio.auth.AuthUsageError`.

    MCP 2025-11-25 and 2026-07-28: "The ``client_id`` URL **MUST** use the "https" scheme
    and contain a path component, e.g. ``https://example.com/client.json``" (no loopback
    exception: the authorization server fetches it). A fragment or a user name is refused
    too (a ``client_id`` is compared as a string: neither can take part).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        raise AuthUsageError(f"the client metadata URL is not a URL: {detail(url)!r}") from None
    if parts.scheme != "https" or not parts.hostname:
        raise AuthUsageError(f"the client metadata URL must be https: {detail(url)!r}")
    if parts.path.strip("/") == "":
        raise AuthUsageError(f"the client metadata URL has no path component: {detail(url)!r}")
    if parts.fragment or "#" in url or parts.username is not None:
        raise AuthUsageError(
            f"the client metadata URL has a fragment or user information: {detail(url)!r}"
        )
    return url


def application_type_for(redirect_uri: str) -> ApplicationType:
    """``"native"`` for a redirect to a loopback host, ``"web"`` otherwise.

    MCP 2026-07-28, Application Type and Redirect URI Constraints: "MCP clients **MUST**
    specify an appropriate ``application_type`` during Dynamic Client Registration";
    "**Native applications** (desktop applications, mobile apps, CLI tools, and
    locally-hosted web applications accessed via ``localhost``) **SHOULD** use
    ``application_type: "native"``"; "**Web applications** (remote browser-based
    applications served from a non-local host) **SHOULD** use ``application_type:
    "web"``". A redirect to the loopback host is a native client's (or a locally hosted
    one's); an ``https`` redirect elsewhere is a web application's.
    """
    return "native" if is_loopback(urlsplit(redirect_uri).hostname or "") else "web"


def registration_auth_method(supported: tuple[str, ...] | None) -> AuthMethod:
    """The ``token_endpoint_auth_method`` to ask for from a server that lists
    ``supported`` (``token_endpoint_auth_methods_supported``).

    ``none`` (a public client, as a native application is: OAuth 2.1 section 2.1) when the
    server lists it; else ``client_secret_basic``, then ``client_secret_post``, whichever it
    lists first in that order; a server that lists none of the three gets
    ``client_secret_basic``, and so does one that lists nothing (RFC 8414 section 2: "If
    omitted, the default is ``client_secret_basic``").
    """
    if supported is None:
        return "client_secret_basic"
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"


def registration_request(
    endpoint: str,
    *,
    redirect_uri: str,
    auth_method: AuthMethod,
    client_name: str | None = None,
    application_type: ApplicationType | None = None,
    extra: Mapping[str, object] | None = None,
) -> HttpRequest:
    """The RFC 7591 client registration request (section 3.1): a POST of the client's
    metadata as a JSON object.

    The metadata (section 2): ``redirect_uris`` (the one redirect URI: "Clients using
    flows with redirection **MUST** register their redirection URI values"),
    ``token_endpoint_auth_method``, ``grant_types`` (``authorization_code`` and
    ``refresh_token``),
    ``response_types`` ``["code"]`` (section 2.1: ``authorization_code`` goes with
    ``code``), ``client_name`` when given, and ``application_type`` (by default
    :func:`~mcp_sansio.auth.application_type_for` the redirect URI). No ``scope``: one
    registered would bound what a later step-up may ask for; ``extra`` adds any other
    fields (``scope``, ``client_uri``, ``logo_uri``...), and cannot replace these.
    """
    doc: dict[str, object] = dict(extra or {})
    doc.update(
        {
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": auth_method,
            "grant_types": list(GRANT_TYPES),
            "response_types": ["code"],
            "application_type": application_type or application_type_for(redirect_uri),
        }
    )
    if client_name is not None:
        doc["client_name"] = client_name
    headers = (("Content-Type", "application/json"), ("Accept", "application/json"))
    return HttpRequest("POST", endpoint, headers, orjson.dumps(doc))


def parse_registration_response(
    status: int,
    body: bytes,
    *,
    issuer: str,
    redirect_uri: str,
    requested_method: AuthMethod,
) -> ClientInfo:
    """The client an RFC 7591 registration endpoint registered, bound to ``issuer``.

    Section 3.2.1: "The server responds with an HTTP 201 Created status code and a body of
    type ``application/json``"; ``client_id`` is REQUIRED, ``client_secret`` OPTIONAL,
    and the server "**MUST** return all registered metadata about the client", which it
    "**MAY** reject or replace". So: a ``token_endpoint_auth_method`` in the answer is the
    one used (it must be one of the three this client knows, and a secret must come with
    a method that needs one); absent, the one asked for. ``redirect_uris``, when returned,
    must still hold ``redirect_uri`` (else the authorization request would be refused).
    ``client_secret_expires_at`` ("REQUIRED if ``client_secret`` is issued") is kept when
    present but not required: some servers omit it, and the client reads no clock to
    compare it with. Section 3.2.2: an error is a JSON object with ``error`` (400 "unless
    otherwise specified"): :class:`~mcp_sansio.auth.RegistrationErrorResponse`. No
    message quotes a secret.
    """
    if len(body) > MAX_RESPONSE:
        raise RegistrationError(f"the registration response is over {MAX_RESPONSE} bytes")
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if status != 201:
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            description = doc.get("error_description")
            raise RegistrationErrorResponse(
                status, doc["error"], description if isinstance(description, str) else None
            )
        raise RegistrationError(
            f"the registration endpoint answered {status} (RFC 7591 section 3.2.1: "
            "201 Created), without an error object"
        )
    if not isinstance(doc, dict):
        raise RegistrationError("the registration response is not a JSON object")
    client_id = doc.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError("the registration response has no client_id string")
    secret = doc.get("client_secret")
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise RegistrationError("client_secret is not a non-empty string")
    expires = doc.get("client_secret_expires_at")
    if expires is not None and (type(expires) is not int or expires < 0):
        raise RegistrationError("client_secret_expires_at is not a non-negative integer")
    method = doc.get("token_endpoint_auth_method", requested_method)
    if method not in _METHODS:
        raise RegistrationError(
            f"the server registered token_endpoint_auth_method {detail(method)!r}, "
            f"not one this client uses ({', '.join(_METHODS)})"
        )
    if method != "none" and secret is None:
        raise RegistrationError(f"the server registered {method} but issued no client_secret")
    uris = doc.get("redirect_uris")
    if uris is not None and (not isinstance(uris, list) or redirect_uri not in uris):
        raise RegistrationError(
            f"the registered redirect_uris do not include {detail(redirect_uri)!r}"
        )
    return ClientInfo(
        client_id,
        secret,
        auth_method=method,
        issuer=issuer,
        expires_at=expires,
    )
