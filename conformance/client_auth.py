"""The authorization the conformance client uses in each ``auth/*`` scenario.

Facts from the suite's scenarios (``@modelcontextprotocol/conformance`` 0.1.16 and
0.2.0-alpha.12): each starts a mock authorization server and an MCP server that answers
401 until a token is presented; ``MCP_CONFORMANCE_CONTEXT`` carries what a real client
would have been configured with:

- ``auth/client-credentials-basic``: ``client_id``, ``client_secret``;
- ``auth/client-credentials-jwt``: ``client_id``, ``private_key_pem``, ``signing_algorithm``;
- ``auth/enterprise-managed-authorization`` (0.2) and ``auth/cross-app-access-complete-flow``
  (0.1): ``client_id``, ``client_secret`` (at the MCP server's authorization server),
  ``idp_client_id``, ``idp_id_token``, ``idp_issuer``, ``idp_token_endpoint``;
- ``auth/wif-jwt-bearer``: ``client_id``, ``valid_jwt`` (and two bad ones, unused);
- ``auth/pre-registration``: ``client_id``, ``client_secret``, ``issuer``;
- every other one (and ``auth/dpop``, ``auth/dpop-nonce``, which add DPoP to it): nothing;
  the code flow, with Dynamic Client Registration, or the Client ID Metadata Document
  ``https://conformance-test.local/client-metadata.json`` where the server supports those.

The mock authorization endpoint redirects at once to the ``redirect_uri`` with the code:
the person's step is a GET of the authorization URL, not following the redirect, whose
``Location`` is the redirect URL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_sansio.asyncio._fetch import fetch
from mcp_sansio.auth._client_auth import ClientAuth
from mcp_sansio.auth._dpop import DPoPAuth, DPoPKey
from mcp_sansio.auth._grants import ClientCredentials, EnterpriseManaged, GrantAuth, JwtBearer
from mcp_sansio.auth._metadata import PROFILES
from mcp_sansio.auth._oauth import HttpRequest
from mcp_sansio.auth._oauth_client import OAuthClient
from mcp_sansio.auth._store import ClientInfo

#: Where the mock authorization server is told to send the browser back (never opened).
REDIRECT_URI: Final = "http://localhost:3000/callback"
#: The Client ID Metadata Document URL the suite expects (``auth/basic-cimd``).
CLIENT_METADATA_URL: Final = "https://conformance-test.local/client-metadata.json"
CLIENT_NAME: Final = "mcp-sansio-conformance-client"
#: 0.1.16's "draft" scenarios, whose text became 2026-07-28.
_DRAFT: Final = frozenset(
    {"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported"}
)


def auth_version(scenario: str, wire: str | None) -> str:
    """The protocol version whose authorization text the client follows in ``scenario``:
    the suite's (0.2 sets it), else from the scenario's name (0.1.16 does not)."""
    if wire is not None and wire in PROFILES:
        return wire
    if scenario.startswith("auth/2025-03-26-"):
        return "2025-03-26"
    if scenario in _DRAFT:
        return "2026-07-28"
    return "2025-11-25"


async def open_url(url: str) -> str:
    """The person's step against the mock: GET the authorization URL, without following
    its redirect, and hand back the ``Location``."""
    status, headers, _body = await fetch(HttpRequest("GET", url, (("Accept", "text/html"),)))
    for name, value in headers:
        if name.lower() == "location":
            return value
    raise RuntimeError(f"the authorization endpoint answered {status} without a Location")


def _need(context: Mapping[str, Any], *names: str) -> list[str]:
    missing = [n for n in names if not isinstance(context.get(n), str)]
    if missing:
        raise RuntimeError(f"MCP_CONFORMANCE_CONTEXT has no {', '.join(missing)}")
    return [str(context[n]) for n in names]


def auth_for(url: str, scenario: str, wire: str | None, context: Mapping[str, Any]) -> ClientAuth:
    """The :class:`~mcp_sansio.auth.ClientAuth` for ``scenario`` against ``url``."""
    version = auth_version(scenario, wire)
    if scenario == "auth/client-credentials-basic":
        client_id, secret = _need(context, "client_id", "client_secret")
        return GrantAuth(url, ClientCredentials(client_id, client_secret=secret), version=version)
    if scenario == "auth/client-credentials-jwt":
        client_id, pem = _need(context, "client_id", "private_key_pem")
        algorithm = str(context.get("signing_algorithm") or "ES256")
        grant = ClientCredentials(client_id, private_key=pem, algorithm=algorithm)
        return GrantAuth(url, grant, version=version)
    if scenario in ("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow"):
        client_id, secret, id_token, endpoint = _need(
            context, "client_id", "client_secret", "idp_id_token", "idp_token_endpoint"
        )
        idp_client = context.get("idp_client_id")
        ema = EnterpriseManaged(
            id_token,
            endpoint,
            client_id,
            client_secret=secret,
            idp_client_id=idp_client if isinstance(idp_client, str) else None,
        )
        return GrantAuth(url, ema, version=version)
    if scenario == "auth/wif-jwt-bearer":
        (assertion,) = _need(context, "valid_jwt")
        workload = context.get("client_id")
        grant_wif = JwtBearer(assertion, client_id=workload if isinstance(workload, str) else None)
        return GrantAuth(url, grant_wif, version=version)
    client: ClientInfo | None = None
    if scenario == "auth/pre-registration":
        client_id, secret = _need(context, "client_id", "client_secret")
        issuer = context.get("issuer")
        client = ClientInfo(client_id, secret, issuer=issuer if isinstance(issuer, str) else None)
    dpop = scenario in ("auth/dpop", "auth/dpop-nonce")
    code_flow = OAuthClient(
        url,
        version=version,
        redirect_uri=REDIRECT_URI,
        client=client,
        client_metadata_url=CLIENT_METADATA_URL,
        client_name=CLIENT_NAME,
        # RFC 9449 section 5: a DPoP-bound token comes with token_type DPoP
        token_types=("bearer", "dpop") if dpop else ("bearer",),
    )
    if dpop:
        return DPoPAuth(code_flow, DPoPKey.generate())
    return code_flow
