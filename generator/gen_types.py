#!/usr/bin/env python3
"""Generate ``src/mcp_sansio/types/v<version>.py`` (and ``src/mcp_sansio/_required_params.py``,
the params each method requires, which the Connection checks) from the vendored MCP schema
files.

Usage::

    .venv/bin/python generator/gen_types.py            # (re)write the modules
    .venv/bin/python generator/gen_types.py --check    # exit 1 if any module would change

The output is deterministic: it depends only on the vendored ``<version>.json`` schema
files and on this file (definitions and properties are processed in sorted order).

What each schema construct becomes
==================================

* A definition, or an inline schema, of ``type: object`` with ``properties`` becomes a
  frozen, slotted, keyword-only attrs class. Inline objects get synthesized names: the
  owner's name plus the property name in PascalCase (``ServerCapabilities.tools`` ->
  ``ServerCapabilitiesTools``; array items add ``Item``, ``additionalProperties`` values
  add ``Value``). A synthesized name that is already taken gets a numeric suffix
  (``2``, ``3``, ...), and the generator prints every such rename.
* An object with no ``properties`` is "any JSON object": ``dict[str, Any]`` (keys are
  checked to be strings, values are not typed), or ``dict[str, T]`` when
  ``additionalProperties`` is a real schema. ``JSONValue`` (2026-07-28) is ``Any``.
* ``anyOf`` / ``oneOf`` become unions. A union definition is a type alias ``X = A | B``;
  an inline union that holds a class, an array or an object gets a synthesized alias
  name (``CallToolResultContentItem``); a union of primitives stays inline (``str | int``).
* ``allOf`` is merged into one object schema (properties, required, and nested
  ``allOf`` members of the same property merged recursively).
* ``enum`` / ``const`` become ``Literal[...]`` (enum definitions are ``Literal`` aliases).
  A required ``const`` field defaults to its constant, so ``TextContent(text="hi")``
  needs no ``type="text"``.
* A definition that is a plain ``$ref`` (``EmptyResult``) is an alias of its target.
  Every object definition is its own class, even when its schema equals another's
  (2026-07-28 ``ClientNotification`` and ``CancelledNotification``). An inline
  object/array/union schema identical to a definition uses that definition (the
  inline batch arrays of 2025-03-26 ``JSONRPCMessage`` are ``JSONRPCBatchRequest``...).

Field names
===========

Wire names are camelCase, attributes snake_case (``inputSchema`` -> ``input_schema``);
``_meta`` -> ``meta``; the reserved prefix ``io.modelcontextprotocol/`` is dropped
(``io.modelcontextprotocol/clientInfo`` -> ``client_info``); other characters that are
not letters or digits become ``_`` (``$schema`` -> ``schema``). A Python keyword, the
name ``extra`` (taken by the extras field), or a name already used in the class gets a
trailing underscore until unique; the generator prints each such rename. No schema
property in the vendored versions needs one.

Optional properties default to ``OMITTED`` (type ``T | Omitted``); nullable types
(``"type": ["integer", "null"]``) use ``None`` for null. Every class ends with
``extra: dict[str, Any]``: the wire keys the schema does not name, re-emitted on
unstructure.

Union resolution (generated, no reflection at runtime)
======================================================

A union's structuring function first branches on the JSON type of the value (object,
array, string, boolean, integer, number, null). Among the object members:

1. Version overrides: in 2026-07-28 ``resultType == "input_required"`` selects
   ``InputRequiredResult`` (the schema types ``resultType`` as a plain string), and
   ``InputRequiredResult`` is chosen in no other way.
2. Tag: a property that every member declares as ``const``/``enum`` of strings and that
   splits the members into at least two groups (content blocks by ``type``, requests
   and notifications by ``method``, elicitation params by ``mode``, ...). The property
   with the most groups wins (ties: alphabetical). Members that do not require the tag
   form the group for an absent tag (``ElicitRequestFormParams`` in 2025-11-25). An
   unknown tag value is an error at ``<path>/<tag>``.
3. Within a group (or when there is no tag), by key presence: a member with a
   required key that no other remaining member declares is chosen when that key is
   present (``text`` vs ``blob`` resource contents; ``result`` vs ``error`` responses);
   this is repeated on the remaining members until nothing changes. Then a member
   with an optional key no other remaining member declares is preferred when that key
   is present (``enumNames`` -> ``LegacyTitledEnumSchema``).
4. Otherwise the remaining members are tried in order: most required keys first, then
   schema order; the first that structures wins. (A key that every member requires is
   checked first, so that its absence is reported as such.)

A member chosen by rule 3 that fails to structure does not fail the union at once: the
other members are tried in order (``anyOf`` semantics), and if all fail the error of the
chosen member is raised, since it is the most specific.

Generated code
==============

Classes are ``@attrs.frozen(kw_only=True, eq=False, repr=False, weakref_slot=False)``:
slotted, frozen,
keyword-only attrs classes whose ``__eq__`` (field by field, same class only; instances
are unhashable, as their fields hold dicts and lists) and ``__repr__`` (fields that are
``OMITTED`` and an empty ``extra`` left out) are generated here instead of by attrs at
import time. attrs compiles each class's methods when the class is created; leaving
eq/repr to this generator roughly halves the import time of a version module.

For every class ``X``: ``_structure_X(d, path) -> X`` validates fully (JSON types --
``integer`` is an int but not a bool, ``number`` an int or float but not a bool --,
required keys, ``const``, ``enum``, ``minimum``/``maximum``/``maxItems``, nested
classes and unions) and raises only ``mcp_sansio._errors.ValidationError(message,
path)``; and ``_unstructure_X(o) -> dict``. Nested structurers are called with path
``""``; error paths are joined only when an error propagates.

Building instances fast: a frozen attrs class overrides ``__setattr__``, so every
slot write from Python costs a call (its ``__init__`` makes one per field). Each class
``X`` therefore has a plain twin ``_M_X`` with the same ``__slots__`` and no frozen
``__setattr__``; ``_structure_X`` creates a ``_M_X`` (it has no ``__init__``), fills its
slots with plain attribute stores, and then assigns ``o.__class__ = X``. CPython allows
that assignment between heap types with identical slot layouts, which is why the
classes have ``weakref_slot=False`` (a ``__weakref__`` slot makes CPython reject it).
The result is an ordinary ``X`` instance (frozen from then on), built about twice as
fast as through the slot descriptors and several times faster than through ``__init__``.
The tests structure every class, so an incompatible layout would fail them.

Each module also has ``METHODS: dict[str, MethodSpec]`` (see ``_methods`` below),
``VERSION``, and the private tables ``_STRUCTURE`` / ``_UNSTRUCTURE`` (class or union
alias -> function, used by the converter hooks in ``mcp_sansio.types``) and ``_DEFS``
(schema definition name -> structuring function, used by the tests).
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "src" / "mcp_sansio" / "testing" / "schema"
OUT_DIR = ROOT / "src" / "mcp_sansio" / "types"
PARAMS_OUT = ROOT / "src" / "mcp_sansio" / "_required_params.py"

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

#: Prefixes dropped from property names when making attribute and class names.
STRIP_PREFIXES = ("io.modelcontextprotocol/",)

#: Attribute names a schema property may not take (the extras field).
RESERVED_ATTRS = frozenset({"extra"})

#: Names the generated module imports; no definition may take them.
IMPORTED_NAMES = frozenset(
    {"Any", "Final", "Literal", "attrs", "OMITTED", "Omitted", "ValidationError", "MethodSpec"}
)

#: Union overrides per version: (member class, property, value). When the property has
#: that value the member is chosen, and the member is chosen in no other way.
UNION_OVERRIDES: dict[str, list[tuple[str, str, str]]] = {
    "2026-07-28": [("InputRequiredResult", "resultType", "input_required")],
}

#: Definitions that are "any JSON value" and are not typed further.
ANY_DEFINITIONS = frozenset({"JSONValue"})

#: Schema keywords the generator understands; anything else is an error.
KNOWN_KEYWORDS = frozenset(
    {
        "$ref", "$schema", "additionalProperties", "allOf", "anyOf", "const", "default",
        "description", "enum", "format", "items", "maxItems", "maximum", "minimum", "oneOf",
        "properties", "required", "title", "type",
    }
)  # fmt: skip

#: Tag dispatch switches to a dict lookup from this many single-member groups on.
DICT_DISPATCH_MIN = 6


class GeneratorError(Exception):
    """The schema uses something the generator does not support."""


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class TAny:
    pass


@dataclass(frozen=True)
class TPrim:
    name: str  # "str" | "int" | "float" | "bool" | "none"
    minimum: float | int | None = None
    maximum: float | int | None = None


@dataclass(frozen=True)
class TLit:
    values: tuple[Any, ...]


@dataclass(frozen=True)
class TList:
    item: T
    max_items: int | None = None


@dataclass(frozen=True)
class TDict:
    value: T


@dataclass(frozen=True)
class TClass:
    name: str


@dataclass(frozen=True)
class TAlias:
    name: str


@dataclass(frozen=True)
class TUnion:
    members: tuple[T, ...]


T = TAny | TPrim | TLit | TList | TDict | TClass | TAlias | TUnion


@dataclass
class Field:
    wire: str
    attr: str
    type: T
    required: bool
    doc: str | None


@dataclass
class ClassDef:
    name: str
    doc: str
    fields: list[Field] = field(default_factory=list)
    schema_name: str | None = None


@dataclass
class AliasDef:
    name: str
    doc: str
    target: T | None = None  # None while being resolved
    schema_name: str | None = None


@dataclass
class Method:
    method: str
    direction: str
    kind: str
    params: str | None
    params_required: bool
    result: str | None


# --------------------------------------------------------------------------- helpers


def pystr(s: str) -> str:
    """A double-quoted Python string literal for ``s``."""
    return json.dumps(s, ensure_ascii=False)


def pyval(v: Any) -> str:
    return pystr(v) if isinstance(v, str) else repr(v)


def json_pointer_key(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def strip_prefix(prop: str) -> str:
    for prefix in STRIP_PREFIXES:
        if prop.startswith(prefix):
            return prop[len(prefix) :]
    return prop


def snake(prop: str) -> str:
    if prop == "_meta":
        return "meta"
    s = strip_prefix(prop)
    s = re.sub(r"[^0-9A-Za-z]+", "_", s)
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", s)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
    s = s.lower().strip("_")
    if not s or s[0].isdigit():
        s = "f_" + s
    return s


def pascal(prop: str) -> str:
    s = strip_prefix(prop)
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", s) if p]
    return "".join(p[0].upper() + p[1:] for p in parts) or "Field"


def docstring(text: str, indent: str) -> list[str]:
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    lines = text.split("\n")
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    out = [f'{indent}"""{lines[0]}']
    out += [(indent + line) if line else "" for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


def canon(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


def merge_all_of(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Merge an ``allOf`` into one schema (the subset of JSON Schema the MCP files use)."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        if "$ref" in part:
            part = {**defs[part["$ref"].rsplit("/", 1)[-1]]}
        if "allOf" in part:
            part = merge_all_of(part, defs)
        merged = merge_schemas(merged, part)
    return merged


def merge_schemas(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "description" and "description" in out:
            continue  # the outer schema's description wins
        if key == "properties":
            props = dict(out.get("properties", {}))
            for name, sub in value.items():
                props[name] = merge_schemas(props[name], sub) if name in props else sub
            out["properties"] = props
        elif key == "required":
            out["required"] = sorted(set(out.get("required", [])) | set(value))
        elif key in out and out[key] != value:
            if key == "type" and {out[key], value} == {"object"}:
                continue
            raise GeneratorError(f"allOf: conflicting {key!r}: {out[key]!r} vs {value!r}")
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- model


class Model:
    """The classes, aliases and methods of one schema version."""

    def __init__(self, version: str, schema: dict[str, Any]) -> None:
        self.version = version
        self.defs: dict[str, Any] = schema.get("definitions") or schema["$defs"]
        self.classes: dict[str, ClassDef] = {}
        self.aliases: dict[str, AliasDef] = {}
        self.def_kind: dict[str, str] = {}  # schema def name -> "class" | "alias"
        self.names: set[str] = set()
        self.notes: list[str] = []
        self.overrides = UNION_OVERRIDES.get(version, [])
        self._canon_defs: dict[str, str] = {}
        for name, sub in self.defs.items():
            self._check_keywords(sub, f"#/{name}")
        self._classify()
        for name in sorted(self.defs):
            self._build_definition(name)
        self.methods = self._methods()

    # -- checks

    def _check_keywords(self, node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("properties", "definitions", "$defs"):
                    for name, sub in value.items():
                        self._check_keywords(sub, f"{where}/{key}/{name}")
                    continue
                if key not in KNOWN_KEYWORDS:
                    raise GeneratorError(f"{self.version}: unsupported keyword {key!r} at {where}")
                if key in ("items", "additionalProperties"):
                    self._check_keywords(value, f"{where}/{key}")
                elif key in ("anyOf", "oneOf", "allOf"):
                    for i, sub in enumerate(value):
                        self._check_keywords(sub, f"{where}/{key}/{i}")

    # -- definitions

    def _classify(self) -> None:
        for name in sorted(self.defs):
            if name in IMPORTED_NAMES:
                raise GeneratorError(f"definition {name!r} clashes with an imported name")
            schema = self.defs[name]
            self.names.add(name)
            if "allOf" in schema:
                schema = merge_all_of(schema, self.defs)
                self.defs[name] = schema
            if schema.get("type") in ("object", "array") or "anyOf" in schema:
                self._canon_defs.setdefault(canon(schema), name)
            if (
                name not in ANY_DEFINITIONS
                and schema.get("type") == "object"
                and schema.get("properties")
            ):
                self.def_kind[name] = "class"
            else:
                self.def_kind[name] = "alias"

    def _build_definition(self, name: str) -> None:
        schema = self.defs[name]
        if self.def_kind[name] == "class":
            if name not in self.classes:
                self._make_class(name, schema, schema.get("description"), schema_name=name)
            return
        if name in self.aliases:
            return
        alias = AliasDef(name, self._doc(schema.get("description"), name), schema_name=name)
        self.aliases[name] = alias
        if name in ANY_DEFINITIONS:
            alias.target = TAny()
            alias.doc += "\n\nAny JSON value; not typed further (see the generator's docs)."
            return
        if "$ref" in schema and not (set(schema) - {"$ref", "description"}):
            alias.target = self._ref(schema["$ref"])
            return
        alias.target = self._resolve(schema, name, top=name)

    def _doc(self, description: str | None, name: str) -> str:
        if description and description.strip():
            return description.strip()
        return f"The ``{name}`` definition of the MCP {self.version} schema."

    def _unique(self, name: str) -> str:
        if name not in self.names:
            self.names.add(name)
            return name
        i = 2
        while f"{name}{i}" in self.names:
            i += 1
        self.notes.append(f"synthesized name {name!r} is taken; using {name}{i}")
        self.names.add(f"{name}{i}")
        return f"{name}{i}"

    def _ref(self, ref: str) -> T:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.defs:
            raise GeneratorError(f"unresolved $ref {ref!r}")
        if self.def_kind[name] == "class":
            return TClass(name)
        self._build_definition(name)
        return TAlias(name)

    # -- schemas to types

    def _resolve(
        self, schema: Any, ctx: str, top: str | None = None, origin: str | None = None
    ) -> T:
        """The type of ``schema``; ``ctx`` names anything synthesized for it, ``origin``
        says where it sits (for the docstrings of synthesized names)."""
        origin = origin or f"``{ctx}``"
        if schema is True or schema == {}:
            return TAny()
        if not isinstance(schema, dict):
            raise GeneratorError(f"{ctx}: unsupported schema {schema!r}")
        if "$ref" in schema:
            return self._ref(schema["$ref"])
        if "allOf" in schema:
            schema = merge_all_of(schema, self.defs)
        if top is None and (schema.get("type") in ("object", "array") or "anyOf" in schema):
            twin = self._canon_defs.get(canon(schema))
            if twin is not None:
                return self._ref("#/" + twin)
        if "anyOf" in schema or "oneOf" in schema:
            options = schema.get("anyOf") or schema["oneOf"]
            members: list[T] = []
            for i, option in enumerate(options):
                member = self._resolve(option, f"{ctx}Option{i}", origin=f"a member of {origin}")
                members.extend(member.members if isinstance(member, TUnion) else [member])
            members = list(dict.fromkeys(members))
            if any(isinstance(m, TAny) for m in members):
                return TAny()
            if top is None and all(self.is_simple(m) for m in members):
                return TUnion(tuple(members))
            name = top if top is not None else self._unique(ctx)
            if top is None:
                doc = schema.get("description") or f"The types allowed for {origin}."
                self.aliases[name] = AliasDef(name, self._doc(doc, name))
            self.aliases[name].target = TUnion(tuple(members))
            return TAlias(name) if top is None else TUnion(tuple(members))
        if "const" in schema:
            return TLit((schema["const"],))
        if "enum" in schema:
            return TLit(tuple(schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            prims = [self._resolve({"type": k}, ctx, origin=origin) for k in kind]
            return TUnion(tuple(prims))
        if kind == "object":
            if schema.get("properties"):
                name = self._unique(ctx)
                doc = schema.get("description") or f"The object type of {origin}."
                self._make_class(name, schema, doc)
                return TClass(name)
            ap = schema.get("additionalProperties", True)
            if ap is False:
                raise GeneratorError(f"{ctx}: additionalProperties false is not supported")
            return TDict(self._resolve(ap, f"{ctx}Value", origin=f"the values of {origin}"))
        if kind == "array":
            items = schema.get("items", True)
            item = self._resolve(items, f"{ctx}Item", origin=f"the items of {origin}")
            return TList(item, schema.get("maxItems"))
        if kind in ("string", "integer", "number", "boolean", "null"):
            prim = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
            return TPrim(prim.get(kind, "none"), schema.get("minimum"), schema.get("maximum"))
        if kind is None and not (set(schema) - {"description", "title", "default"}):
            return TAny()
        raise GeneratorError(f"{ctx}: unsupported schema {schema!r}")

    def _make_class(
        self, name: str, schema: dict[str, Any], doc: str | None, schema_name: str | None = None
    ) -> ClassDef:
        cls = ClassDef(name, self._doc(doc, name), schema_name=schema_name)
        self.classes[name] = cls
        props: dict[str, Any] = schema["properties"]
        required = set(schema.get("required", []))
        if required - set(props):
            raise GeneratorError(f"{name}: required but undeclared: {required - set(props)}")
        ap = schema.get("additionalProperties", True)
        if ap not in (True, {}):
            raise GeneratorError(f"{name}: typed additionalProperties next to properties")
        used: set[str] = set()
        for prop in sorted(props):
            attr = snake(prop)
            original = attr
            while keyword.iskeyword(attr) or attr in RESERVED_ATTRS or attr in used:
                attr += "_"
            if attr != original:
                self.notes.append(f"{name}.{prop}: attribute {original!r} renamed to {attr!r}")
            used.add(attr)
            sub = props[prop]
            ftype = self._resolve(sub, name + pascal(prop), origin=f"``{name}.{prop}``")
            description = sub.get("description") if isinstance(sub, dict) else None
            if description is None and isinstance(sub, dict) and "$ref" in sub:
                target = self.defs[sub["$ref"].rsplit("/", 1)[-1]]
                description = None if isinstance(target, bool) else target.get("description")
            cls.fields.append(Field(prop, attr, ftype, prop in required, description))
        return cls

    # -- type queries

    def alias_target(self, t: T) -> T:
        seen = set()
        while isinstance(t, TAlias):
            if t.name in seen:
                raise GeneratorError(f"alias cycle at {t.name}")
            seen.add(t.name)
            target = self.aliases[t.name].target
            assert target is not None, t.name
            t = target
        return t

    def is_simple(self, t: T) -> bool:
        """Checkable by an inline expression, with no conversion."""
        t = self.alias_target(t)
        if isinstance(t, (TAny, TPrim, TLit)):
            return True
        if isinstance(t, TUnion):
            return all(self.is_simple(m) for m in t.members)
        return False

    def needs_conversion(self, t: T, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the type holds a generated class (structuring builds new objects)."""
        if isinstance(t, TClass):
            return True
        if isinstance(t, TAlias):
            if t.name in seen:
                return False
            target = self.aliases[t.name].target
            assert target is not None
            return self.needs_conversion(target, seen | {t.name})
        if isinstance(t, TList):
            return self.needs_conversion(t.item, seen)
        if isinstance(t, TDict):
            return self.needs_conversion(t.value, seen)
        if isinstance(t, TUnion):
            return any(self.needs_conversion(m, seen) for m in t.members)
        return False

    def is_union_alias(self, name: str) -> bool:
        target = self.aliases[name].target
        return isinstance(target, TUnion) and not self.is_simple(target)

    def flat_members(self, t: T) -> list[T]:
        """The members of a union, with nested union aliases expanded and other aliases
        replaced by their targets (a class alias by its class)."""
        out: list[T] = []
        if isinstance(t, TAlias):
            target = self.aliases[t.name].target
            assert target is not None
            if isinstance(target, TUnion):
                for m in target.members:
                    out.extend(self.flat_members(m))
                return list(dict.fromkeys(out))
            if isinstance(target, (TClass, TList, TDict)):
                return [target]
            return self.flat_members(target)
        if isinstance(t, TUnion):
            for m in t.members:
                out.extend(self.flat_members(m))
            return list(dict.fromkeys(out))
        return [t]

    # -- methods

    def _request_members(self, union: str) -> list[str]:
        if union not in self.defs:
            return []
        if self.def_kind[union] == "class":
            return [union]
        members = self.flat_members(TAlias(union))
        out = []
        for m in members:
            if not isinstance(m, TClass):
                raise GeneratorError(f"{union}: member {m} is not a class")
            out.append(m.name)
        return out

    def _methods(self) -> list[Method]:
        """The METHODS table.

        Methods come from the members of ``ClientRequest`` / ``ServerRequest`` /
        ``ClientNotification`` / ``ServerNotification`` (each member's ``method`` const),
        the direction from which of them holds it ("both" when both sides do), ``params``
        from the member's ``params`` property. The result of ``<X>Request`` is the
        ``result`` property of ``<X>ResultResponse`` where the schema has one
        (2026-07-28: a union with ``InputRequiredResult`` for tools/call, prompts/get
        and resources/read); else ``<X>Result``; else ``EmptyResult`` (ping,
        logging/setLevel, resources/subscribe, ...); else ``Result``.
        """
        table: dict[str, Method] = {}
        groups = [
            ("ClientRequest", "client_to_server", "request"),
            ("ServerRequest", "server_to_client", "request"),
            ("ClientNotification", "client_to_server", "notification"),
            ("ServerNotification", "server_to_client", "notification"),
        ]
        for union, direction, kind in groups:
            for member in self._request_members(union):
                cls = self.classes[member]
                fields = {f.wire: f for f in cls.fields}
                mtype = self.alias_target(fields["method"].type)
                if not (isinstance(mtype, TLit) and len(mtype.values) == 1):
                    raise GeneratorError(f"{member}: method is not a const")
                method = mtype.values[0]
                params = fields.get("params")
                params_name = None
                if params is not None:
                    pt = params.type
                    if isinstance(pt, TClass) or (
                        isinstance(pt, TAlias)
                        and (
                            self.is_union_alias(pt.name)
                            or isinstance(self.alias_target(pt), TClass)
                        )
                    ):
                        params_name = pt.name
                result = None
                if kind == "request":
                    result = self._result_for(member)
                spec = Method(
                    method,
                    direction,
                    kind,
                    params_name,
                    bool(params and params.required),
                    result,
                )
                old = table.get(method)
                if old is not None:
                    if (old.params, old.result, old.kind) != (spec.params, spec.result, kind):
                        raise GeneratorError(f"{method}: differs between directions")
                    spec.direction = "both"
                table[method] = spec
        return [table[m] for m in sorted(table)]

    def _result_for(self, request_class: str) -> str:
        stem = request_class.removesuffix("Request")
        response = self.defs.get(f"{stem}ResultResponse")
        if response is not None:
            cls = self.classes[f"{stem}ResultResponse"]
            rtype = next(f.type for f in cls.fields if f.wire == "result")
            if not isinstance(rtype, (TClass, TAlias)):
                raise GeneratorError(f"{stem}ResultResponse.result is not a class")
            return rtype.name
        for candidate in (f"{stem}Result", "EmptyResult", "Result"):
            if candidate in self.defs:
                return candidate
        raise GeneratorError(f"no result type for {request_class}")


# --------------------------------------------------------------------------- codegen


class Emitter:
    """Turns a Model into the source of one module."""

    def __init__(self, model: Model) -> None:
        self.m = model
        self.helpers: dict[str, list[str]] = {}  # helper function name -> lines
        self.tag_tables: list[str] = []

    # -- annotations

    def ann(self, t: T) -> str:
        if isinstance(t, TAny):
            return "Any"
        if isinstance(t, TPrim):
            return {"str": "str", "int": "int", "float": "float", "bool": "bool"}.get(
                t.name, "None"
            )
        if isinstance(t, TLit):
            return "Literal[" + ", ".join(pyval(v) for v in t.values) + "]"
        if isinstance(t, TList):
            return f"list[{self.ann(t.item)}]"
        if isinstance(t, TDict):
            return f"dict[str, {self.ann(t.value)}]"
        if isinstance(t, (TClass, TAlias)):
            return t.name
        return " | ".join(self.ann(m) for m in t.members)

    # -- simple checks

    def ok(self, t: T, x: str) -> str:
        """A boolean expression: does ``x`` match the simple type ``t``?"""
        t = self.m.alias_target(t)
        if isinstance(t, TAny):
            return "True"
        if isinstance(t, TPrim):
            base = {
                "str": f"isinstance({x}, str)",
                "int": f"({x}.__class__ is int or _is_int({x}))",
                "float": f"({x}.__class__ is float or {x}.__class__ is int or _is_number({x}))",
                "bool": f"({x} is True or {x} is False)",
                "none": f"{x} is None",
            }[t.name]
            if t.minimum is not None:
                base += f" and {x} >= {t.minimum!r}"
            if t.maximum is not None:
                base += f" and {x} <= {t.maximum!r}"
            return base
        if isinstance(t, TLit):
            if all(isinstance(v, str) for v in t.values):
                if len(t.values) == 1:
                    return f"{x} == {pystr(t.values[0])}"
                values = ", ".join(pystr(v) for v in sorted(t.values))
                return f"(isinstance({x}, str) and {x} in {{{values}}})"
            if all(isinstance(v, int) and not isinstance(v, bool) for v in t.values):
                values = ", ".join(repr(v) for v in t.values)
                return f"(_is_int({x}) and {x} in ({values},))"
            raise GeneratorError(f"unsupported literal {t.values!r}")
        if isinstance(t, TUnion):
            parts = [self.ok(m, x) for m in t.members]
            if "True" in parts:
                return "True"
            return "(" + " or ".join(f"({p})" if " and " in p else p for p in parts) + ")"
        raise GeneratorError(f"not a simple type: {t}")

    def expected(self, t: T) -> str:
        """A short description of ``t`` for error messages."""
        t = self.m.alias_target(t)
        if isinstance(t, TAny):
            return "any value"
        if isinstance(t, TPrim):
            base = {
                "str": "string",
                "int": "integer",
                "float": "number",
                "bool": "boolean",
                "none": "null",
            }[t.name]
            if t.minimum is not None and t.maximum is not None:
                return f"{base} in [{t.minimum}, {t.maximum}]"
            if t.minimum is not None:
                return f"{base} >= {t.minimum}"
            if t.maximum is not None:
                return f"{base} <= {t.maximum}"
            return base
        if isinstance(t, TLit):
            if len(t.values) == 1:
                return json.dumps(t.values[0])
            return "one of " + ", ".join(json.dumps(v) for v in sorted(t.values, key=str))
        if isinstance(t, TList):
            return "array"
        if isinstance(t, (TDict, TClass)):
            return "object"
        if isinstance(t, TUnion):
            return " or ".join(dict.fromkeys(self.expected(m) for m in t.members))
        raise AssertionError(t)

    # -- value checks (statements)

    def value_fn(self, t: T) -> str:
        """The name of a function ``(value, path) -> structured value`` for ``t``."""
        if isinstance(t, TAlias):
            target = self.m.alias_target(t)
            return f"_structure_{target.name if isinstance(target, TClass) else t.name}"
        if isinstance(t, TClass):
            return f"_structure_{t.name}"
        key = re.sub(r"[^0-9A-Za-z]+", "_", self.ann(t)).strip("_")
        name = f"_structure__{key}"
        if name not in self.helpers:
            self.helpers[name] = []  # reserve (recursion)
            body = [f"def {name}(d: Any, path: str) -> Any:"]
            body += self.check("d", t, "path", "    ", precise=True)
            body.append("    return d")
            self.helpers[name] = body
        return name

    @staticmethod
    def negate(cond: str) -> str:
        """``not cond``, parenthesized unless ``cond`` is one call or one group."""
        if re.fullmatch(r"isinstance\([^()]*\)", cond):
            return f"not {cond}"
        if cond.startswith("("):
            depth = 0
            for i, ch in enumerate(cond):
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth == 0:
                    if i == len(cond) - 1:
                        return f"not {cond}"
                    break
        return f"not ({cond})"

    def check(
        self, var: str, t: T, path: str, ind: str, known: bool = False, precise: bool = False
    ) -> list[str]:
        """Statements that validate ``var`` as ``t`` (reassigning it when structuring
        builds new objects); ``path`` is an expression evaluated only on failure.
        ``known``: the caller has already checked that ``var`` is a list/dict.

        Containers that hold no class are checked in place by nested loops that only
        answer yes/no; on failure the precise helper (``precise=True``: it locates the
        bad item) is run to build the error. Containers of classes are rebuilt."""
        if self.m.is_simple(t):
            cond = self.ok(t, var)
            if cond == "True":
                return []
            return [
                f"{ind}if {self.negate(cond)}:",
                f"{ind}    raise _type_error({pystr(self.expected(t))}, {var}, {path})",
            ]
        if isinstance(t, TClass) or (isinstance(t, TAlias) and self.m.is_union_alias(t.name)):
            fn = self.value_fn(t)
            return [
                f"{ind}try:",
                f'{ind}    {var} = {fn}({var}, "")',
                f"{ind}except ValidationError as e:",
                f"{ind}    raise _at(e, {path}) from None",
            ]
        if isinstance(t, TAlias):
            target = self.m.aliases[t.name].target
            assert target is not None
            return self.check(var, target, path, ind, known, precise)
        if not precise and not self.m.needs_conversion(t):
            fail = f"raise _invalid({var}, {self.value_fn(t)}, {path})"
            return self.fast(var, t, ind, 0, fail, known)
        if isinstance(t, TList):
            out = (
                []
                if known
                else [
                    f"{ind}if not isinstance({var}, list):",
                    f'{ind}    raise _type_error("array", {var}, {path})',
                ]
            )
            if t.max_items is not None:
                out += [
                    f"{ind}if len({var}) > {t.max_items}:",
                    f'{ind}    raise ValidationError("expected at most {t.max_items} items, got "'
                    f" + str(len({var})), {path})",
                ]
            item = t.item
            if self.m.is_simple(item):
                cond = self.ok(item, "x")
                if cond != "True":
                    out += [
                        f"{ind}for x in {var}:",
                        f"{ind}    if {self.negate(cond)}:",
                        f"{ind}        raise _bad_item({var}, lambda x: {cond},"
                        f" {pystr(self.expected(item))}, {path})",
                    ]
                return out
            fn = self.value_fn(item)
            return [
                *out,
                f"{ind}try:",
                f'{ind}    {var} = [{fn}(x, "") for x in {var}]',
                f"{ind}except ValidationError:",
                f"{ind}    raise _item_error({var}, {fn}, {path}) from None",
            ]
        if isinstance(t, TDict):
            out = (
                []
                if known
                else [
                    f"{ind}if not isinstance({var}, dict):",
                    f'{ind}    raise _type_error("object", {var}, {path})',
                ]
            )
            value = t.value
            if self.m.is_simple(value):
                cond = self.ok(value, "x")
                if cond == "True":
                    return [
                        *out,
                        f"{ind}for k in {var}:",
                        f"{ind}    if not isinstance(k, str):",
                        f"{ind}        raise _key_error(k, {path})",
                    ]
                return [
                    *out,
                    f"{ind}for k, x in {var}.items():",
                    f"{ind}    if not isinstance(k, str) or not ({cond}):",
                    f"{ind}        raise _bad_entry({var}, lambda x: {cond},"
                    f" {pystr(self.expected(value))}, {path})",
                ]
            fn = self.value_fn(value)
            return [
                *out,
                f"{ind}_check_keys({var}, {path})",
                f"{ind}try:",
                f'{ind}    {var} = {{k: {fn}(x, "") for k, x in {var}.items()}}',
                f"{ind}except ValidationError:",
                f"{ind}    raise _entry_error({var}, {fn}, {path}) from None",
            ]
        raise GeneratorError(f"cannot check {t}")

    def fast(self, var: str, t: T, ind: str, depth: int, fail: str, known: bool) -> list[str]:
        """Statements running ``fail`` unless ``var`` matches ``t`` (which holds no class)."""
        t = (
            self.m.alias_target(t)
            if not isinstance(t, TAlias) or not self.m.is_union_alias(t.name)
            else t
        )
        if self.m.is_simple(t):
            cond = self.ok(t, var)
            return [] if cond == "True" else [f"{ind}if {self.negate(cond)}:", f"{ind}    {fail}"]
        if isinstance(t, TAlias):  # a union of containers and primitives
            return [
                f"{ind}try:",
                f'{ind}    {self.value_fn(t)}({var}, "")',
                f"{ind}except ValidationError:",
                f"{ind}    {fail}",
            ]
        x, k = f"x{depth}", f"k{depth}"
        if isinstance(t, TList):
            out = [] if known else [f"{ind}if not isinstance({var}, list):", f"{ind}    {fail}"]
            if t.max_items is not None:
                out += [f"{ind}if len({var}) > {t.max_items}:", f"{ind}    {fail}"]
            inner = self.fast(x, t.item, ind + "    ", depth + 1, fail, False)
            if inner:
                out += [f"{ind}for {x} in {var}:", *inner]
            return out
        if isinstance(t, TDict):
            out = [] if known else [f"{ind}if not isinstance({var}, dict):", f"{ind}    {fail}"]
            inner = self.fast(x, t.value, ind + "    ", depth + 1, fail, False)
            if inner:
                out.append(f"{ind}for {k}, {x} in {var}.items():")
            else:
                out.append(f"{ind}for {k} in {var}:")
            return [*out, f"{ind}    if not isinstance({k}, str):", f"{ind}        {fail}", *inner]
        raise GeneratorError(f"no fast check for {t}")

    # -- unstructure expressions

    def uconv(self, t: T, expr: str, depth: int = 0) -> str | None:
        """An expression unstructuring ``expr`` of type ``t``; None if it is the identity."""
        if not self.m.needs_conversion(t):
            return None
        if isinstance(t, TClass):
            return f"_unstructure_{t.name}({expr})"
        if isinstance(t, TAlias):
            if self.m.is_union_alias(t.name):
                return f"_uv({expr})"
            target = self.m.aliases[t.name].target
            assert target is not None
            return self.uconv(target, expr, depth)
        x = f"x{depth}"
        if isinstance(t, TList):
            inner = self.uconv(t.item, x, depth + 1)
            return f"[{inner} for {x} in {expr}]"
        if isinstance(t, TDict):
            inner = self.uconv(t.value, x, depth + 1)
            return f"{{k{depth}: {inner} for k{depth}, {x} in {expr}.items()}}"
        return f"_uv({expr})"

    # -- classes

    def class_source(self, cls: ClassDef) -> list[str]:
        out = [
            "",
            "",
            "@attrs.frozen(kw_only=True, eq=False, repr=False, weakref_slot=False)",
            f"class {cls.name}:",
        ]
        out += docstring(cls.doc, "    ")
        out.append("")
        for f in cls.fields:
            ann = self.ann(f.type)
            lit = self.m.alias_target(f.type)
            if f.required and isinstance(lit, TLit) and len(lit.values) == 1:
                out.append(f"    {f.attr}: {ann} = {pyval(lit.values[0])}")
            elif f.required:
                out.append(f"    {f.attr}: {ann}")
            else:
                out.append(f"    {f.attr}: {ann} | Omitted = OMITTED")
            out += docstring(f.doc or f"The ``{f.wire}`` property.", "    ")
        out.append("    extra: dict[str, Any] = attrs.field(factory=dict)")
        out += docstring(
            "Wire keys the schema does not name, kept as received and re-emitted.", "    "
        )
        attrs_ = [f.attr for f in cls.fields] + ["extra"]
        mine = ", ".join(f"self.{a}" for a in attrs_)
        theirs = ", ".join(f"other.{a}" for a in attrs_)
        names = ", ".join(pystr(a) for a in attrs_)
        out += [
            "",
            "    def __eq__(self, other: Any) -> bool:",
            "        if other.__class__ is not self.__class__:",
            "            return NotImplemented  # pragma: no cover",
            f"        return ({mine},) == ({theirs},)",
            "",
            "    def __repr__(self) -> str:  # pragma: no cover",
            f"        return _repr(self, ({names},))",
        ]
        return out

    def structure_class(self, cls: ClassDef) -> list[str]:
        n = cls.name
        out = [
            "",
            "",
            f"def _structure_{n}(d: Any, path: str) -> {n}:",
            "    if d.__class__ is not dict:",
            "        d = _as_dict(d, path)",
            f"    o = _M_{n}()",
        ]
        required = sum(1 for f in cls.fields if f.required)
        if not required:
            # All fields optional: an empty object (``capabilities: {}``) is common.
            out += [
                "    if not d:",
                *[f"        o.{f.attr} = OMITTED" for f in cls.fields],
                "        o.extra = {}",
                f"        o.__class__ = {n}",
                "        return o  # type: ignore[no-any-return]",
            ]
        if any(not f.required for f in cls.fields):
            out.append(f"    n = {required}")
        for f in cls.fields:
            key = pystr(f.wire)
            fpath = f"path + {pystr('/' + json_pointer_key(f.wire))}"
            lit = self.m.alias_target(f.type)
            if f.required:
                out += [
                    "    try:",
                    f"        v = d[{key}]",
                    "    except KeyError:",
                    f"        raise _missing({key}, path) from None",
                ]
                if isinstance(lit, TLit) and len(lit.values) == 1:
                    const = pyval(lit.values[0])
                    cond = f"v != {const}"
                    if not isinstance(lit.values[0], str):
                        cond += " or not _is_int(v)"
                    out += [
                        f"    if {cond}:",
                        f"        raise _type_error({pystr(self.expected(lit))}, v, {fpath})",
                        f"    o.{f.attr} = {const}",
                    ]
                    continue
                out += self.check("v", f.type, fpath, "    ")
                out.append(f"    o.{f.attr} = v")
            else:
                out += [
                    f"    if {key} in d:",
                    f"        v = d[{key}]",
                    "        n += 1",
                    *self.check("v", f.type, fpath, "        "),
                    f"        o.{f.attr} = v",
                    "    else:",
                    f"        o.{f.attr} = OMITTED",
                ]
        count = "n" if any(not f.required for f in cls.fields) else str(required)
        out += [
            f"    o.extra = _extra(d, _K_{n}, path) if len(d) != {count} else {{}}",
            f"    o.__class__ = {n}",
            f"    r: {n} = o",
            "    return r",
        ]
        return out

    def unstructure_class(self, cls: ClassDef) -> list[str]:
        n = cls.name
        out = ["", "", f"def _unstructure_{n}(o: {n}) -> dict[str, Any]:"]
        required = [f for f in cls.fields if f.required]
        optional = [f for f in cls.fields if not f.required]
        items = []
        for f in required:
            expr = self.uconv(f.type, f"o.{f.attr}") or f"o.{f.attr}"
            items.append(f"{pystr(f.wire)}: {expr}")
        if optional:
            out.append("    v: Any")
        out.append("    r: dict[str, Any] = {" + ", ".join(items) + "}")
        for f in optional:
            out.append(f"    v = o.{f.attr}")
            out.append("    if v is not OMITTED:")
            out.append(f"        r[{pystr(f.wire)}] = {self.uconv(f.type, 'v') or 'v'}")
        out += [
            "    if o.extra:",
            "        return {**o.extra, **r}",
            "    return r",
        ]
        return out

    # -- unions

    def fallback_order(self, members: list[str]) -> list[str]:
        index = {name: i for i, name in enumerate(members)}
        return sorted(
            members,
            key=lambda c: (-sum(1 for f in self.m.classes[c].fields if f.required), index[c]),
        )

    def declared(self, cls: str) -> set[str]:
        return {f.wire for f in self.m.classes[cls].fields}

    def required(self, cls: str) -> set[str]:
        return {f.wire for f in self.m.classes[cls].fields if f.required}

    def tag_of(self, cls: str, prop: str) -> tuple[Any, ...] | None:
        for f in self.m.classes[cls].fields:
            if f.wire == prop:
                t = self.m.alias_target(f.type)
                if isinstance(t, TLit) and all(isinstance(v, str) for v in t.values):
                    return t.values
        return None

    def find_tag(self, members: list[str]) -> tuple[str, dict[Any, list[str]], list[str]] | None:
        props = set.intersection(*(self.declared(c) for c in members))
        best = None
        for prop in sorted(props):
            tags = {c: self.tag_of(c, prop) for c in members}
            if any(v is None for v in tags.values()):
                continue
            groups: dict[Any, list[str]] = {}
            for c in members:
                for value in tags[c] or ():
                    groups.setdefault(value, []).append(c)
            missing = [c for c in members if prop not in self.required(c)]
            score = len({tuple(g) for g in groups.values()}) + (1 if missing else 0)
            if score >= 2 and (best is None or score > best[0]):
                best = (score, prop, groups, missing)
        if best is None:
            return None
        return best[1], best[2], best[3]

    def key_dispatch(self, members: list[str], union: str, ind: str) -> list[str]:
        if len(members) == 1:
            return [f"{ind}return _structure_{members[0]}(d, path)"]
        order = self.fallback_order(members)
        out = []
        # A key every member requires: its absence fails them all, say so directly.
        for key in sorted(set.intersection(*(self.required(c) for c in members))):
            out += [
                f"{ind}if {pystr(key)} not in d:",
                f"{ind}    raise _missing({pystr(key)}, path)",
            ]
        checks: list[tuple[str, str]] = []
        remaining = list(members)
        while len(remaining) > 1:
            found = {}
            for c in remaining:
                others = set().union(*(self.declared(o) for o in remaining if o != c))
                unique = sorted(self.required(c) - others)
                if unique:
                    found[c] = unique[0]
            if not found:
                break
            for c in remaining:
                if c in found:
                    checks.append((f"{pystr(found[c])} in d", c))
            remaining = [c for c in remaining if c not in found]
        if len(remaining) > 1:
            for c in remaining:
                others = set().union(*(self.declared(o) for o in remaining if o != c))
                unique = sorted(self.declared(c) - others)
                if unique:
                    checks.append((" or ".join(f"{pystr(k)} in d" for k in unique), c))
        for cond, c in checks:
            rest = ", ".join(f"_structure_{o}" for o in order if o != c)
            out += [
                f"{ind}if {cond}:",
                f"{ind}    try:",
                f"{ind}        return _structure_{c}(d, path)",
                f"{ind}    except ValidationError as e:",
                f"{ind}        return _retry(d, path, e, ({rest},))",
            ]
        remaining = [c for c in order if c in remaining]
        if not remaining:
            out.append(f"{ind}raise _no_member({pystr(union)}, d, path)")
        elif len(remaining) == 1:
            out.append(f"{ind}return _structure_{remaining[0]}(d, path)")
        else:
            fns = ", ".join(f"_structure_{c}" for c in remaining)
            out.append(f"{ind}return _first_of(d, path, ({fns},))")
        return out

    def object_dispatch(self, members: list[str], union: str, ind: str) -> list[str]:
        out: list[str] = []
        members = list(members)
        for cls, prop, value in self.m.overrides:
            if cls in members:
                out += [
                    f"{ind}if d.get({pystr(prop)}) == {pystr(value)}:",
                    f"{ind}    return _structure_{cls}(d, path)",
                ]
                members.remove(cls)
        if not members:
            return [*out, f"{ind}raise _no_member({pystr(union)}, d, path)"]
        tag = self.find_tag(members) if len(members) > 1 else None
        if tag is None:
            return out + self.key_dispatch(members, union, ind)
        prop, groups, missing = tag
        values = tuple(sorted(groups))
        out.append(f"{ind}t = d.get({pystr(prop)}, _MISSING)")
        singles = {v: g[0] for v, g in groups.items() if len(g) == 1}
        if len(singles) >= DICT_DISPATCH_MIN:
            table = f"_TAGS_{union}"
            self.tag_tables.append(
                f"{table}: dict[str, Any] = {{"
                + ", ".join(f"{pystr(v)}: _structure_{singles[v]}" for v in sorted(singles))
                + "}"
            )
            out += [
                f"{ind}if isinstance(t, str):",
                f"{ind}    fn = {table}.get(t)",
                f"{ind}    if fn is not None:",
                f"{ind}        return fn(d, path)",
            ]
            groups = {v: g for v, g in groups.items() if len(g) > 1}
        # merge values that select the same members
        by_members: dict[tuple[str, ...], list[Any]] = {}
        for value in sorted(groups):
            by_members.setdefault(tuple(groups[value]), []).append(value)
        for group, vals in by_members.items():
            cond = " or ".join(f"t == {pystr(v)}" for v in vals)
            out.append(f"{ind}if {cond}:")
            out += self.key_dispatch(list(group), union, ind + "    ")
        if missing:
            out.append(f"{ind}if t is _MISSING:")
            out += self.key_dispatch(missing, union, ind + "    ")
        choices = ", ".join(pystr(v) for v in values)
        out.append(f"{ind}raise _tag_error(t, {pystr(prop)}, ({choices},), path)")
        return out

    def structure_union(self, name: str, target: TUnion) -> list[str]:
        members = self.m.flat_members(target)
        classes = [m.name for m in members if isinstance(m, TClass)]
        dicts = [m for m in members if isinstance(m, TDict)]
        lists = [m for m in members if isinstance(m, TList)]
        prims = [m for m in members if isinstance(m, (TPrim, TLit, TUnion))]
        if any(isinstance(m, (TAny, TAlias)) for m in members):
            raise GeneratorError(f"{name}: unexpected union member")
        if classes and dicts:
            raise GeneratorError(f"{name}: classes and plain objects in one union")
        out = ["", "", f"def _structure_{name}(d: Any, path: str) -> Any:"]
        if classes or dicts:
            out.append("    if isinstance(d, dict):")
            if classes:
                out += self.object_dispatch(classes, name, "        ")
            else:
                out += self.several("d", dicts, "        ")
        if lists:
            out.append("    if isinstance(d, list):")
            out += self.several("d", lists, "        ")
        if prims:
            cond = self.ok(TUnion(tuple(prims)), "d")
            out += [f"    if {cond}:", "        return d"]
        out.append(
            f"    raise _type_error({pystr(self.expected(TUnion(tuple(members))))}, d, path)"
        )
        return out

    def several(self, var: str, members: Sequence[T], ind: str) -> list[str]:
        """Return ``var`` structured as the first of ``members`` (same JSON type) it fits."""
        if len(members) == 1:
            return [*self.check(var, members[0], "path", ind, known=True), f"{ind}return {var}"]
        fns = ", ".join(self.value_fn(m) for m in members)
        return [f"{ind}return _first_of({var}, path, ({fns},))"]

    def structure_alias(self, alias: AliasDef) -> list[str]:
        target = alias.target
        assert target is not None
        if isinstance(target, TUnion) and self.m.is_union_alias(alias.name):
            return self.structure_union(alias.name, target)
        if isinstance(target, TClass):
            return []
        out = ["", "", f"def _structure_{alias.name}(d: Any, path: str) -> Any:"]
        out += self.check("d", target, "path", "    ")
        out.append("    return d")
        return out

    # -- aliases

    def alias_order(self) -> list[AliasDef]:
        deps: dict[str, set[str]] = {}

        def refs(t: T) -> Iterator[str]:
            if isinstance(t, TAlias):
                yield t.name
            elif isinstance(t, TList):
                yield from refs(t.item)
            elif isinstance(t, TDict):
                yield from refs(t.value)
            elif isinstance(t, TUnion):
                for m in t.members:
                    yield from refs(m)

        for name, alias in self.m.aliases.items():
            assert alias.target is not None, name
            deps[name] = set(refs(alias.target)) - {name}
        done: list[str] = []
        placed: set[str] = set()
        pending = sorted(deps)
        while pending:
            progress = False
            for name in list(pending):
                if deps[name] <= placed:
                    done.append(name)
                    placed.add(name)
                    pending.remove(name)
                    progress = True
            if not progress:
                raise GeneratorError(f"alias cycle among {pending}")
        return [self.m.aliases[n] for n in done]

    def alias_source(self, alias: AliasDef) -> list[str]:
        assert alias.target is not None
        return ["", f"{alias.name} = {self.ann(alias.target)}", *docstring(alias.doc, "")]

    # -- module

    def module(self) -> str:
        m = self.m
        version = m.version
        classes = [m.classes[n] for n in sorted(m.classes)]
        aliases = self.alias_order()
        public = sorted([c.name for c in classes] + [a.name for a in aliases])
        lines = [
            "# DO NOT EDIT — generated by generator/gen_types.py"
            f" from src/mcp_sansio/testing/schema/{version}.json",
            f'"""Typed MCP messages of protocol version {version}, generated from its schema.',
            "",
            "Every object of the schema is a frozen, slotted, keyword-only attrs class; unions",
            "are type aliases and enums ``Literal`` aliases. Optional fields default to",
            "``OMITTED``; ``extra`` holds the wire keys a class does not name. Structure and",
            "unstructure through :mod:`mcp_sansio.types`; ``METHODS`` maps each JSON-RPC method",
            "to its direction, kind, params and result types. See ``generator/gen_types.py``",
            "for the rules.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "from typing import Any, Final, Literal",
            "",
            "import attrs",
            "",
            "from mcp_sansio._errors import ValidationError",
            "from mcp_sansio._sentinels import OMITTED, Omitted",
            "from mcp_sansio.types._base import (",
            "    _MISSING,",
            "    MethodSpec,",
            "    _as_dict,",
            "    _at,",
            "    _bad_entry,",
            "    _bad_item,",
            "    _check_keys,",
            "    _entry_error,",
            "    _extra,",
            "    _first_of,",
            "    _invalid,",
            "    _is_int,",
            "    _is_number,",
            "    _item_error,",
            "    _key_error,",
            "    _missing,",
            "    _no_member,",
            "    _repr,",
            "    _retry,",
            "    _twin,",
            "    _tag_error,",
            "    _type_error,",
            "    _unstructure_value,",
            ")",
            "",
            "__all__ = [",
            *[f"    {pystr(n)}," for n in [*public, "METHODS", "VERSION"]],
            "]",
            "",
            f"VERSION: Final = {pystr(version)}",
            '"""The protocol version of this module."""',
        ]
        for cls in classes:
            lines += self.class_source(cls)
        lines += ["", "", "# Type aliases: unions, enums and plain JSON shapes."]
        for alias in aliases:
            lines += self.alias_source(alias)
        lines += [
            "",
            "",
            "# Mutable twins with the same slots: structuring fills one, then switches its class.",
            "",
        ]
        for cls in classes:
            lines.append(f"_M_{cls.name}: Any = _twin({cls.name})")
        lines.append("")
        for cls in classes:
            keys = ", ".join(pystr(f.wire) for f in cls.fields)
            lines.append(f"_K_{cls.name}: Final = frozenset(({keys}{',' if cls.fields else ''}))")
        body: list[str] = []
        for cls in classes:
            body += self.structure_class(cls)
            body += self.unstructure_class(cls)
        for alias in aliases:
            body += self.structure_alias(alias)
        for name in sorted(self.helpers):
            body += ["", "", *self.helpers[name]]
        lines += mark_failure_paths(body)
        lines += [
            "",
            "",
            "def _uv(x: Any) -> Any:",
            "    return _unstructure_value(x, _UNSTRUCTURE)",
            "",
            "",
        ]
        lines += sorted(self.tag_tables)
        lines += ["", "_STRUCTURE: Final[dict[Any, Any]] = {"]
        lines += [f"    {c.name}: _structure_{c.name}," for c in classes]
        lines += [
            f"    {a.name}: _structure_{a.name}," for a in aliases if m.is_union_alias(a.name)
        ]
        lines += ["}", "", "_UNSTRUCTURE: Final[dict[Any, Any]] = {"]
        lines += [f"    {c.name}: _unstructure_{c.name}," for c in classes]
        lines += ["}", "", "_DEFS: Final[dict[str, Any]] = {"]
        for name in sorted(m.defs):
            if m.def_kind[name] == "class":
                fn = f"_structure_{name}"
            else:
                target = m.aliases[name].target
                fn = f"_structure_{target.name if isinstance(target, TClass) else name}"
            lines.append(f"    {pystr(name)}: {fn},")
        lines += ["}", "", "METHODS: Final[dict[str, MethodSpec]] = {"]
        for spec in m.methods:
            lines += [
                f"    {pystr(spec.method)}: MethodSpec(",
                f"        method={pystr(spec.method)},",
                f"        direction={pystr(spec.direction)},",
                f"        kind={pystr(spec.kind)},",
                f"        params={spec.params},",
                f"        params_required={spec.params_required},",
                f"        result={spec.result},",
                "    ),",
            ]
        lines += [
            "}",
            '"""Each JSON-RPC method of this version: direction, kind, params and result types."""',
            "",
        ]
        return "\n".join(lines)


def mark_failure_paths(lines: list[str]) -> list[str]:
    """Append ``# pragma: no cover`` to the failure-path lines of generated functions.

    Every ``raise``, every ``except`` clause that only re-raises or retries another
    union member, the copy of a dict subclass and the retry calls. They are copies of a
    dozen templates that tests/test_types.py exercises one by one; counted one by one,
    the tens of thousands of copies would drown the coverage of the hand-written code.
    The success paths stay measured.
    """
    pragma = "  # pragma: no cover"
    out = []
    for i, line in enumerate(lines):
        code = line.strip()
        after = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if code.startswith(("raise ", "return _retry(", "d = _as_dict(")) or (
            code.startswith("except ") and after.startswith(("raise ", "return _retry("))
        ):
            line += pragma
        out.append(line)
    return out


# --------------------------------------------------------------------------- main


def module_name(version: str) -> str:
    return "v" + version.replace("-", "_")


def generate(version: str) -> tuple[str, list[str]]:
    schema = json.loads((SCHEMA_DIR / f"{version}.json").read_text(encoding="utf-8"))
    model = Model(version, schema)
    return Emitter(model).module(), model.notes


# ----------------------------------------------------------- the required-params table

_JSON_KINDS = ("array", "boolean", "integer", "number", "object", "string")


def _deref(defs: dict[str, Any], schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _shapes(defs: dict[str, Any], schema: Any) -> list[dict[str, Any]]:
    """The object schemas a (possibly union, possibly allOf) schema may take."""
    schema = _deref(defs, schema)
    if not isinstance(schema, dict):
        return []
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return [s for o in options for s in _shapes(defs, o)]
    return [merge_all_of(schema, defs) if "allOf" in schema else schema]


def _kind(defs: dict[str, Any], schema: Any) -> tuple[str, tuple[Any, ...] | None]:
    """``(kind, enum)`` of a property schema. ``kind`` is a JSON type, ``"id"`` (a string
    or an integer: request ids, progress tokens) or ``"any"``; ``enum`` the allowed
    values, or ``None``."""
    schema = _deref(defs, schema)
    if not isinstance(schema, dict):
        return "any", None
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        kinds = {_kind(defs, o)[0] for o in options}
        if kinds == {"string", "integer"}:
            return "id", None
        return (kinds.pop(), None) if len(kinds) == 1 else ("any", None)
    enum = tuple(schema["enum"]) if "enum" in schema else None
    if "const" in schema:
        enum = (schema["const"],)
    kind = schema.get("type")
    if isinstance(kind, list):
        return ("id" if set(kind) == {"string", "integer"} else "any"), enum
    if kind in _JSON_KINDS:
        return kind, enum
    if kind is None and "properties" in schema:
        return "object", enum
    return "any", enum


def required_params(schema: dict[str, Any]) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """method -> ``((key, kind, enum), ...)``: the params every message of that method
    must carry (``_meta`` aside), in key order; methods whose params have none are left
    out. Where params is a union, a key counts when every member requires it, and its
    kind is read from the first member."""
    defs = schema.get("definitions") or schema["$defs"]
    table: dict[str, tuple[tuple[Any, ...], ...]] = {}
    for union in ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"):
        if union not in defs:  # 2026-07-28: the server sends no requests
            continue
        for option in defs[union].get("anyOf") or [defs[union]]:
            message = _shapes(defs, option)[0]
            method = message["properties"]["method"]["const"]
            shapes = _shapes(defs, message["properties"].get("params"))
            if not shapes:
                continue
            keys = set.intersection(*(set(s.get("required", ())) for s in shapes)) - {"_meta"}
            rows = []
            for key in sorted(keys):
                kind, enum = _kind(defs, shapes[0].get("properties", {}).get(key, {}))
                rows.append((key, kind, enum))
            if rows:
                table[method] = tuple(rows)
    return dict(sorted(table.items()))


def params_module() -> str:
    """The source of ``mcp_sansio/_required_params.py``."""
    lines = [
        "# DO NOT EDIT — generated by generator/gen_types.py from the vendored schemas",
        '"""The params each method requires, per protocol version, read from the schemas.',
        "",
        "``REQUIRED_PARAMS[version][method]`` is a tuple of ``(key, kind, enum)``: ``kind``",
        'is a JSON type, ``"id"`` (a string or an integer) or ``"any"``; ``enum`` the',
        "allowed values or ``None``. A method whose params require nothing is absent.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping",
        "from typing import Final",
        "",
        "#: ``(key, kind, enum)``: one required param.",
        "Required = tuple[str, str, tuple[str, ...] | None]",
        "",
        "REQUIRED_PARAMS: Final[Mapping[str, Mapping[str, tuple[Required, ...]]]] = {",
    ]
    for version in VERSIONS:
        schema = json.loads((SCHEMA_DIR / f"{version}.json").read_text(encoding="utf-8"))
        lines.append(f"    {pystr(version)}: {{")
        for method, rows in required_params(schema).items():
            lines.append(f"        {pystr(method)}: (")
            for key, kind, enum in rows:
                values = "None" if enum is None else f"({', '.join(map(pyval, enum))},)"
                lines.append(f"            ({pystr(key)}, {pystr(kind)}, {values}),")
            lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def outputs() -> Iterable[tuple[Path, str, list[str]]]:
    for version in VERSIONS:
        source, notes = generate(version)
        yield OUT_DIR / f"{module_name(version)}.py", source, notes
    yield PARAMS_OUT, params_module(), []


def display(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if regenerating would change any file"
    )
    parser.add_argument("--quiet", action="store_true", help="do not print the notes")
    args = parser.parse_args(argv)
    changed = []
    for path, source, notes in outputs():
        if not args.quiet:
            for note in notes:
                print(f"{path.name}: {note}")
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != source:
            changed.append(path)
            if not args.check:
                path.write_text(source, encoding="utf-8")
    if args.check:
        for path in changed:
            print(f"out of date: {display(path)}", file=sys.stderr)
        return 1 if changed else 0
    for path in changed:
        print(f"wrote {display(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
