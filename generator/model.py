"""The schema of one protocol version read into a model: its classes, aliases, unions and
methods (what ``gen_types.py`` describes), for :mod:`generator.emit_types` to write."""

from __future__ import annotations

import json
import keyword
import re
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
