"""A :class:`~generator.model.Model` written out as the source of one
``mcp_sansio/types/v<version>.py`` module."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from generator.model import (
    DICT_DISPATCH_MIN,
    AliasDef,
    ClassDef,
    GeneratorError,
    Model,
    T,
    TAlias,
    TAny,
    TClass,
    TDict,
    TList,
    TLit,
    TPrim,
    TUnion,
    docstring,
    json_pointer_key,
    pystr,
    pyval,
)

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
