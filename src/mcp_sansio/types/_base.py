"""Runtime helpers shared by the generated modules ``mcp_sansio.types.v*``.

The generated structuring functions are straight-line code: they check each field
inline and call into this module only to *build an error* (the failure path) or for
the rare, data-driven cases (unknown extra keys, trying union members in order). The
success path therefore pays for no path strings and no extra calls.

Error paths are JSON pointers (RFC 6901 escaping: ``~`` -> ``~0``, ``/`` -> ``~1``),
relative to the value given to the outermost ``structure`` call, or prefixed by the
``path`` it was given.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from mcp_sansio._errors import ValidationError
from mcp_sansio._sentinels import OMITTED

__all__ = ["MethodSpec"]

Direction = Literal["client_to_server", "server_to_client", "both"]
"""Who may send a method: the client, the server, or either side."""

Kind = Literal["request", "notification"]
"""Whether a method is a request (expects a response) or a notification."""

Structurer = Callable[[Any, str], Any]
"""A generated ``_structure_<Name>(data, path)`` function."""


@attrs.frozen(kw_only=True)
class MethodSpec:
    """One row of a version module's ``METHODS`` table, derived from the schema.

    ``params`` is the class (or union alias) that ``params`` structures into, ``None`` if
    the schema gives the method no ``params``; ``params_required`` says whether the
    schema requires ``params`` on the wire. ``result`` is the result class or union
    alias of a request, ``None`` for a notification.
    """

    method: str
    """The JSON-RPC method name, e.g. ``"tools/call"``."""
    direction: Direction
    """``"client_to_server"``, ``"server_to_client"`` or ``"both"``."""
    kind: Kind
    """``"request"`` or ``"notification"``."""
    params: type | types.UnionType | None
    """The params class (or union alias), or ``None`` when the schema defines none."""
    result: type | types.UnionType | None
    """The result class or union alias; ``None`` for notifications."""
    params_required: bool = False
    """Whether ``params`` must be present on the wire."""


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "<missing>"  # pragma: no cover - never shown: the generated code reports keys


#: Marks a required key that is absent (distinct from OMITTED, which is a legal value).
_MISSING: Final = _Missing.MISSING


def _is_int(x: object) -> bool:
    """JSON ``integer``: an int that is not a bool."""
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: object) -> bool:
    """JSON ``number``: an int or float that is not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _json_type(x: object) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):
        return "integer"
    if isinstance(x, float):
        return "number"
    if isinstance(x, str):
        return "string"
    if isinstance(x, list):
        return "array"
    if isinstance(x, dict):
        return "object"
    return f"non-JSON value of type {type(x).__name__}"


def _describe(x: object) -> str:
    kind = _json_type(x)
    if isinstance(x, (bool, int, float, str)):
        try:
            text = repr(x)
        except Exception:  # pragma: no cover - repr of a str/int subclass that fails
            text = "?"
        if len(text) > 40:
            text = text[:37] + "..."
        return f"{kind} {text}"
    return kind


def _type_error(expected: str, value: object, path: str) -> ValidationError:
    return ValidationError(f"expected {expected}, got {_describe(value)}", path)


def _missing(key: str, path: str) -> ValidationError:
    return ValidationError(f"missing required property {key!r}", f"{path}/{_escape(key)}")


def _at(e: ValidationError, prefix: str) -> ValidationError:
    """Re-anchor an error raised by a nested structurer (called with path ``""``)."""
    return ValidationError(e.reason, prefix + e.path)


def _item_error(items: list[Any], fn: Structurer, prefix: str) -> ValidationError:
    """Locate the first item of ``items`` that ``fn`` rejects (failure path only)."""
    for i, item in enumerate(items):
        try:
            fn(item, "")
        except ValidationError as e:
            return ValidationError(e.reason, f"{prefix}/{i}{e.path}")
    return ValidationError("invalid item", prefix)  # pragma: no cover - fn is pure


def _entry_error(mapping: Mapping[Any, Any], fn: Structurer, prefix: str) -> ValidationError:
    """Locate the first entry of ``mapping`` that ``fn`` rejects (failure path only)."""
    for key, value in mapping.items():
        if not isinstance(key, str):
            return _key_error(key, prefix)
        try:
            fn(value, "")
        except ValidationError as e:
            return ValidationError(e.reason, f"{prefix}/{_escape(key)}{e.path}")
    return ValidationError("invalid entry", prefix)  # pragma: no cover - fn is pure


