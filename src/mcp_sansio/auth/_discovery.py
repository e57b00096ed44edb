"""Discovery of a protected resource's authorization server, sans-IO, for every flow.

:class:`Discovery` says which metadata document to GET next and takes each answer back,
until it holds the authorization server's metadata (:class:`Discovered`). The code flow
(:class:`~mcp_sansio.auth.AuthFlow`) and the extensions' grants
(:class:`~mcp_sansio.auth.GrantFlow`) both run it, so the order of the URIs, the checks
on each document and the 2025-03-26 fallbacks live here only. The steps::

    protected resource metadata (RFC 9728; not in 2025-03-26): the challenge's
    resource_metadata URL alone, else the path-inserted then the root well-known URI
        ──► the authorization server it names (the first, or the one asked for)
        ──► its metadata: the URIs of the version's text in order (RFC 8414 section 3,
            then OpenID Connect Discovery from 2025-11-25); in 2025-03-26 a 404 means the
            default endpoints

Each URI comes with the identifier its document must name (RFC 9728 section 3.3, RFC 8414
section 3.3); a 4xx tries the next URI, except for the challenge's URL, which MCP says to
use when present; any other status ends discovery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from ._challenge import BearerChallenge
from ._errors import AuthError, ResourceMetadataError, ServerMetadataError, detail
from ._metadata import (
    AuthProfile,
    MetadataCandidate,
    ResourceMetadata,
    ServerMetadata,
    default_server_metadata,
    metadata_document,
    metadata_request,
    parse_resource_metadata,
    parse_server_metadata,
    resource_metadata_candidates,
    server_metadata_candidates,
)
from ._oauth import HttpRequest
from ._urls import canonical_resource, check_endpoint

__all__ = ["Discovered", "Discovery"]

_PRM: Final = "resource metadata"
_ASM: Final = "server metadata"


@dataclass(frozen=True)
class Discovered:
    """What discovery found: the resource and its authorization server."""

    resource: str
    """The resource identifier to ask tokens for: the metadata's ``resource`` in its
    canonical form (RFC 8707 section 2); in 2025-03-26, which has no resource metadata,
    the MCP server's canonical URI."""
    server: ServerMetadata
    """The authorization server's metadata (in 2025-03-26 perhaps the defaults)."""
    resource_metadata: ResourceMetadata | None
    """The protected resource metadata (None in 2025-03-26)."""
    challenge_scope: str | None = None
    """The ``scope`` of the challenge that started the flow, if any."""

    def scope(self, given: str | None) -> str | None:
        """The scope to ask for: ``given``, else the challenge's, else the resource's
        ``scopes_supported`` (MCP 2025-11-25, Scope Selection Strategy: "Use ``scope``
        parameter from the initial ``WWW-Authenticate`` header ... If ``scope`` is not
        available, use all scopes defined in ``scopes_supported``"), else none."""
        if given is not None:
            return given
        if self.challenge_scope:
            return self.challenge_scope
        meta = self.resource_metadata
        if meta is not None and meta.scopes_supported:
            return " ".join(meta.scopes_supported)
        return None


