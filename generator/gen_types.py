#!/usr/bin/env python3
"""Generate ``src/mcp_sansio/types/v<version>.py`` (and ``src/mcp_sansio/_required_params.py``,
the params each method requires, which the Connection checks) from the vendored MCP schema
files.

Usage::

    .venv/bin/python generator/gen_types.py            # (re)write the modules
    .venv/bin/python generator/gen_types.py --check    # exit 1 if any module would change

The output is deterministic: it depends only on the vendored ``<version>.json`` schema
files and on the generator's modules (definitions and properties are processed in sorted order).

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
import sys
from collections.abc import Iterable
from pathlib import Path

if not __package__:  # run as a file (python generator/gen_types.py): the root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.emit_module import module_source
from generator.emit_params import params_module
from generator.emit_types import Emitter
from generator.model import OUT_DIR, PARAMS_OUT, ROOT, SCHEMA_DIR, VERSIONS, Model


def module_name(version: str) -> str:
    return "v" + version.replace("-", "_")


def generate(version: str) -> tuple[str, list[str]]:
    schema = json.loads((SCHEMA_DIR / f"{version}.json").read_text(encoding="utf-8"))
    model = Model(version, schema)
    return module_source(Emitter(model)), model.notes


def outputs() -> Iterable[tuple[Path, str, list[str]]]:
    for version in VERSIONS:
        source, notes = generate(version)
        yield OUT_DIR / f"{module_name(version)}.py", source, notes
    yield PARAMS_OUT, params_module(VERSIONS), []


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
