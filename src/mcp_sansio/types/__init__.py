"""Typed MCP messages for every protocol version, and one cattrs converter on orjson.

One module per version, generated from the official schema by ``generator/gen_types.py``:
``v2024_11_05``, ``v2025_03_26``, ``v2025_06_18``, ``v2025_11_25`` and ``v2026_07_28``.
Importing this package imports none of them; each is imported on first use, through
:func:`module_for` or ``from mcp_sansio.types import v2025_11_25``.

Every schema object is a frozen attrs class (snake_case attributes, camelCase on the
wire, ``_meta`` as ``meta``); optional fields that are absent are :data:`OMITTED`, which
is not ``None`` (null). Keys a class does not name are kept in its ``extra`` field and
written back on unstructure, so ``unstructure(structure(x, C)) == x``.

Structuring validates the value fully against the schema and raises only
:class:`ValidationError`, whose ``path`` is a JSON pointer into the value::

    >>> from mcp_sansio.types import loads, dumps, v2025_11_25 as mcp
    >>> params = loads(b'{"name": "add", "arguments": {"a": 1}}', mcp.CallToolRequestParams)
    >>> params.name, params.task
    ('add', OMITTED)
    >>> dumps(mcp.TextContent(text="hi"))
    b'{"text":"hi","type":"text"}'
"""

from __future__ import annotations

import importlib
import sys
import typing
from types import ModuleType, UnionType
from typing import Any, Final, TypeVar, overload

import cattrs.preconf.orjson
import orjson

from mcp_sansio._errors import ValidationError
from mcp_sansio._sentinels import OMITTED, Omitted
from mcp_sansio.types._base import MethodSpec, Structurer

__all__ = [
    "OMITTED",
    "VERSIONS",
    "MethodSpec",
    "Omitted",
    "ValidationError",
    "converter",
    "dumps",
    "loads",
    "module_for",
    "structure",
    "structure_params",
    "structure_result",
    "unstructure",
]

T = TypeVar("T")

VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
"""The protocol versions with a generated module, oldest first."""

_MODULES: Final = {version: "v" + version.replace("-", "_") for version in VERSIONS}
_GENERATED: Final = frozenset(f"{__name__}.{name}" for name in _MODULES.values())


def module_for(version: str) -> ModuleType:
    """The generated module of ``version`` (imported on first use).

    :raises ValueError: ``version`` is not one of :data:`VERSIONS`.
    """
    name = _MODULES.get(version) if isinstance(version, str) else None
    if name is None:
        raise ValueError(f"unknown MCP protocol version {version!r}; known: {', '.join(VERSIONS)}")
    return importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str) -> ModuleType:
    # ``mcp_sansio.types.v2025_11_25`` after a plain ``import mcp_sansio.types``.
    if name in _MODULES.values():
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULES.values()])


# --------------------------------------------------------------------------- converter


def _module_of(cls: Any) -> Any:
    """The generated module that defines ``cls`` (a class or a union of its classes)."""
    if isinstance(cls, type):
        return sys.modules.get(cls.__module__) if cls.__module__ in _GENERATED else None
    if isinstance(cls, UnionType) or typing.get_origin(cls) is typing.Union:
        for arg in typing.get_args(cls):
            if isinstance(arg, type) and arg.__module__ in _GENERATED:
                return sys.modules.get(arg.__module__)
    return None


def _structurer(cls: Any) -> Structurer | None:
    module = _module_of(cls)
    if module is None:
        return None
    try:
        fn: Structurer | None = module._STRUCTURE.get(cls)
    except TypeError:  # pragma: no cover - a union with an unhashable member
        return None
    return fn


def _unstructurer(cls: Any) -> Any:
    module = _module_of(cls) if isinstance(cls, type) else None
    return None if module is None else module._UNSTRUCTURE.get(cls)


def _structure_hook_factory(cls: Any) -> Any:
    fn = _structurer(cls)
    assert fn is not None

    def hook(value: Any, _cls: Any) -> Any:
        return fn(value, "")

    return hook


converter: Final = cattrs.preconf.orjson.make_converter()
"""The cattrs converter (orjson preconf) that knows every generated class and union alias.

One predicate-based hook factory in each direction dispatches to the generated
``_structure_<Name>`` / ``_unstructure_<Name>`` functions of whichever version module
defines the type; nothing is registered per class, and no version module is imported
until it is used. Containers of generated types (``list[Tool]``) work as usual in cattrs.

:meta hide-value:
"""
converter.register_structure_hook_factory(
    lambda cls: _structurer(cls) is not None, _structure_hook_factory
)
converter.register_unstructure_hook_factory(
    lambda cls: _unstructurer(cls) is not None, _unstructurer
)

_STRUCTURERS: dict[Any, Structurer] = {}
_UNSTRUCTURERS: dict[type, Any] = {}


