"""Sealing ``requestState`` (2026-07-28): authenticated, expiring, bound to the request.

A server that answers ``input_required`` may hand the client an opaque ``requestState``
and gets it back, byte for byte, on the retry. The specification says the server must
treat what comes back as attacker-controlled. :class:`RequestStateSeal` makes that safe
with the standard library only:

- **authenticated**: HMAC-SHA256 over the payload, checked in constant time; keys can be
  rotated (seal with the first key, open with any);
- **expiring**: the payload carries an expiry; the caller passes ``now`` (the core never
  reads the clock);
- **bound**: to the method, to a hash of the request's params (without ``_meta``,
  ``inputResponses`` and ``requestState``), and optionally to a principal (a user or
  session id), so a state cannot be replayed on another tool, other arguments or another
  user.

It is *not* encrypted: the client can read what you put in it. Keep secrets server-side
and put only a handle in the state.

Whatever :meth:`RequestStateSeal.seal` returns, :meth:`RequestStateSeal.open` accepts (with
the same method, params and principal, before the expiry), and nothing else: a state is
only good as the exact string that was issued. The bounds are in the class's docstring.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from ._errors import ValidationError

__all__ = ["RequestStateSeal"]

_PATH: Final = "/params/requestState"
_UNBOUND_KEYS: Final = frozenset({"_meta", "inputResponses", "requestState"})
#: The default bound on a sealed state, in characters (one byte each): half of the default
#: ``max_message_size`` (4 MiB), leaving the other half of the retry for its answers.
MAX_SEALED_LENGTH: Final = 2 * 1024 * 1024
#: How deeply the sealed data and the params may nest, in objects and arrays (``{}`` is 1
#: deep, ``{"a": []}`` 2, a number or string 0). orjson writes 254 levels; the state wraps
#: the data in one object and the binding wraps the params in one array.
MAX_SEALED_DEPTH: Final = 253
_MAC_CHARS: Final = 43  # a SHA-256 tag in unpadded base64


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Decode unpadded URL-safe base64, only in the one form :func:`_b64` writes: padding,
    characters outside the alphabet and nonzero spare bits raise :class:`ValueError`."""
    if not text.isascii():
        raise ValueError("not base64")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not the canonical encoding")
    return data