class Discovery:
    """The discovery of ``server_url``'s authorization server (``server_url`` in its
    canonical form), as ``profile``'s text says, started by ``challenge`` (its
    ``resource_metadata`` URL is used alone when present: MCP, clients **MUST** "use the
    resource metadata URL from the parsed ``WWW-Authenticate`` headers when present").
    ``authorization_server`` picks one of the resource's authorization servers (by
    default the first it lists: RFC 9728 section 7.6 leaves the choice to the client).
    ``pkce`` says whether the server's metadata must show PKCE support as
    :attr:`~mcp_sansio.auth.AuthProfile.pkce_metadata_required` says (the code flow);
    a grant without an authorization request does not check it.

    :attr:`request` is the GET to make; :meth:`receive` takes its answer. A failure
    raises the step's :class:`~mcp_sansio.auth.AuthError` (after it the object is not
    used again)."""

    def __init__(
        self,
        server_url: str,
        profile: AuthProfile,
        *,
        challenge: BearerChallenge | None = None,
        authorization_server: str | None = None,
        pkce: bool = True,
    ) -> None:
        self.server_url = server_url
        """The MCP server's canonical URI."""
        self.profile = profile
        """The version's authorization text."""
        self.resource_metadata: ResourceMetadata | None = None
        """The protected resource metadata, once fetched."""
        self._chosen = authorization_server
        self._pkce = pkce
        self._scope = None if challenge is None else challenge.scope
        self._candidates: list[MetadataCandidate]
        if profile.resource_metadata:
            header_url = None if challenge is None else challenge.resource_metadata
            self._phase: str = _PRM
            self._candidates = resource_metadata_candidates(server_url, header_url)
            self._from_header = header_url is not None
        else:
            self._phase = _ASM
            self._candidates = server_metadata_candidates(server_url, profile)
            self._from_header = False

    @property
    def phase(self) -> str:
        """``"resource metadata"`` or ``"server metadata"``: which document is sought."""
        return self._phase

    @property
    def request(self) -> HttpRequest:
        """The GET to make now."""
        return metadata_request(self._candidates[0].url, self.profile)

    def receive(self, status: int, body: bytes) -> Discovered | None:
        """Take the answer to :attr:`request`: what was found, once the authorization
        server's metadata is known; else None (make the next :attr:`request`)."""
        if self._phase == _PRM:
            self._on_resource_metadata(status, body)
            return None
        return self._on_server_metadata(status, body)

    def _next_candidate(self, status: int, error: type[AuthError]) -> bool:
        """Whether another URI is left to try after a non-200 ``status``."""
        url = detail(self._candidates[0].url)
        if self._from_header:
            raise error(f"the resource_metadata URL {url!r} answered {status}")
        if not 400 <= status <= 499:
            raise error(f"{url!r} answered {status}")
        self._candidates.pop(0)
        return bool(self._candidates)

    def _on_resource_metadata(self, status: int, body: bytes) -> None:
        if status != 200:
            if not self._next_candidate(status, ResourceMetadataError):
                raise ResourceMetadataError(
                    f"no protected resource metadata found for {detail(self.server_url)!r}"
                    " (each well-known URI answered 4xx)"
                )
            return
        candidate = self._candidates[0]
        doc = metadata_document(body, candidate.url, ResourceMetadataError)
        meta = self.resource_metadata = parse_resource_metadata(doc, candidate)
        if self._chosen is None:
            issuer = meta.authorization_servers[0]
        elif self._chosen in meta.authorization_servers:
            issuer = self._chosen
        else:
            raise ResourceMetadataError(
                f"the authorization server {detail(self._chosen)!r} is not one the resource lists"
            )
        check_endpoint(issuer, "the authorization server", "resource metadata")
        if urlsplit(issuer).query:
            # RFC 8414 section 2: the issuer identifier "has no query or fragment components"
            raise ResourceMetadataError(
                f"the authorization server {detail(issuer)!r} has a query; an issuer "
                "identifier has none (RFC 8414 section 2)"
            )
        self._candidates = server_metadata_candidates(issuer, self.profile)
        self._from_header = False
        self._phase = _ASM

    def _on_server_metadata(self, status: int, body: bytes) -> Discovered | None:
        if status != 200:
            if self._next_candidate(status, ServerMetadataError):
                return None
            if self.profile.default_endpoints and status == 404:
                return self._found(default_server_metadata(self.server_url))
            raise ServerMetadataError(
                "no authorization server metadata found (each well-known URI answered 4xx)"
            )
        candidate = self._candidates[0]
        doc = metadata_document(body, candidate.url, ServerMetadataError)
        return self._found(parse_server_metadata(doc, candidate, self.profile, pkce=self._pkce))

    def _found(self, server: ServerMetadata) -> Discovered:
        meta = self.resource_metadata
        resource = self.server_url if meta is None else canonical_resource(meta.resource)
        return Discovered(resource, server, meta, self._scope)
