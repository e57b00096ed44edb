"""``WWW-Authenticate``: the challenge grammar of RFC 9110 section 11.6.1, and the Bearer
challenge's parameters (RFC 6750 section 3, RFC 9728 section 5.1).

The grammar (RFC 9110 sections 11.2, 11.3, 11.6.1, 5.6)::

    WWW-Authenticate = #challenge
    challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    auth-param  = token BWS "=" BWS ( token / quoted-string )
    token68     = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="

Several challenges may share one field and several fields may each hold some; a comma
separates both challenges and the parameters of one, so a parameter ends a challenge only
where what follows a comma is not ``name=``. Scheme and parameter names are
case-insensitive (RFC 9110 section 11.1: "It uses a case-insensitive token";
section 11.2: "Parameter names are matched case-insensitively"); values are kept as given,
a quoted-string's quoted-pairs (``\\"``) undone (section 5.6.4). "Each parameter name
**MUST** only occur once per challenge" (section 11.2): a repeated one is refused. Empty
list elements (``, ,``) are skipped (section 5.6.1: a recipient "**MUST** parse and
ignore a reasonable number of empty list elements").

MCP 2025-06-18 and later: "MCP clients **MUST** be able to parse ``WWW-Authenticate``
headers and respond appropriately to ``HTTP 401 Unauthorized`` responses".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ._errors import ChallengeError, detail

__all__ = ["BearerChallenge", "Challenge", "bearer_challenge", "parse_www_authenticate"]

#: tchar of RFC 9110 section 5.6.2.
_TCHAR: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
#: The characters of token68 before its trailing "=" (RFC 9110 section 11.2).
_T68: Final = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_OWS: Final = " \t"
#: The most characters read from the header fields together: a bound on hostile input.
MAX_FIELD: Final = 16384


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme (lower-cased), and either a token68 or parameters (names
    lower-cased, values as given)."""

    scheme: str
    """The auth-scheme, lower-cased (``"bearer"``)."""
    token68: str | None = None
    """The token68, if the challenge carries one instead of parameters."""
    params: Mapping[str, str] = field(default_factory=dict)
    """The auth-params, by lower-cased name."""