@overload
def structure(data: Any, cls: type[T], path: str = "") -> T: ...
@overload
def structure(data: Any, cls: Any, path: str = "") -> Any: ...
def structure(data: Any, cls: Any, path: str = "") -> Any:
    """Structure JSON-shaped ``data`` (from ``orjson.loads``) into ``cls``.

    ``cls`` is a generated class or union alias (``v2025_11_25.ContentBlock``); other
    types go through :data:`converter` with cattrs' usual rules. ``path`` prefixes the
    error paths (``"/params"``).

    :raises ValidationError: ``data`` does not match ``cls``; never anything else.
    """
    try:
        fn = _STRUCTURERS[cls]
    except (KeyError, TypeError):  # not cached yet, or an unhashable type form
        found = _structurer(cls)
        if found is None:
            return _structure_other(data, cls, path)
        fn = _STRUCTURERS[cls] = found
    try:
        return fn(data, path)
    except RecursionError:  # pragma: no cover - no generated class contains itself
        raise ValidationError("value nested too deeply", path) from None


def _structure_other(data: Any, cls: Any, path: str) -> Any:
    try:
        return converter.structure(data, cls)
    except ValidationError:
        raise
    except Exception as e:
        raise ValidationError(f"cannot structure as {cls!r}: {e}", path) from e


def unstructure(obj: Any) -> Any:
    """The JSON-shaped value of ``obj`` (camelCase keys, ``OMITTED`` fields left out,
    ``extra`` keys merged back). Plain JSON values pass through :data:`converter`."""
    cls = obj.__class__
    fn = _UNSTRUCTURERS.get(cls)
    if fn is None:
        fn = _unstructurer(cls)
        if fn is None:
            return converter.unstructure(obj)
        _UNSTRUCTURERS[cls] = fn
    return fn(obj)


def dumps(obj: Any) -> bytes:
    """``obj`` (a generated instance or a JSON-shaped value) as compact JSON bytes.

    :raises ValidationError: ``obj`` holds a value JSON cannot represent.
    """
    try:
        return orjson.dumps(unstructure(obj))
    except orjson.JSONEncodeError as e:
        raise ValidationError(f"not JSON-serializable: {e}") from None


@overload
def loads(data: bytes | bytearray | memoryview | str, cls: type[T]) -> T: ...
@overload
def loads(data: bytes | bytearray | memoryview | str, cls: Any) -> Any: ...
def loads(data: bytes | bytearray | memoryview | str, cls: Any) -> Any:
    """Decode JSON ``data`` with orjson and structure it into ``cls``.

    :raises ValidationError: the JSON is invalid (path ``""``) or does not match ``cls``.
    """
    try:
        value = orjson.loads(data)
    except (orjson.JSONDecodeError, TypeError) as e:
        raise ValidationError(f"invalid JSON: {e}") from None
    return structure(value, cls)


_METHOD_TABLES: dict[str, dict[str, MethodSpec]] = {}


def _method_spec(version: str, method: str) -> MethodSpec:
    table = _METHOD_TABLES.get(version)
    if table is None:  # first use of this version: import its module once
        table = _METHOD_TABLES[version] = module_for(version).METHODS
    spec = table.get(method)
    if spec is None:
        raise ValidationError(f"unknown method {method!r} in MCP {version}", "/method")
    return spec


def structure_params(
    version: str, method: str, params: Any = OMITTED, path: str = "/params"
) -> Any:
    """Structure the ``params`` of a request or notification of ``method``.

    Pass :data:`OMITTED` when the message has no ``params``: the result is ``OMITTED``
    if the schema allows that. Methods whose schema declares no ``params`` return
    ``params`` unchanged.

    :raises ValueError: unknown ``version``.
    :raises ValidationError: unknown ``method``, or ``params`` does not match.
    """
    if params is not OMITTED:
        fn = _PARAMS_FNS.get((version, method))
        if fn is not None:  # seen before: straight to its generated function
            try:
                return fn(params, path)
            except RecursionError:  # pragma: no cover - no generated class contains itself
                raise ValidationError("value nested too deeply", path) from None
    spec = _method_spec(version, method)
    if params is OMITTED:
        if spec.params_required:
            raise ValidationError(f"{method} requires params", path)
        return OMITTED
    if spec.params is None:  # pragma: no cover - every vendored method has params
        return params
    value = structure(params, spec.params, path)
    _remember(_PARAMS_FNS, version, method, spec.params)
    return value


def structure_result(version: str, method: str, result: Any, path: str = "/result") -> Any:
    """Structure the ``result`` of a response to a ``method`` request.

    :raises ValueError: unknown ``version``.
    :raises ValidationError: unknown ``method``, a notification, or ``result`` does not match.
    """
    fn = _RESULT_FNS.get((version, method))
    if fn is not None:  # seen before: straight to its generated function
        try:
            return fn(result, path)
        except RecursionError:  # pragma: no cover - no generated class contains itself
            raise ValidationError("value nested too deeply", path) from None
    spec = _method_spec(version, method)
    if spec.result is None:
        raise ValidationError(f"{method} is a notification and has no result", path)
    value = structure(result, spec.result, path)
    _remember(_RESULT_FNS, version, method, spec.result)
    return value


#: ``(version, method)`` -> the generated function that structures its params (or result),
#: filled as methods are first structured: :func:`structure_params` and
#: :func:`structure_result` then skip the method table and the per-class cache.
_PARAMS_FNS: dict[tuple[str, str], Structurer] = {}
_RESULT_FNS: dict[tuple[str, str], Structurer] = {}


def _remember(
    table: dict[tuple[str, str], Structurer], version: str, method: str, cls: Any
) -> None:
    try:
        fn = _STRUCTURERS.get(cls)
    except TypeError:  # pragma: no cover - an unhashable type form
        return
    if fn is not None:
        table[version, method] = fn