def _bad_item(
    items: list[Any], ok: Callable[[Any], bool], expected: str, prefix: str
) -> ValidationError:
    for i, item in enumerate(items):
        if not ok(item):
            return _type_error(expected, item, f"{prefix}/{i}")
    return ValidationError("invalid item", prefix)  # pragma: no cover - ok is pure


def _bad_entry(
    mapping: Mapping[Any, Any], ok: Callable[[Any], bool], expected: str, prefix: str
) -> ValidationError:
    for key, value in mapping.items():
        if not isinstance(key, str):
            return _key_error(key, prefix)
        if not ok(value):
            return _type_error(expected, value, f"{prefix}/{_escape(key)}")
    return ValidationError("invalid entry", prefix)  # pragma: no cover - ok is pure


def _key_error(key: object, path: str) -> ValidationError:
    return ValidationError(f"object keys must be strings, got {_describe(key)}", path)


def _check_keys(d: Iterable[Any], path: str) -> None:
    """Raise unless every key of ``d`` is a str (the keys of decoded JSON always are)."""
    for key in d:
        if not isinstance(key, str):
            raise _key_error(key, path)


def _extra(d: dict[Any, Any], known: frozenset[str], path: str) -> dict[str, Any]:
    """The entries of ``d`` whose keys the schema does not name."""
    extra: dict[str, Any] = {}
    for key, value in d.items():
        if key not in known:
            if not isinstance(key, str):
                raise _key_error(key, path)
            extra[key] = value
    return extra


def _retry(d: Any, path: str, err: ValidationError, fns: tuple[Structurer, ...]) -> Any:
    """The preferred union member failed: try the others in order, else re-raise ``err``."""
    for fn in fns:
        try:
            return fn(d, path)
        except ValidationError:
            pass
    raise err


def _first_of(d: Any, path: str, fns: tuple[Structurer, ...]) -> Any:
    """Try union members in order; raise the first member's error if none matches."""
    first: ValidationError | None = None
    for fn in fns:
        try:
            return fn(d, path)
        except ValidationError as e:
            if first is None:
                first = e
    assert first is not None
    raise first


def _tag_error(value: object, key: str, expected: tuple[object, ...], path: str) -> ValidationError:
    if value is _MISSING:
        return _missing(key, path)
    choices = ", ".join(repr(v) for v in expected)
    return _type_error(f"one of {choices}", value, f"{path}/{_escape(key)}")


def _no_member(expected: str, value: object, path: str) -> ValidationError:
    return ValidationError(f"matches no member of {expected} (got {_describe(value)})", path)


def _unstructure_value(x: Any, table: Mapping[type, Callable[[Any], dict[str, Any]]]) -> Any:
    """Unstructure a value of a union type: generated instances, lists, dicts, JSON leaves."""
    fn = table.get(x.__class__)
    if fn is not None:
        return fn(x)
    if isinstance(x, list):
        return [_unstructure_value(i, table) for i in x]
    if isinstance(x, dict):
        return {k: _unstructure_value(v, table) for k, v in x.items()}
    return x


def _repr(obj: object, names: tuple[str, ...]) -> str:
    """``Name(field=value, ...)``, leaving out fields that are OMITTED and an empty extra."""
    parts = []
    for name in names:
        value = getattr(obj, name)
        if value is OMITTED or (name == "extra" and not value):
            continue
        parts.append(f"{name}={value!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def _invalid(value: Any, fn: Structurer, path: str) -> ValidationError:
    """The fast in-place check of ``value`` failed: run the precise checker for the error."""
    try:
        fn(value, "")
    except ValidationError as e:
        return _at(e, path)
    return ValidationError("invalid value", path)  # pragma: no cover - checks agree


def _twin(cls: type) -> Any:
    """A plain class with the same ``__slots__`` as the frozen attrs class ``cls``.

    Instances of the twin accept ordinary attribute stores; once filled, their
    ``__class__`` is switched to ``cls`` (the slot layouts are identical).
    """
    return type(f"_Mutable{cls.__name__}", (), {"__slots__": cls.__dict__["__slots__"]})


def _as_dict(d: Any, path: str) -> dict[Any, Any]:
    """A plain dict for a dict subclass (so that lookups have no side effects)."""
    if isinstance(d, dict):
        return dict(d)
    raise _type_error("object", d, path)
