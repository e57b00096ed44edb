"""Hypothesis strategies for MCP JSON values, walked from the official schema files.

:func:`from_schema` generates JSON values valid against one definition of one
version's schema; :func:`messages` generates whole JSON-RPC messages of a version;
:func:`params` and :func:`results` the params and results of one method. The
walker covers the part of JSON Schema the MCP files use: ``type`` (also as a list),
``properties``, ``required``, ``additionalProperties``, ``const``, ``enum``, ``anyOf`` /
``oneOf``, ``allOf``, ``$ref``, ``items``, ``minimum`` / ``maximum`` and ``maxItems``;
``format`` values (``uri``, ``byte``, ...) are generated as plain strings, which JSON
Schema does not reject by default.

Objects that admit unknown keys get some (``x-...`` keys, which no MCP schema names),
so that round trips exercise ``extra``. Where the protocol is stricter than the schema,
the walker follows the protocol, and says so here:

- 2026-07-28 ``InputRequiredResult.resultType`` is always ``"input_required"`` (the
  schema types it as a string; the protocol, and union resolution in
  :mod:`mcp_sansio.types`, select ``InputRequiredResult`` by that value).

The schema files are read from ``$MCP_SANSIO_SCHEMA_DIR`` when set, else from the copies
shipped in this package (``mcp_sansio/testing/schema``; the type generator reads them too).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from mcp_sansio._sentinels import OMITTED

__all__ = [
    "EXTRA_KEYS",
    "definition_names",
    "from_schema",
    "json_values",
    "load_schema",
    "messages",
    "params",
    "results",
    "schema_dir",
]

#: Keys added to objects that admit unknown keys. No MCP schema names a property so.
EXTRA_KEYS: tuple[str, ...] = ("x-extra", "x-vendor/data", "x-n")

#: (version, definition, property) -> strategy, where the protocol is stricter than
#: the schema (see the module docstring).
_PROPERTY_OVERRIDES: dict[tuple[str, str, str], st.SearchStrategy[Any]] = {
    ("2026-07-28", "InputRequiredResult", "resultType"): st.just("input_required"),
}

_MAX_INT = 2**53
_STRING = st.text(max_size=12)
_URIS = st.sampled_from(
    ["https://example.com/a", "file:///tmp/x.txt", "mcp://server/r?q=1", "urn:x:y"]
)
_BYTES = st.sampled_from(["", "aGk=", "AAECAw==", "bWNwLXNhbnNpbw=="])


def schema_dir() -> Path:
    """Where the ``<version>.json`` schema files are read from."""
    env = os.environ.get("MCP_SANSIO_SCHEMA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "schema"


@functools.cache
def load_schema(version: str) -> dict[str, Any]:
    """The parsed schema file of ``version``.

    :raises FileNotFoundError: no schema file for ``version`` in :func:`schema_dir`.
    """
    path = schema_dir() / f"{version}.json"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _definitions(version: str) -> dict[str, Any]:
    schema = load_schema(version)
    defs: dict[str, Any] = schema.get("definitions") or schema["$defs"]
    return defs


def definition_names(version: str) -> list[str]:
    """The names of the definitions of ``version``'s schema, sorted."""
    return sorted(_definitions(version))


_LEAVES: st.SearchStrategy[Any] = (
    st.none()
    | st.booleans()
    | st.integers(-_MAX_INT, _MAX_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _STRING
)
_NESTED: st.SearchStrategy[Any] = (
    _LEAVES | st.lists(_LEAVES, max_size=3) | st.dictionaries(_STRING, _LEAVES, max_size=3)
)
_JSON: st.SearchStrategy[Any] = (
    _LEAVES | st.lists(_NESTED, max_size=3) | st.dictionaries(_STRING, _NESTED, max_size=3)
)
_EXTRAS: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
    st.sampled_from(EXTRA_KEYS), _NESTED, max_size=2
)