@dataclass(frozen=True)
class BearerChallenge:
    """The parameters of a ``Bearer`` challenge that the flow reads."""

    resource_metadata: str | None = None
    """The protected resource metadata URL (RFC 9728 section 5.1)."""
    scope: str | None = None
    """The scopes the resource asks for, space-delimited (RFC 6750 section 3)."""
    error: str | None = None
    """``invalid_request``, ``invalid_token``, ``insufficient_scope`` (RFC 6750 3.1)."""
    error_description: str | None = None
    """The human-readable text beside ``error``."""
    realm: str | None = None
    """The protection space (RFC 9110 section 11.5)."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_ows(self) -> None:
        while self.peek() and self.peek() in _OWS:
            self.pos += 1

    def token(self) -> str:
        start = self.pos
        while self.peek() and self.peek() in _TCHAR:
            self.pos += 1
        return self.text[start : self.pos]

    def fail(self, why: str) -> ChallengeError:
        return ChallengeError(f"{why} at character {self.pos} of {detail(self.text)!r}")

    def quoted(self) -> str:
        # at the opening DQUOTE; RFC 9110 section 5.6.4
        self.pos += 1
        out: list[str] = []
        while True:
            c = self.peek()
            if not c:
                raise self.fail("unterminated quoted-string")
            self.pos += 1
            if c == '"':
                return "".join(out)
            if c == "\\":
                q = self.peek()
                if not q or not _quotable(q):
                    raise self.fail("invalid quoted-pair")
                self.pos += 1
                out.append(q)
            elif c == "\t" or c == " " or c == "!" or ("#" <= c <= "[") or ("]" <= c <= "~"):
                out.append(c)
            elif ord(c) >= 0x80:
                out.append(c)  # obs-text
            else:
                raise self.fail("invalid character in quoted-string")

    def try_param(self) -> tuple[str, str] | None:
        """An auth-param at the position, or None (the position unchanged)."""
        start = self.pos
        name = self.token()
        if name:
            self.skip_ows()
            if self.peek() == "=":
                self.pos += 1
                self.skip_ows()
                if self.peek() == '"':
                    return name.lower(), self.quoted()
                value = self.token()
                if value:
                    return name.lower(), value
        self.pos = start
        return None

    def try_token68(self) -> str | None:
        start = self.pos
        while self.peek() and self.peek() in _T68:
            self.pos += 1
        if self.pos == start:
            return None
        while self.peek() == "=":
            self.pos += 1
        end = self.pos
        self.skip_ows()
        if self.at_end() or self.peek() == ",":
            return self.text[start:end]
        self.pos = start
        return None

    def skip_commas(self) -> None:
        self.skip_ows()
        while self.peek() == ",":
            self.pos += 1
            self.skip_ows()


def _quotable(c: str) -> bool:
    return c in "\t " or "!" <= c <= "~" or ord(c) >= 0x80


def parse_www_authenticate(values: str | Iterable[str]) -> list[Challenge]:
    """Every challenge of the ``WWW-Authenticate`` field value(s), in order.

    ``values`` is one field value or the values of every ``WWW-Authenticate`` field of the
    response (several fields are one list, RFC 9110 section 5.3). Raises
    :class:`~mcp_sansio.auth.ChallengeError` where the grammar is broken.
    """
    parts = [values] if isinstance(values, str) else list(values)
    text = ", ".join(parts)
    if len(text) > MAX_FIELD:
        raise ChallengeError(f"the WWW-Authenticate fields are over {MAX_FIELD} characters")
    r = _Reader(text)
    out: list[Challenge] = []
    r.skip_commas()
    while not r.at_end():
        scheme = r.token()
        if not scheme:
            raise r.fail("expected an auth-scheme")
        if r.at_end() or r.peek() in _OWS or r.peek() == ",":
            pass
        else:
            raise r.fail("invalid character after the auth-scheme")
        spaced = r.peek() == " "
        r.skip_ows()
        if r.at_end() or r.peek() == ",":
            out.append(Challenge(scheme.lower()))
            r.skip_commas()
            continue
        if not spaced:
            raise r.fail("the auth-scheme must be followed by a space")
        first = r.try_param()
        if first is None:
            token68 = r.try_token68()
            if token68 is None:
                raise r.fail("expected a token68 or an auth-param")
            out.append(Challenge(scheme.lower(), token68=token68))
            r.skip_commas()
            continue
        params = {first[0]: first[1]}
        while True:
            r.skip_ows()
            if r.at_end():
                break
            if r.peek() != ",":
                raise r.fail("expected a comma")
            r.skip_commas()
            param = r.try_param()
            if param is None:
                break  # the next challenge starts here (or the end)
            if param[0] in params:
                raise r.fail(f"parameter {param[0]!r} repeated in one challenge")
            params[param[0]] = param[1]
        out.append(Challenge(scheme.lower(), params=params))
    return out


def bearer_challenge(
    values: str | Iterable[str], schemes: Sequence[str] = ("bearer",)
) -> BearerChallenge | None:
    """The first ``Bearer`` challenge of the field value(s), or None if there is none.

    ``schemes`` are the schemes taken, lower-case, the first one found winning (a DPoP
    client takes ``("bearer", "dpop")``: RFC 9449 section 7.1 gives the ``DPoP`` challenge
    the same parameters). Raises :class:`~mcp_sansio.auth.ChallengeError` where the
    grammar is broken."""
    challenges = parse_www_authenticate(values)
    for scheme in schemes:
        for challenge in challenges:
            if challenge.scheme == scheme:
                p = challenge.params
                return BearerChallenge(
                    resource_metadata=p.get("resource_metadata"),
                    scope=p.get("scope"),
                    error=p.get("error"),
                    error_description=p.get("error_description"),
                    realm=p.get("realm"),
                )
    return None
