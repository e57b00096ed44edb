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
#: The longest sealed state accepted by :meth:`RequestStateSeal.open`, in characters.
MAX_SEALED_LENGTH: Final = 65536


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _binding(method: str, params: Mapping[str, Any] | None) -> str:
    bound = {k: v for k, v in (params or {}).items() if k not in _UNBOUND_KEYS}
    canonical = orjson.dumps([method, bound], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


class RequestStateSeal:
    """Seals and opens ``requestState`` values.

    :param keys: one or more secret keys of at least 32 bytes; the first seals, any opens.
    :param ttl: how long a sealed state stays valid, in seconds (default 10 minutes).
    """

    __slots__ = ("_keys", "_ttl")

    def __init__(self, keys: bytes | Sequence[bytes], *, ttl: float = 600.0) -> None:
        key_list = [keys] if isinstance(keys, bytes) else list(keys)
        if not key_list:
            raise ValueError("at least one key is needed")
        for key in key_list:
            if not isinstance(key, bytes) or len(key) < 32:
                raise ValueError("each key must be bytes, at least 32 of them")
        if not ttl > 0:
            raise ValueError("ttl must be positive")
        self._keys = key_list
        self._ttl = float(ttl)

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

        ``now`` is the current time in seconds (e.g. ``time.time()``).
        """
        payload = orjson.dumps(
            {
                "v": 1,
                "m": method,
                "b": _binding(method, params),
                "p": principal,
                "e": now + self._ttl,
                "d": data,
            }
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

        Raises :class:`ValidationError` (path ``/params/requestState``) when the value is
        not a sealed state, was tampered with, has expired, or belongs to another method,
        other params or another principal. Answer that with -32602 (invalid params).
        """
        if not isinstance(sealed, str) or len(sealed) > MAX_SEALED_LENGTH:
            raise ValidationError("not a sealed request state", _PATH)
        body, dot, tag = sealed.partition(".")
        try:
            payload = _unb64(body)
            mac = _unb64(tag)
        except (binascii.Error, ValueError):
            raise ValidationError("not a sealed request state", _PATH) from None
        if not dot or not any(
            hmac.compare_digest(mac, hmac.new(key, payload, hashlib.sha256).digest())
            for key in self._keys
        ):
            raise ValidationError("request state failed authentication", _PATH)
        content = orjson.loads(payload)
        if content.get("v") != 1:
            raise ValidationError("unknown request state version", _PATH)
        if content["e"] < now:
            raise ValidationError("request state has expired", _PATH)
        if content["m"] != method or content["b"] != _binding(method, params):
            raise ValidationError("request state belongs to another request", _PATH)
        if content["p"] != principal:
            raise ValidationError("request state belongs to another principal", _PATH)
        return content["d"]