def json_values() -> st.SearchStrategy[Any]:
    """Arbitrary JSON values, nested up to three levels (no NaN or infinities;
    integers within +-2**53). Cheaper to draw than a ``st.recursive`` strategy."""
    return _JSON


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "properties":
            props = dict(out.get("properties", {}))
            for name, sub in value.items():
                props[name] = _merge(props[name], sub) if name in props else sub
            out["properties"] = props
        elif key == "required":
            out["required"] = sorted(set(out.get("required", [])) | set(value))
        elif key != "description" or key not in out:
            out[key] = value
    return out


class _Walker:
    def __init__(self, version: str, extras: bool, fill: bool) -> None:
        self.version = version
        self.defs = _definitions(version)
        self.extras = extras
        self.fill = fill
        self.cache: dict[str, st.SearchStrategy[Any]] = {}

    def definition(self, name: str) -> st.SearchStrategy[Any]:
        strategy = self.cache.get(name)
        if strategy is None:
            # deferred: definitions may refer to themselves (JSONValue).
            strategy = st.deferred(lambda: self.schema(self.defs[name], name))
            self.cache[name] = strategy
        return strategy

    def resolve_all_of(self, schema: dict[str, Any]) -> dict[str, Any]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if "$ref" in part:
                part = self.defs[part["$ref"].rsplit("/", 1)[-1]]
            if "allOf" in part:
                part = self.resolve_all_of(part)
            merged = _merge(merged, part)
        return merged

    def schema(self, schema: Any, owner: str | None) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return json_values()
        if "$ref" in schema:
            return self.definition(schema["$ref"].rsplit("/", 1)[-1])
        if "allOf" in schema:
            schema = self.resolve_all_of(schema)
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            return st.one_of([self.schema(option, None) for option in options])
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.schema({**schema, "type": k}, owner) for k in kind])
        if kind == "object":
            return self.object(schema, owner)
        if kind == "array":
            items = self.schema(schema.get("items", True), None)
            if self.fill:
                return st.lists(items, min_size=1, max_size=1)
            return st.lists(items, max_size=min(schema.get("maxItems", 3), 3))
        if kind == "string":
            fmt = schema.get("format")
            return _URIS if fmt == "uri" else _BYTES if fmt == "byte" else _STRING
        if kind == "integer":
            lo = schema.get("minimum", -_MAX_INT)
            hi = schema.get("maximum", _MAX_INT)
            return st.integers(int(lo), int(hi))
        if kind == "number":
            lo, hi = schema.get("minimum"), schema.get("maximum")
            ints = st.integers(
                -_MAX_INT if lo is None else int(lo), _MAX_INT if hi is None else int(hi)
            )
            floats = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
            return ints | floats
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return json_values()

    def object(self, schema: dict[str, Any], owner: str | None) -> st.SearchStrategy[Any]:
        props: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required", ()))
        ap = schema.get("additionalProperties", True)
        if not props:
            if ap is True or ap == {}:
                return st.dictionaries(_STRING, _NESTED, max_size=3)
            return st.dictionaries(_STRING, self.schema(ap, None), max_size=3)

        def prop(name: str) -> st.SearchStrategy[Any]:
            override = _PROPERTY_OVERRIDES.get((self.version, owner or "", name))
            return override if override is not None else self.schema(props[name], None)

        if self.fill:
            base = st.fixed_dictionaries({name: prop(name) for name in sorted(props)})
        else:
            base = st.fixed_dictionaries(
                {name: prop(name) for name in sorted(props) if name in required},
                optional={name: prop(name) for name in sorted(props) if name not in required},
            )
        if not self.extras or ap is False:
            return base
        return st.tuples(base, _EXTRAS).map(_combine)


