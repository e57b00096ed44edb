"""Property-based fuzzing of the OAuth client core (issue 19): bad input gets a clear error
and loses nothing; nothing but the documented errors escapes on any input.

Parsers a remote party feeds (``WWW-Authenticate``, both metadata documents, the token and
registration answers, the redirect): each returns its documented type or raises an
:class:`~mcp_sansio.auth.AuthError` subclass, never ``TypeError``, ``ValueError``,
``UnicodeError``, an orjson error..., and no error's ``str()`` or ``repr()`` holds one of
the secrets planted in its input (a code, a token, a client secret, a verifier).

State machines: :class:`~mcp_sansio.auth.AuthFlow` driven with answers that are right,
one field wrong, or anything at all, and redirects likewise: only ``AuthError`` escapes; a
failed flow stays failed (:class:`~mcp_sansio.auth.AuthUsageError` afterwards); the flow
ends within a bounded number of steps; every request goes to an ``https`` or loopback URL
made of URI characters; a credential (client secret, code, verifier, refresh token) goes
to the token endpoint only. :class:`~mcp_sansio.auth._oauth_client.OAuthClient` against a
server that refuses every token: a bounded number of flows, the token only to the MCP
server's origin.

Each defect found is pinned by a plain ``test_found_*`` test below.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import orjson
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from mcp_sansio.auth._challenge import (
    MAX_FIELD,
    BearerChallenge,
    Challenge,
    bearer_challenge,
    parse_www_authenticate,
)
from mcp_sansio.auth._errors import (
    AuthError,
    AuthorizationResponseError,
    AuthUsageError,
    ChallengeError,
    ResourceMetadataError,
    StateMismatchError,
)
from mcp_sansio.auth._flow import AuthFlow, Authorized, OpenUrl
from mcp_sansio.auth._metadata import (
    MAX_METADATA,
    PROFILES,
    MetadataCandidate,
    ResourceMetadata,
    ServerMetadata,
    parse_resource_metadata,
    parse_server_metadata,
)
from mcp_sansio.auth._oauth import (
    AuthorizationCode,
    HttpRequest,
    parse_authorization_response,
    parse_token_response,
)
from mcp_sansio.auth._oauth_client import OAuthClient
from mcp_sansio.auth._register import parse_registration_response
from mcp_sansio.auth._store import ClientInfo, MemoryTokenStore, TokenKey, Tokens
from mcp_sansio.auth._urls import is_loopback

#: A secret planted in inputs: no error message may ever show it (built, not a literal,
#: so that hypothesis, which draws text from the literals of the tested code, never makes
#: it up in a field an error message quotes on purpose, as ``error``).
SECRET = "".join(("Zq7", "SEC", "RETv", "X9"))
VERIFIER = "v" * 20 + SECRET + "w" * 20
MCP = "https://mcp.example.com/mcp"
ORIGIN = "https://mcp.example.com"
AS = "https://as.example.com"
REDIRECT = "http://127.0.0.1:5555/cb"
STATE = "st-" + "s" * 40
#: The characters of a URI (RFC 3986 section 2: unreserved, reserved, and "%").
URI_CHARS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")


def scaled(n: int) -> int:
    """``n`` examples under the default profile (CI: a few seconds), the profile's own
    number under a longer one (``HYPOTHESIS_PROFILE=long``)."""
    profile = settings.default
    examples = 100 if profile is None else profile.max_examples
    return n if examples <= 100 else examples


# -- strategies --------------------------------------------------------------------------

urlish = st.builds(
    lambda a, b: a + b,
    st.sampled_from(
        [
            "https://as.example.com",
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:9",
            "http://evil.example",
            "https://[",
            "http://[::1",
            "https://as.example.com:99999",
            "https://as.example.com/\r\n",
            "http://evil.example\\@127.0.0.1",
            " https://as.example.com",
            "",
        ]
    ),
    st.text(max_size=8),
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | urlish
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def mutated(doc: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``doc`` with one field replaced by any JSON value, removed, or one added."""
    names = sorted(doc)
    replace = st.builds(lambda k, v: {**doc, k: v}, st.sampled_from(names), json_values)
    remove = st.builds(lambda k: {n: v for n, v in doc.items() if n != k}, st.sampled_from(names))
    add = st.builds(lambda k, v: {**doc, k: v}, st.text(max_size=8), json_values)
    return replace | remove | add


