"""URLs of the flow: the HTTPS rule, the well-known URIs, and resource identifiers.

Well-known URIs are built by *path insertion* (RFC 8414 section 3.1, RFC 9728 section 3.1):
the well-known path goes between the host and the path of the identifier, after "any
terminating slash (/) following the host component" is removed; an identifier without a
path gets the well-known path alone.
"""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import SplitResult, urlsplit, urlunsplit

from ._errors import AuthError, InsecureEndpointError, detail

__all__ = [
    "OAUTH_SERVER",
    "OIDC",
    "PROTECTED_RESOURCE",
    "check_endpoint",
    "is_loopback",
    "origin",
    "path_appended",
    "has_path",
    "URI_CHARACTERS",
    "canonical_resource",
    "path_inserted",
    "same_resource",
]

#: RFC 9728 section 3: the well-known suffix of protected resource metadata.
PROTECTED_RESOURCE: Final = "oauth-protected-resource"
#: RFC 8414 section 3: the well-known suffix of authorization server metadata.
OAUTH_SERVER: Final = "oauth-authorization-server"
#: OpenID Connect Discovery 1.0 section 4: the well-known suffix of provider metadata.
OIDC: Final = "openid-configuration"
#: The characters a URI is made of (RFC 3986 section 2: unreserved, reserved, and "%" of a
#: percent-encoding); anything else (a space, a control character, a backslash, a DQUOTE,
#: a non-ASCII letter) is refused in an endpoint, where ``urlsplit`` would silently drop
#: some (tab, CR, LF, leading spaces) or read past others, checking a URL other than the
#: one returned.
URI_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    + "-._~"
    + ":/?#[]@"
    + "!$&'()*+,;="
    + "%"
)


def _split(url: str, what: str, step: str) -> SplitResult:
    if not set(url) <= URI_CHARACTERS:
        raise AuthError(
            f"{what} holds a character no URI has (RFC 3986 section 2): {detail(url)!r}",
            step=step,
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError as e:
        raise AuthError(f"{what} is not a valid URL: {detail(url)!r}", step=step) from e
    if not parts.scheme or not parts.hostname:
        raise AuthError(f"{what} is not an absolute URL: {detail(url)!r}", step=step)
    return parts


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_endpoint(url: str, what: str, step: str) -> str:
    """``url`` if it is ``https`` or ``http`` on a loopback host; else
    :class:`~mcp_sansio.auth.InsecureEndpointError` (MCP 2025-06-18 and later: "All
    authorization server endpoints **MUST** be served over HTTPS."; "All redirect URIs
    **MUST** be either ``localhost`` or use HTTPS."). A fragment is refused too (RFC 6749
    section 3.1: "The endpoint URI **MUST NOT** include a fragment component")."""
    parts = _split(url, what, step)
    scheme = parts.scheme.lower()
    if scheme == "https" or (scheme == "http" and is_loopback(parts.hostname or "")):
        if parts.fragment:
            raise AuthError(f"{what} has a fragment: {detail(url)!r}", step=step)
        return url
    raise InsecureEndpointError(
        f"{what} must be https (or http on a loopback host): {detail(url)!r}", step=step
    )


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: the 2025-03-26 *authorization base URL*
    ("determined from the MCP server URL by discarding any existing ``path``
    component")."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def path_inserted(identifier: str, suffix: str, *, issuer: bool = False) -> str:
    """``/.well-known/<suffix>`` inserted between the host and the path (and query) of
    ``identifier``.

    For a resource (RFC 9728 section 3.1): "any terminating slash (/) following the host
    component **MUST** be removed before inserting /.well-known/ and the well-known URI
    path suffix between the host component and the path and/or query components": a lone
    ``/`` goes, a path keeps its own trailing slash. For an ``issuer`` (RFC 8414 section
    3.1): "If the issuer identifier value contains a path component, any terminating
    "/" **MUST** be removed before inserting": the path's trailing slash goes too.
    """
    parts = urlsplit(identifier)
    path = "" if parts.path.strip("/") == "" else parts.path
    if issuer:
        path = path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{suffix}{path}", parts.query, ""))


def path_appended(identifier: str, suffix: str) -> str:
    """``/.well-known/<suffix>`` appended to the path of ``identifier`` (OpenID Connect
    Discovery 1.0 section 4.1: "removing any terminating ``/``" from the issuer first)."""
    parts = urlsplit(identifier)
    return urlunsplit(
        (parts.scheme, parts.netloc, f"{parts.path.rstrip('/')}/.well-known/{suffix}", "", "")
    )


def has_path(identifier: str) -> bool:
    """Whether ``identifier`` has a path other than ``/`` (the issuer "with path
    components" of MCP 2025-11-25 and later)."""
    return urlsplit(identifier).path.strip("/") != ""


def _case_folded(url: str) -> tuple[str, str, str, str] | None:
    try:
        parts = urlsplit(url)
    except ValueError:  # "Invalid IPv6 URL"
        return None
    return (parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query)


def same_resource(a: str, b: str) -> bool:
    """Whether two resource identifiers are the same one: identical but for the case of
    the scheme and host (MCP 2025-06-18 and later, Canonical Server URI: "implementations
    **SHOULD** accept uppercase scheme and host components for robustness and
    interoperability"), and a lone ``/`` path equal to none (RFC 3986 section 6.2.3). A
    string that is not a URL is the same as none."""
    fa, fb = _case_folded(a), _case_folded(b)
    if fa is None or fb is None:
        return False
    sa, na, pa, qa = fa
    sb, nb, pb, qb = fb
    return (sa, na, qa) == (sb, nb, qb) and (pa or "/") == (pb or "/")


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 section 2; MCP 2025-06-18 and later):
    scheme and host lower-cased, no fragment, and no lone trailing ``/`` ("implementations
    **SHOULD** consistently use the form without the trailing slash")."""
    parts = urlsplit(url)
    if parts.fragment:
        raise AuthError(f"the server URL has a fragment: {detail(url)!r}", step="usage")
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
