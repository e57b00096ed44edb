"""WWW-Authenticate parsing (RFC 9110 section 11.6.1) and the Bearer challenge."""

from __future__ import annotations

import pytest

from mcp_sansio.auth import (
    BearerChallenge,
    Challenge,
    ChallengeError,
    bearer_challenge,
    parse_www_authenticate,
)


def test_mcp_example_challenge() -> None:
    # MCP 2025-11-25, Protected Resource Metadata Discovery Requirements, its example
    value = (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",'
        ' scope="files:read"'
    )
    assert bearer_challenge(value) == BearerChallenge(
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",
        scope="files:read",
    )


def test_insufficient_scope_challenge() -> None:
    value = (
        'Bearer error="insufficient_scope", scope="files:read files:write user:profile", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="Additional file write permission required"'
    )
    got = bearer_challenge(value)
    assert got is not None
    assert got.error == "insufficient_scope"
    assert got.scope == "files:read files:write user:profile"
    assert got.error_description == "Additional file write permission required"


def test_several_challenges_in_one_field() -> None:
    value = 'Basic realm="simple", Newauth realm="apps", type=1, title="Login to \\"apps\\""'
    assert parse_www_authenticate(value) == [
        Challenge("basic", params={"realm": "simple"}),
        Challenge("newauth", params={"realm": "apps", "type": "1", "title": 'Login to "apps"'}),
    ]


def test_several_fields_are_one_list() -> None:
    got = parse_www_authenticate(['Basic realm="a"', 'Bearer scope="x y"'])
    assert [c.scheme for c in got] == ["basic", "bearer"]
    assert bearer_challenge(['Basic realm="a"', 'Bearer scope="x y"']) == BearerChallenge(
        scope="x y"
    )


def test_scheme_and_names_are_case_insensitive() -> None:
    got = bearer_challenge('BEARER Resource_Metadata="https://a.example/x", SCOPE=Read')
    assert got == BearerChallenge(resource_metadata="https://a.example/x", scope="Read")


def test_token68_then_another_challenge() -> None:
    assert parse_www_authenticate("Negotiate abc+/de==, Bearer realm=x") == [
        Challenge("negotiate", token68="abc+/de=="),
        Challenge("bearer", params={"realm": "x"}),
    ]


def test_bare_schemes_and_empty_elements() -> None:
    assert parse_www_authenticate(" , Bearer,, Basic ,") == [
        Challenge("bearer"),
        Challenge("basic"),
    ]


def test_bws_around_equals_and_escapes() -> None:
    got = parse_www_authenticate('Bearer realm = "a\\\\b\\c" , error =invalid_token')
    assert got == [Challenge("bearer", params={"realm": "a\\bc", "error": "invalid_token"})]


def test_comma_inside_quoted_string_is_not_a_separator() -> None:
    got = bearer_challenge('Bearer error_description="one, two", scope="a"')
    assert got == BearerChallenge(error_description="one, two", scope="a")


def test_no_bearer_challenge() -> None:
    assert bearer_challenge('Basic realm="x"') is None
    assert bearer_challenge("") is None


@pytest.mark.parametrize(
    "value",
    [
        'Bearer realm="open',  # unterminated quoted-string
        'Bearer realm="a\x01b"',  # control character in a quoted-string
        'Bearer realm="a", realm="b"',  # a parameter twice (RFC 9110 11.2: MUST only occur once)
        'Bearer scope="a", SCOPE="b"',  # the same name in another case
        "Bearer realm=, scope=x",  # a parameter without a value ("realm=" then is no token68)
        "Bearer =x",
        '"Bearer"',
        "Bearer realm=a b",
        "Bearer\trealm=a",  # the scheme's separator is SP (1*SP)
        'Bearer realm="a\\',  # quoted-pair at the end
    ],
)
def test_refused(value: str) -> None:
    with pytest.raises(ChallengeError) as info:
        parse_www_authenticate(value)
    assert info.value.step == "challenge"


def test_bounded() -> None:
    with pytest.raises(ChallengeError, match="over"):
        parse_www_authenticate("Bearer realm=" + "a" * 20000)


def test_name_equals_alone_is_a_token68() -> None:
    # "realm=" is no auth-param (a value is 1*tchar or a quoted-string) but is a token68
    assert parse_www_authenticate("Bearer realm=") == [Challenge("bearer", token68="realm=")]