def bodies(doc: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """What a hostile peer answers where ``doc`` belongs: ``doc`` mutated, any JSON, any bytes."""
    return (
        mutated(doc).map(orjson.dumps)
        | json_values.map(orjson.dumps)
        | st.binary(max_size=64)
        | st.just(orjson.dumps(doc))
    )


def checked(error: BaseException, *secrets: str) -> None:
    """``error`` is an AuthError whose text holds none of ``secrets``."""
    assert isinstance(error, AuthError), repr(error)
    for text in (str(error), repr(error), error.reason, error.step):
        for secret in secrets:
            assert secret not in text, (secret, text)


def outcome(fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return fn(*args, **kw)
    except AuthError as e:
        checked(e, SECRET, VERIFIER)
        return e


# -- WWW-Authenticate ----------------------------------------------------------------------

header_pieces = st.sampled_from(
    [
        "Bearer",
        "bearer",
        "Basic",
        "DPoP",
        " ",
        "  ",
        "\t",
        ",",
        ", ,",
        "=",
        "==",
        '"',
        '\\"',
        "\\",
        "realm",
        "scope",
        "error",
        "resource_metadata",
        "error_description",
        "insufficient_scope",
        '"a b"',
        "abc",
        "a+/=",
        "\x00",
        "\x7f",
        "\r\n",
        "é",
        "\u2028",
        "\ud800",
        "😀",
        '"unbalanced',
        "scope=a",
        'scope="a"',
    ]
)
headers = st.lists(header_pieces | st.text(max_size=6), max_size=16).map("".join)


@given(st.one_of(headers, st.text(), st.lists(headers | st.text(max_size=20), max_size=4)))
def test_www_authenticate_any_text(values: str | list[str]) -> None:
    got = outcome(parse_www_authenticate, values)
    if isinstance(got, AuthError):
        assert isinstance(got, ChallengeError)
        assert bearer_challenge_or_error(values)
        return
    assert all(isinstance(c, Challenge) and c.scheme == c.scheme.lower() for c in got)
    for c in got:
        assert all(k == k.lower() and isinstance(v, str) for k, v in c.params.items())
    b = bearer_challenge(values)
    assert b is None or isinstance(b, BearerChallenge)


def bearer_challenge_or_error(values: str | list[str]) -> bool:
    try:
        bearer_challenge(values)
    except ChallengeError:
        return True
    return False


param_names = st.sampled_from(["realm", "scope", "error", "resource_metadata", "x-y"])
quotable = st.text(
    st.characters(
        min_codepoint=0x20,
        max_codepoint=0x10FFFF,
        exclude_characters="\x7f",
        categories=("L", "M", "N", "P", "S", "Zs"),
    ),
    max_size=10,
)


@given(
    st.sampled_from(["Bearer", "DPoP", "Basic"]),
    st.dictionaries(param_names, quotable, min_size=1, max_size=4),
    st.sampled_from([",", ", ", " , ", ",,"]),
)
def test_www_authenticate_params_round_trip(
    scheme: str, params: dict[str, str], comma: str
) -> None:
    # RFC 9110 section 5.6.4: a quoted-string with every DQUOTE and backslash escaped
    def q(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    text = f"{scheme} " + comma.join(f"{k}={q(v)}" for k, v in params.items())
    (challenge,) = parse_www_authenticate([text])
    assert challenge.scheme == scheme.lower()
    assert dict(challenge.params) == params


def test_www_authenticate_huge_and_repeated() -> None:
    with pytest.raises(ChallengeError):
        parse_www_authenticate("Bearer realm=" + "a" * MAX_FIELD)
    with pytest.raises(ChallengeError):
        parse_www_authenticate(["Bearer realm=a"] * (MAX_FIELD // 10))
    with pytest.raises(ChallengeError):
        parse_www_authenticate('Bearer scope="a", SCOPE="b"')
    assert len(parse_www_authenticate("Bearer, " * 1000)) == 1000


# -- the metadata documents ----------------------------------------------------------------

PRM_DOC: dict[str, Any] = {
    "resource": MCP,
    "authorization_servers": [AS],
    "scopes_supported": ["a", "b"],
}
ASM_DOC: dict[str, Any] = {
    "issuer": AS,
    "authorization_endpoint": f"{AS}/authorize",
    "token_endpoint": f"{AS}/token",
    "registration_endpoint": f"{AS}/register",
    "code_challenge_methods_supported": ["S256"],
    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    "scopes_supported": ["a", "offline_access"],
    "authorization_response_iss_parameter_supported": True,
    "client_id_metadata_document_supported": False,
}
PRM_AT = MetadataCandidate(f"{ORIGIN}/.well-known/oauth-protected-resource/mcp", MCP)
ASM_AT = MetadataCandidate(f"{AS}/.well-known/oauth-authorization-server", AS)


@given(json_values | mutated(PRM_DOC))
def test_resource_metadata_any_document(doc: object) -> None:
    got = outcome(parse_resource_metadata, doc, PRM_AT)
    assert isinstance(got, (ResourceMetadata, AuthError))


@given(json_values | mutated(ASM_DOC), st.sampled_from(sorted(PROFILES.values(), key=str)))
def test_server_metadata_any_document(doc: object, profile: Any) -> None:
    got = outcome(parse_server_metadata, doc, ASM_AT, profile)
    if isinstance(got, ServerMetadata):
        for url in (got.authorization_endpoint, got.token_endpoint, got.registration_endpoint):
            assert url is None or safe_url(url), url


def safe_url(url: str) -> bool:
    """https, or http on a loopback host; URI characters only."""
    if not set(url) <= URI_CHARS:
        return False
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname or ""))


# -- the token and registration answers ----------------------------------------------------

TOKEN_DOC: dict[str, Any] = {
    "access_token": SECRET,
    "token_type": "Bearer",
    "expires_in": 60,
    "refresh_token": SECRET + "r",
    "scope": "a b",
}
REGISTERED: dict[str, Any] = {
    "client_id": "cid",
    "client_secret": SECRET,
    "client_secret_expires_at": 0,
    "token_endpoint_auth_method": "client_secret_basic",
    "redirect_uris": [REDIRECT],
}
statuses = st.sampled_from([200, 201, 204, 301, 400, 401, 403, 404, 500]) | st.integers(0, 999)


@given(statuses, bodies(TOKEN_DOC) | bodies({"error": "invalid_grant", "access_token": SECRET}))
def test_token_response_any_answer(status: int, body: bytes) -> None:
    try:
        got = parse_token_response(status, body, now=1.0)
    except AuthError as e:
        # the server's own error and error_description are quoted on purpose
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            doc = {}
        shown = str(doc.get("error", "")) + str(doc.get("error_description", ""))
        checked(e, *([] if SECRET in shown else [SECRET]))
        return
    if isinstance(got, Tokens):
        assert status == 200
        assert got.access_token
        assert got.token_type == "Bearer"
        assert SECRET not in repr(got)


@given(statuses, bodies(REGISTERED), st.sampled_from(["none", "client_secret_basic"]))
def test_registration_response_any_answer(status: int, body: bytes, method: Any) -> None:
    got = outcome(
        parse_registration_response,
        status,
        body,
        issuer=AS,
        redirect_uri=REDIRECT,
        requested_method=method,
    )
    if isinstance(got, ClientInfo):
        assert got.issuer == AS
        assert got.client_id
        assert SECRET not in repr(got)


# -- the redirect ----------------------------------------------------------------------------

query_names = st.sampled_from(["state", "code", "iss", "error", "error_description", "x"])
query_values = st.sampled_from([STATE, SECRET, AS, "", "access_denied"]) | st.text(max_size=6)


@st.composite
def redirects(draw: st.DrawFn) -> str:
    base = draw(
        st.sampled_from([REDIRECT, REDIRECT.upper(), "http://127.0.0.1:5556/cb", "http://[::1"])
        | urlish
    )
    pairs = draw(st.lists(st.tuples(query_names, query_values), max_size=6))
    if draw(st.booleans()):
        query = urlencode(pairs, quote_via=quote)
    else:
        query = "&".join(f"{k}={v}" for k, v in pairs)
    fragment = draw(st.sampled_from(["", f"#code={SECRET}", "#", "#\ud800"]))
    return f"{base}?{query}{fragment}"


@given(redirects() | st.text(), st.booleans())
def test_authorization_response_any_redirect(redirect: str, iss_supported: bool) -> None:
    got = outcome(
        parse_authorization_response,
        redirect,
        redirect_uri=REDIRECT,
        state=STATE,
        issuer=AS,
        iss_supported=iss_supported,
    )
    if isinstance(got, AuthorizationCode):
        assert got.code
        assert SECRET not in repr(got)


# -- AuthFlow as a state machine ---------------------------------------------------------------

CLIENT_SECRET = SECRET + "c"
CODE = SECRET + "code"
KEPT_REFRESH = SECRET + "rt"
#: Every credential the flow may hold: each may go to the token endpoint only.
CREDENTIALS = (SECRET, CLIENT_SECRET, CODE, VERIFIER, KEPT_REFRESH, TOKEN_DOC["refresh_token"])
#: The most next_step() answers a flow gives: 2 resource metadata URLs, 3 server metadata
#: URLs, registration, refresh, the person, the code's exchange, the result.
MAX_STEPS = 10


def issuer_of(version: str) -> str:
    return ORIGIN if version == "2025-03-26" else AS


def right_answer(req: HttpRequest, version: str) -> tuple[int, dict[str, Any]]:
    """What a working MCP server and authorization server answer."""
    issuer = issuer_of(version)
    if "/.well-known/oauth-protected-resource" in req.url:
        return 200, PRM_DOC
    if "/.well-known/" in req.url:
        endpoints = {k: v.replace(AS, issuer) for k, v in ASM_DOC.items() if k.endswith("endpoint")}
        return 200, {**ASM_DOC, **endpoints, "issuer": issuer}
    if req.url == f"{issuer}/register":
        return 201, REGISTERED
    if req.url == f"{issuer}/token":
        return 200, TOKEN_DOC
    return 404, {}


def right_redirect(url: str, version: str) -> str:
    query = dict(parse_qsl(urlsplit(url).query))
    back = {"code": CODE, "state": query.get("state", ""), "iss": issuer_of(version)}
    return f"{REDIRECT}?{urlencode(back)}"


def near_redirects(right: str) -> st.SearchStrategy[str]:
    """``right`` with one thing changed: a parameter repeated, dropped, replaced or
    percent-encoded anew, a fragment added, the host's case changed."""
    base, _, query = right.partition("?")
    pairs = parse_qsl(query)

    def change(how: str, i: int, text: str) -> str:
        got = list(pairs)
        k = got[i % len(got)][0]
        if how == "repeat":
            got.append((k, text))
        elif how == "drop":
            del got[i % len(got)]
        elif how == "replace":
            got[i % len(got)] = (k, text)
        elif how == "fragment":
            return f"{right}#{text}"
        elif how == "host":
            return right.replace("127.0.0.1", "LOCALHOST")
        return f"{base}?{urlencode(got, quote_via=quote, safe='')}"

    hows = st.sampled_from(["repeat", "drop", "replace", "fragment", "host", "encode"])
    return st.builds(change, hows, st.integers(0, 5), st.text(max_size=6))


def check_request(flow: AuthFlow, req: HttpRequest) -> None:
    """The request goes to a safe URL; a credential only to the token endpoint."""
    assert safe_url(req.url), req.url
    assert all(c not in repr(req) for c in CREDENTIALS)
    meta = flow.server_metadata
    token_endpoint = None if meta is None else meta.token_endpoint
    carried = req.body.decode("ascii") + "".join(v for _, v in req.headers)
    if any(quote(c) in carried or c in carried for c in CREDENTIALS) or any(
        k.lower() == "authorization" for k, _ in req.headers
    ):
        assert req.method == "POST", req
        assert req.url == token_endpoint, req


flow_clients = st.sampled_from(
    [
        None,
        ClientInfo("pre"),
        ClientInfo("pre", CLIENT_SECRET),
        ClientInfo("pre", CLIENT_SECRET, auth_method="client_secret_post"),
        ClientInfo("pre", issuer="https://other.example.com"),
    ]
)
flow_challenges = (
    st.sampled_from(
        [
            None,
            'Bearer scope="a"',
            f'Bearer resource_metadata="{PRM_AT.url}"',
            'Bearer error="insufficient_scope", scope="a b"',
            f'Bearer resource_metadata="{PRM_AT.url}x"',
            'Bearer resource_metadata="http://evil.example/prm"',
        ]
    )
    | headers
)


@given(
    st.sampled_from(sorted(PROFILES)),
    flow_clients,
    flow_challenges,
    st.booleans(),
    st.data(),
)
@settings(max_examples=scaled(60))
def test_flow_with_any_answers(
    version: str, client: ClientInfo | None, www: str | None, kept: bool, data: st.DataObject
) -> None:
    store = MemoryTokenStore()
    if kept:
        tokens = Tokens("old" + SECRET, "Bearer", None, KEPT_REFRESH, "a", 0.0)
        store.save(TokenKey(issuer_of(version), MCP), tokens)
    try:
        flow = AuthFlow(
            MCP,
            version=version,
            redirect_uri=REDIRECT,
            client=client,
            www_authenticate=www,
            store=store,
            code_verifier=VERIFIER,
        )
    except AuthError as e:
        checked(e, *CREDENTIALS)  # a broken challenge, an insecure resource_metadata URL
        return
    kinds = st.sampled_from(["right"] * 5 + ["mutated", "any", "misuse"])
    last_body = b""
    for n in range(MAX_STEPS + 1):
        assert n < MAX_STEPS, "the flow did not end"
        step = flow.next_step()
        note(f"{flow.phase}: {step!r}")
        if isinstance(step, Authorized):
            # the token of the answer that ended the flow: the right one, or a mutated
            # answer that is still a valid token response (another access_token)
            assert step.tokens.access_token == orjson.loads(last_body)["access_token"]
            assert store.load(step.key) == step.tokens
            return
        kind = data.draw(kinds)
        kept_before = dict(store._tokens)
        try:
            if kind == "misuse":
                phase = flow.phase
                with pytest.raises(AuthUsageError):
                    misuse(flow, step)
                assert flow.phase == phase
                kind = "right"
            if isinstance(step, OpenUrl):
                assert safe_url(step.url)
                assert VERIFIER not in step.url
                if kind == "right":
                    redirect = right_redirect(step.url, version)
                else:
                    redirect = data.draw(
                        redirects() | st.text() | near_redirects(right_redirect(step.url, version))
                    )
                flow.receive_redirect(redirect)
                continue
            check_request(flow, step)
            status, doc = right_answer(step, version)
            if kind == "right":
                body = orjson.dumps(doc)
            else:
                body = data.draw(bodies(doc))
                status = data.draw(st.sampled_from([status, status, 200, 201, 400, 404, 500]))
            last_body = body
            flow.receive_response(status, (), body, now=1.0)
        except AuthError as e:
            checked(e, *CREDENTIALS)
            assert flow.phase == "failed"
            # a refusal loses nothing: the tokens kept stay as they were
            assert store._tokens == kept_before
            with pytest.raises(AuthUsageError):
                flow.next_step()
            with pytest.raises(AuthUsageError):
                flow.receive_response(200, (), b"{}")
            return


def misuse(flow: AuthFlow, step: HttpRequest | OpenUrl) -> None:
    """The answer the flow is not waiting for."""
    if isinstance(step, OpenUrl):
        flow.receive_response(200, (), b"{}")
    else:
        flow.receive_redirect(REDIRECT)


def test_documents_over_the_bound_are_refused() -> None:
    big = orjson.dumps({**PRM_DOC, "x": "y" * MAX_METADATA})
    flow = AuthFlow(MCP, version="2025-11-25", redirect_uri=REDIRECT, client=ClientInfo("c"))
    with pytest.raises(AuthError, match="over"):
        flow.receive_response(200, (), big)
    flow = AuthFlow(MCP, version="2025-11-25", redirect_uri=REDIRECT, client=ClientInfo("c"))
    flow.receive_response(200, (), orjson.dumps(PRM_DOC))
    with pytest.raises(AuthError, match="over"):
        flow.receive_response(200, (), orjson.dumps({**ASM_DOC, "x": "y" * MAX_METADATA}))


# -- OAuthClient against a server that refuses every token -------------------------------------

challenge_answers = st.tuples(
    st.sampled_from([401, 401, 403]),
    st.sampled_from(
        [
            'Bearer error="invalid_token"',
            'Bearer error="insufficient_scope", scope="a"',
            'Bearer error="insufficient_scope", scope="a b"',
            'Bearer error="insufficient_scope", scope="b a"',
            'Bearer error="insufficient_scope"',
            "Bearer",
            'Bearer realm="x", realm="y"',
            "",
        ]
    ),
)
#: The distinct scope sets of the step-ups above: "a", "a b", none.
SCOPE_SETS = 3


@given(
    st.sampled_from(sorted(PROFILES)),
    st.sampled_from([None, 0, 1, 100]),
    st.lists(challenge_answers, min_size=1, max_size=40),
    st.lists(urlish | st.sampled_from([MCP, ORIGIN + "/other", "HTTPS://MCP.example.com:443/x"])),
)
@settings(max_examples=scaled(40))
def test_oauth_client_flows_are_bounded(
    version: str,
    expires_in: int | None,
    answers: list[tuple[int, str]],
    urls: list[str],
) -> None:
    auth = OAuthClient(MCP, version=version, redirect_uri=REDIRECT, client=ClientInfo("c"))
    token_doc = {**TOKEN_DOC, "expires_in": expires_in}
    authorized = 0
    now = 5.0  # the server refuses every token at once: the clock does not move
    for status, value in answers:
        flow = auth.challenged(status, [("WWW-Authenticate", value)] if value else [], now=now)
        if flow is None:
            continue
        for _ in range(MAX_STEPS):
            step = flow.next_step()
            if isinstance(step, Authorized):
                auth.authorized(step, now=now)
                authorized += 1
                break
            if isinstance(step, OpenUrl):
                flow.receive_redirect(right_redirect(step.url, version))
                continue
            got, doc = right_answer(step, version)
            if step.url.endswith("/token"):
                doc = token_doc
            flow.receive_response(got, (), orjson.dumps(doc), now=now)
        else:
            raise AssertionError("the flow did not end")
    # the first authorization, then max_step_ups 401s for a fresh token and max_step_ups
    # step-ups per scope set
    assert authorized <= 1 + auth.max_step_ups * (1 + SCOPE_SETS)
    for url in urls:
        sent = auth.headers("POST", url, now=now)
        if sent:
            parts = urlsplit(url)
            assert parts.scheme.lower() == "https"
            assert parts.hostname == "mcp.example.com"
            assert parts.port in (None, 443)


# -- the defects found, pinned ------------------------------------------------------------------


def test_found_redirect_to_a_broken_ipv6_host() -> None:
    # was: ValueError("Invalid IPv6 URL") out of urlsplit
    with pytest.raises(AuthorizationResponseError):
        parse_authorization_response(
            "http://[::1?", redirect_uri=REDIRECT, state=STATE, issuer=AS, iss_supported=False
        )


def test_found_redirect_fragment_not_quoted() -> None:
    # was: the message quoted the fragment, code and all
    with pytest.raises(AuthorizationResponseError) as e:
        parse_authorization_response(
            f"HTTP://127.0.0.1:5555/CB?#code={SECRET}",
            redirect_uri=REDIRECT,
            state=STATE,
            issuer=AS,
            iss_supported=False,
        )
    checked(e.value, SECRET)


def test_found_redirect_with_a_lone_surrogate_in_state() -> None:
    with pytest.raises(StateMismatchError):
        parse_authorization_response(
            f"{REDIRECT}?state=\ud800&code=c",
            redirect_uri=REDIRECT,
            state=STATE,
            issuer=AS,
            iss_supported=False,
        )


@pytest.mark.parametrize(
    "url",
    [
        'https://as.example.com"',
        "https://as.example.com/\r\nHost: evil",
        "http://loc\talhost/token",
        " https://as.example.com/token",
        "http://evil.example\\@127.0.0.1/token",
        "https://as.example.com/tök",
    ],
)
def test_found_endpoint_with_characters_no_uri_has(url: str) -> None:
    # was: accepted (urlsplit drops tab, CR and LF and leading spaces, and reads past a
    # backslash, so the URL checked was not the URL returned)
    with pytest.raises(AuthError) as e:
        parse_server_metadata({**ASM_DOC, "token_endpoint": url}, ASM_AT, PROFILES["2025-11-25"])
    assert e.value.step == "server metadata"


@pytest.mark.parametrize("resource", ["https://[", "https://mcp.example.com/mcp#x"])
def test_found_resource_that_is_no_resource_identifier(resource: str) -> None:
    # was: ValueError out of urlsplit; a fragment passed the comparison and then failed the
    # flow at step "usage"
    with pytest.raises(ResourceMetadataError):
        parse_resource_metadata({**PRM_DOC, "resource": resource}, PRM_AT)


def test_found_tokens_expired_when_issued_do_not_loop() -> None:
    # was: each 401 for a token with expires_in 0 reset the count (the token had expired),
    # so a server issuing such tokens and refusing them made refresh after refresh, no end
    auth = OAuthClient(MCP, version="2025-11-25", redirect_uri=REDIRECT, client=ClientInfo("c"))
    authorized = 0
    for _ in range(10):
        flow = auth.challenged(401, [("WWW-Authenticate", "Bearer")], now=5.0)
        if flow is None:
            break
        while not isinstance(step := flow.next_step(), Authorized):
            if isinstance(step, OpenUrl):
                flow.receive_redirect(right_redirect(step.url, "2025-11-25"))
                continue
            status, doc = right_answer(step, "2025-11-25")
            if step.url.endswith("/token"):
                doc = {**TOKEN_DOC, "expires_in": 0}
            flow.receive_response(status, (), orjson.dumps(doc), now=5.0)
        auth.authorized(step, now=5.0)
        authorized += 1
    assert authorized == 1 + auth.max_step_ups


# -- docs/auth.rst, "What the client refuses": each row raised ------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs" / "auth.rst"


def refusals_table() -> list[tuple[str, str]]:
    """The (error class, step) of each row of the table, in order."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("What the client refuses\n", 1)[1].split("\nReference\n", 1)[0]
    rows = re.findall(r"^   \* - ``(\w+)``\n     - ([a-z ]+)$", section, flags=re.MULTILINE)
    return [(name, step) for name, step in rows]


def _flow(version: str = "2025-11-25", **kw: Any) -> AuthFlow:
    kw.setdefault("client", ClientInfo("c"))
    kw.setdefault("redirect_uri", REDIRECT)
    return AuthFlow(MCP, version=version, **kw)


def _asm(version: str = "2025-11-25", **doc: Any) -> None:
    parse_server_metadata({**ASM_DOC, **doc}, ASM_AT, PROFILES[version])


def _redirect(query: str, *, iss_supported: bool = True) -> None:
    parse_authorization_response(
        f"{REDIRECT}?{query}",
        redirect_uri=REDIRECT,
        state=STATE,
        issuer=AS,
        iss_supported=iss_supported,
    )


def _bound_client() -> None:
    flow = _flow("2026-07-28", client=ClientInfo("c", issuer="https://other.example.com"))
    flow.receive_response(200, (), orjson.dumps(PRM_DOC))
    flow.receive_response(200, (), orjson.dumps(ASM_DOC))


def _header_url_404() -> None:
    flow = _flow(www_authenticate=f'Bearer resource_metadata="{PRM_AT.url}"')
    flow.receive_response(404, (), b"")


def _issuer_with_a_query() -> None:
    flow = _flow()
    flow.receive_response(
        200, (), orjson.dumps({**PRM_DOC, "authorization_servers": [AS + "?a=b"]})
    )


def _registration(status: int, doc: dict[str, Any]) -> None:
    parse_registration_response(
        status, orjson.dumps(doc), issuer=AS, redirect_uri=REDIRECT, requested_method="none"
    )


#: One case per row of the table, in its order.
REFUSALS: list[Any] = [
    lambda: parse_www_authenticate('Bearer scope="a", scope="b"'),
    lambda: _flow(redirect_uri="http://app.example.com/cb"),
    lambda: _asm(token_endpoint="http://as.example.com/token"),
    lambda: _asm(token_endpoint="https://as.example.com/token\r\nX: y"),
    _header_url_404,
    lambda: parse_resource_metadata(
        {**PRM_DOC, "resource": "https://mcp.example.com/other"}, PRM_AT
    ),
    lambda: parse_resource_metadata({**PRM_DOC, "resource": MCP + "#f"}, PRM_AT),
    lambda: parse_resource_metadata({**PRM_DOC, "authorization_servers": []}, PRM_AT),
    _issuer_with_a_query,
    lambda: _asm(issuer=AS + "/"),
    lambda: _asm(code_challenge_methods_supported=None),
    lambda: _asm("2025-06-18", code_challenge_methods_supported=["plain"]),
    _bound_client,
    lambda: _registration(400, {"error": "invalid_redirect_uri"}),
    lambda: _registration(201, {"client_id": "c", "redirect_uris": ["http://127.0.0.1:1/x"]}),
    lambda: _redirect("state=other&code=c&iss=https%3A%2F%2Fas.example.com"),
    lambda: _redirect(f"state={STATE}&code=c"),
    lambda: _redirect(
        f"state={STATE}&code=c&iss=https%3A%2F%2FAS.example.com", iss_supported=False
    ),
    lambda: parse_token_response(200, b'{"access_token": "t", "token_type": "mac"}'),
    lambda: parse_token_response(200, b'{"token_type": "Bearer"}'),
]


def test_the_refusals_table_is_what_is_raised() -> None:
    rows = refusals_table()
    assert len(rows) == len(REFUSALS), "docs/auth.rst's table and REFUSALS differ in length"
    for (name, step), case in zip(rows, REFUSALS, strict=True):
        with pytest.raises(AuthError) as e:
            case()
        assert (type(e.value).__name__, e.value.step) == (name, step), e.value


header_names = st.sampled_from(["WWW-Authenticate", "www-authenticate", "X-Other"])


@given(
    st.integers(0, 999) | st.sampled_from([401, 403]),
    st.lists(st.tuples(header_names, headers | flow_challenges.filter(bool)), max_size=4),
    st.text() | urlish,
)
def test_oauth_client_any_challenge_and_url(
    status: int, answer: list[tuple[str, str]], url: str
) -> None:
    auth = OAuthClient(MCP, version="2025-11-25", redirect_uri=REDIRECT)
    try:
        flow = auth.challenged(status, answer, now=0.0)
    except AuthError as e:  # the challenge's resource_metadata URL is not https
        checked(e, SECRET)
    else:
        assert flow is None or isinstance(flow, AuthFlow)
    assert auth.headers("POST", url, now=0.0) == ()