def _combine(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    value, extra = parts
    return {**extra, **value}


@functools.cache
def _walker(version: str, extras: bool, fill: bool) -> _Walker:
    return _Walker(version, extras, fill)


def from_schema(
    version: str, name: str, *, extras: bool = True, fill: bool = False
) -> st.SearchStrategy[Any]:
    """JSON values valid against definition ``name`` of ``version``'s schema.

    With ``extras`` (the default), objects that admit unknown keys sometimes get some.
    With ``fill``, every object has all its properties and every array one item (to
    reach every field of nested types).

    :raises KeyError: the schema has no definition ``name``.
    """
    walker = _walker(version, extras, fill)
    if name not in walker.defs:
        raise KeyError(f"{version} schema has no definition {name!r}")
    return walker.definition(name)


def _members(version: str, union: str) -> list[str]:
    """The definitions a request/notification union refers to (itself if an object)."""
    schema = _definitions(version).get(union)
    if schema is None:
        return []
    if "anyOf" not in schema:
        return [union]
    return [option["$ref"].rsplit("/", 1)[-1] for option in schema["anyOf"]]


def _result_for(version: str, request: str) -> str:
    """The result definition of a request definition (the generator's rule)."""
    defs = _definitions(version)
    stem = request.removesuffix("Request")
    for candidate in (f"{stem}ResultResponse", f"{stem}Result", "EmptyResult", "Result"):
        if candidate in defs:
            return candidate
    raise KeyError(request)


@functools.cache
def _method_definitions(version: str) -> dict[str, str]:
    """method -> the request or notification definition that carries it."""
    defs = _definitions(version)
    out: dict[str, str] = {}
    for union in ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"):
        for name in _members(version, union):
            out[defs[name]["properties"]["method"]["const"]] = name
    return out


def params(version: str, method: str, *, extras: bool = True) -> st.SearchStrategy[Any]:
    """The ``params`` of ``method`` requests or notifications of ``version``, valid
    against the schema; :data:`~mcp_sansio.OMITTED` where the schema lets them be absent.

    :raises KeyError: ``method`` is not a method of ``version``.
    """
    name = _method_definitions(version)[method]
    return from_schema(version, name, extras=extras).map(_params_of)


def _params_of(message: dict[str, Any]) -> Any:
    return message.get("params", OMITTED)


def results(version: str, method: str, *, extras: bool = True) -> st.SearchStrategy[Any]:
    """Results of ``method`` requests of ``version``, valid against the schema.

    :raises KeyError: ``method`` is not a request of ``version``.
    """
    name = _result_for(version, _method_definitions(version)[method])
    strategy = from_schema(version, name, extras=extras)
    if name.endswith("ResultResponse"):
        return strategy.map(_result_of)
    return strategy


def _result_of(message: dict[str, Any]) -> Any:
    return message["result"]


def messages(version: str, *, extras: bool = True) -> st.SearchStrategy[Any]:
    """Whole JSON-RPC messages of ``version``: typed requests, notifications and
    responses of every method, error responses, and the schema's generic
    ``JSONRPCMessage`` shapes (batches in 2025-03-26)."""
    defs = _definitions(version)
    ids = st.one_of(_STRING, st.integers(-_MAX_INT, _MAX_INT))
    parts: list[st.SearchStrategy[Any]] = [from_schema(version, "JSONRPCMessage", extras=extras)]

    def with_envelope(message_id: bool) -> Callable[[tuple[Any, dict[str, Any]]], Any]:
        def build(args: tuple[Any, dict[str, Any]]) -> Any:
            rid, body = args
            out = {**body, "jsonrpc": "2.0"}
            if message_id:
                out["id"] = rid
            return out

        return build

    requests = [m for u in ("ClientRequest", "ServerRequest") for m in _members(version, u)]
    notes = [m for u in ("ClientNotification", "ServerNotification") for m in _members(version, u)]
    for name in sorted(set(requests)):
        body = from_schema(version, name, extras=extras)
        parts.append(st.tuples(ids, body).map(with_envelope(True)))
        result = _result_for(version, name)
        if result.endswith("ResultResponse"):
            parts.append(from_schema(version, result, extras=extras))
        else:
            response = st.fixed_dictionaries(
                {"jsonrpc": st.just("2.0"), "id": ids, "result": from_schema(version, result)}
            )
            parts.append(response)
    for name in sorted(set(notes)):
        body = from_schema(version, name, extras=extras)
        parts.append(st.tuples(ids, body).map(with_envelope(False)))
    error = "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError"
    parts.append(from_schema(version, error, extras=extras))
    return st.one_of(parts)