def _binding(method: str, params: Mapping[str, Any] | None) -> str:
    """The hash binding a state to its request; :class:`TypeError` (orjson's
    ``JSONEncodeError``) for params nested deeper than ``MAX_SEALED_DEPTH``, or not JSON."""
    bound = {k: v for k, v in (params or {}).items() if k not in _UNBOUND_KEYS}
    canonical = orjson.dumps([method, bound], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


class RequestStateSeal:
    """Seals and opens ``requestState`` values.

    :param keys: one or more secret keys of at least 32 bytes; the first seals, any opens.
    :param ttl: how long a sealed state stays valid, in seconds (default 10 minutes), on the
        clock whose ``now`` you pass to both :meth:`seal` and :meth:`open`.
    :param max_length: the longest sealed state, in characters (default
        ``MAX_SEALED_LENGTH``, 2 MiB). :meth:`seal` refuses to make a longer one and
        :meth:`open` refuses a longer string before decoding it. The state is the data's
        JSON in base64 (4 characters for 3 bytes) plus about 190 characters, so the default
        holds data of about 1.5 MB.

    Bounds: the data and the params may nest at most ``MAX_SEALED_DEPTH`` (253) levels
    of objects and arrays; the state is at most ``max_length`` characters. Past either,
    :meth:`seal` raises :class:`ValidationError` (path ``/params/inputResponses`` for the
    data, ``/params`` for the params), which a server answers with -32602 (invalid params):
    the request's answers or arguments are too large or too deep to carry into another
    round. :meth:`open` raises only :class:`ValidationError` (path ``/params/requestState``).
    """

    __slots__ = ("_keys", "_ttl", "max_length")

    def __init__(
        self,
        keys: bytes | Sequence[bytes],
        *,
        ttl: float = 600.0,
        max_length: int = MAX_SEALED_LENGTH,
    ) -> None:
        key_list = [keys] if isinstance(keys, bytes) else list(keys)
        if not key_list:
            raise ValueError("at least one key is needed")
        for key in key_list:
            if not isinstance(key, bytes) or len(key) < 32:
                raise ValueError("each key must be bytes, at least 32 of them")
        if not ttl > 0:
            raise ValueError("ttl must be positive")
        if not max_length > 0:
            raise ValueError("max_length must be positive")
        self._keys = key_list
        self._ttl = float(ttl)
        self.max_length = max_length
        """The longest sealed state, in characters."""

    def seal(
        self,
        data: Any,
        *,
        method: str,
        params: Mapping[str, Any] | None,
        now: float,
        principal: str | None = None,
    ) -> str:
        """Seal ``data`` (any JSON value) for a retry of ``method`` with ``params``.

        ``now`` is the current time in seconds on the clock :meth:`open` is given (e.g.
        ``time.time()`` for states that several processes open).

        Raises :class:`ValidationError` when the state cannot be sealed so that :meth:`open`
        accepts it: ``params`` (path ``/params``) or ``data`` (path
        ``/params/inputResponses``) nested deeper than ``MAX_SEALED_DEPTH`` or not
        JSON, or a state longer than ``max_length``. Answer it with -32602.
        """
        try:
            binding = _binding(method, params)
        except orjson.JSONEncodeError as exc:
            raise ValidationError(
                f"the params cannot be sealed into a request state ({exc}; at most"
                f" {MAX_SEALED_DEPTH} levels of nesting)",
                "/params",
            ) from None
        try:
            payload = orjson.dumps(
                {"v": 1, "m": method, "b": binding, "p": principal, "e": now + self._ttl, "d": data}
            )
        except orjson.JSONEncodeError as exc:
            raise ValidationError(
                f"the answers cannot be sealed into a request state ({exc}; at most"
                f" {MAX_SEALED_DEPTH} levels of nesting)",
                "/params/inputResponses",
            ) from None
        length = (len(payload) * 4 + 2) // 3 + 1 + _MAC_CHARS
        if length > self.max_length:
            raise ValidationError(
                f"the answers are too large to carry into another round: the request state"
                f" would be {length} characters, more than {self.max_length}",
                "/params/inputResponses",
            )
        mac = hmac.new(self._keys[0], payload, hashlib.sha256).digest()
        return f"{_b64(payload)}.{_b64(mac)}"

    def open(
        self,
        sealed: object,
        *,
        method: str,
        params: Mapping[str, Any] | None,
        now: float,
        principal: str | None = None,
    ) -> Any:
        """Check a ``requestState`` that came back and return the data sealed in it.

        Raises :class:`ValidationError` (path ``/params/requestState``), and nothing else,
        when the value is not exactly a string :meth:`seal` returned (with one of the
        keys), has expired (its expiry is before ``now``), or belongs to another method,
        other params or another principal. Answer that with -32602 (invalid params).
        """
        if not isinstance(sealed, str) or len(sealed) > self.max_length:
            raise ValidationError("not a sealed request state", _PATH)
        body, dot, tag = sealed.partition(".")
        if not dot or len(tag) != _MAC_CHARS or not tag.isascii():
            raise ValidationError("not a sealed request state", _PATH)
        try:
            payload = _unb64(body)
        except (binascii.Error, ValueError):
            raise ValidationError("not a sealed request state", _PATH) from None
        if not any(
            hmac.compare_digest(tag, _b64(hmac.new(key, payload, hashlib.sha256).digest()))
            for key in self._keys
        ):
            raise ValidationError("request state failed authentication", _PATH)
        content = orjson.loads(payload)
        if content.get("v") != 1:
            raise ValidationError("unknown request state version", _PATH)
        if content["e"] < now:
            raise ValidationError("request state has expired", _PATH)
        try:
            binding = _binding(method, params)
        except orjson.JSONEncodeError:  # params no state can be sealed for
            binding = None
        if content["m"] != method or content["b"] != binding:
            raise ValidationError("request state belongs to another request", _PATH)
        if content["p"] != principal:
            raise ValidationError("request state belongs to another principal", _PATH)
        return content["d"]
