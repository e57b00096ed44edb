"""Sphinx configuration for mcp-sansio's documentation.

Build: ``tox -e docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``).

Small local additions keep the API page complete and readable without hand-kept lists, and
the command line's page generated from its parser:

- the ``public-data`` directive documents the names in ``mcp_sansio.__all__`` that are
  neither classes nor functions (sentinels, constants, type aliases). ``automodule`` skips
  these, because their ``#:`` comments are in the private module that defines them, not in
  ``__init__``; the directive reads the comments from there.
- an ``autodoc-before-process-signature`` handler shows the defaults of an attrs class's
  generated ``__init__`` as written in the class body (``versions: ... = ALL_VERSIONS``),
  where ``autodoc_preserve_defaults`` would show attrs' generated source
  (``attr_dict['versions'].default``, or ``NOTHING`` for a factory).
- the ``argparse`` directive (sphinx-argparse, on cli.rst) keeps the parser's help text as
  written: Sphinx's smart quotes would turn its ``--tcp`` into an en dash and "tcp".
- a ``missing-reference`` handler resolves a short name (``:class:`InvalidMessage```) used in
  a private module's docstring to the public name (``mcp_sansio.InvalidMessage``).
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles
from sphinxarg.ext import ArgParseDirective  # type: ignore[import-untyped]

import mcp_sansio

# Pages include tables generated from the code at every build (never stale).
sys.path.insert(0, str(Path(__file__).parent))
import make_layers
import make_refusals
import make_rules
import make_states

make_states.main()
make_rules.main()
make_refusals.main()
make_layers.main()

project = "mcp-sansio"
author = "mcp-sansio developers"
copyright = "mcp-sansio developers"
release = mcp_sansio.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
    # cli.rst's options, from the argument parser itself (sphinx-argparse).
    "sphinxarg.ext",
]

# _generated/ holds pieces that pages include (make_states.py writes them), not pages.
exclude_patterns = ["_build", "_generated"]
root_doc = "index"

# Every cross-reference must resolve; -W turns a miss into a failure.
nitpicky = True
nitpick_ignore_regex = [
    # The standard library and third-party packages: the build runs offline, so there is
    # no intersphinx inventory to link them to.
    (
        r"py:.*",
        r"(enum|collections|collections\.abc|types|typing|attrs|attr|cattrs|orjson"
        r"|asyncio|os|socket|subprocess|selectors|re|trio|io|hypothesis|pathlib)\..*",
    ),
    # Type variables (``T``) are not documented objects.
    (r"py:class", r"mcp_sansio(\.\w+)*\.[A-Z]"),
    # Private classes named in signatures (the type of a sentinel such as ``END``).
    (r"py:class", r"mcp_sansio(\.\w+)*\._[A-Za-z]\w*"),
    # A dataclass field typed ``tuple[str, ...] | None`` is split at its comma by the
    # attribute's type parser, which then looks up ``tuple[str`` (a builtin, not ours).
    (r"py:class", r"tuple\[str"),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

html_theme = "alabaster"
html_title = "mcp-sansio"


def _defining_comment(name: str, value: object) -> list[str]:
    """The ``#:`` comment (or string after the assignment) of ``name`` in the private
    mcp_sansio module that assigns it."""
    for modname in sorted(sys.modules):
        if not modname.startswith("mcp_sansio."):
            continue
        module = sys.modules[modname]
        if getattr(module, name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:  # a module without source: try the next one
            continue
        comment = docs.get(("", name))
        if comment:
            return [line for line in comment if line is not None]
    return []


def _value_text(value: object) -> str | None:
    if isinstance(value, enum.Enum):
        return None
    if isinstance(value, (int, str)):
        return repr(value)
    if typing.get_origin(value) is not None:
        # ``Request | Notification``, not ``mcp_sansio._events.Request | ...``.
        return re.sub(r"\b(typing|mcp_sansio(\.\w+)*)\.", "", repr(value))
    return None


class _Shown:
    """A default value that renders as the source text it was written as."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _callee(func: ast.expr) -> str:
    """``field`` for ``attrs.field`` or ``field``."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _factory_text(factory: ast.expr) -> str:
    text = ast.unparse(factory)
    return {"dict": "{}", "list": "[]", "tuple": "()"}.get(text, f"{text}()")


def _default_text(value: ast.expr) -> str | None:
    """The default that a field's right-hand side gives, as source text (None: no default)."""
    if isinstance(value, ast.Call) and _callee(value.func) == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _default_text(keyword.value)
            if keyword.arg == "factory":
                return _factory_text(keyword.value)
        return None
    if isinstance(value, ast.Call) and _callee(value.func) == "Factory" and value.args:
        return _factory_text(value.args[0])
    return ast.unparse(value)


def _written_defaults(cls: type) -> dict[str, str]:
    """Field name -> its default as written in the class bodies (the bases' first)."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not attrs.has(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
        for stmt in body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                text = _default_text(stmt.value)
                if text is not None:
                    out[stmt.target.id] = text
    return out


def _attrs_defaults(app: Sphinx, obj: Any, bound_method: bool) -> None:
    """Give an attrs-generated ``__init__`` the defaults written in its class (see the module
    docstring); anything else is left as it is."""
    code = getattr(obj, "__code__", None)
    if code is None or not code.co_filename.startswith("<attrs generated"):
        return
    owner: Any = sys.modules.get(obj.__module__)
    for part in obj.__qualname__.split(".")[:-1]:
        owner = getattr(owner, part, None)
    if not (isinstance(owner, type) and attrs.has(owner)):
        return
    fields = {field.alias: field for field in attrs.fields(owner)}
    written = _written_defaults(owner)
    signature = inspect.signature(obj)
    parameters = []
    for param in signature.parameters.values():
        field = fields.get(param.name)
        if field is not None and param.default is not param.empty:
            text = written.get(field.name)
            factory = getattr(field.default, "factory", None)  # an attrs.Factory
            if text is None and factory is not None:
                text = f"{getattr(factory, '__name__', 'factory')}()"
            param = param.replace(default=_Shown(text or repr(field.default)))
        parameters.append(param)
    obj.__signature__ = signature.replace(parameters=parameters)


class PublicData(SphinxDirective):
    """Document the data names of a package's ``__all__`` (``mcp_sansio`` unless the
    directive names another; see the module docstring)."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0] if self.arguments else "mcp_sansio"
        package = importlib.import_module(modname)
        own_docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        lines = StringList()
        for name in package.__all__:
            value = getattr(package, name)
            if isinstance(value, type) or (callable(value) and not typing.get_origin(value)):
                continue  # classes and functions: automodule documents them
            if ("", name) in own_docs:
                continue  # documented in __init__ itself: automodule documents it
            doc = _defining_comment(name, value)
            if not doc and name == "__version__":
                doc = ["The version of mcp-sansio, as a string."]
            lines.append(f".. py:data:: {name}", "<public-data>")
            lines.append(f"   :module: {modname}", "<public-data>")
            text = _value_text(value)
            if text is not None:
                lines.append(f"   :value: {text}", "<public-data>")
            lines.append("", "<public-data>")
            for line in doc or ["(Not documented yet.)"]:
                lines.append(f"   {line}" if line else "", "<public-data>")
            lines.append("", "<public-data>")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, lines, node)
        return list(node.children)


# The packages whose ``__all__`` names the resolver below tries, in order.
_PUBLIC = [mcp_sansio, importlib.import_module("mcp_sansio.testing")]


def _resolve_short_name(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve ``InvalidMessage`` written in a private module to ``mcp_sansio.InvalidMessage``
    (and ``RULES`` to ``mcp_sansio.testing.RULES``, ``InvalidMessage.message`` to
    ``mcp_sansio.InvalidMessage.message``)."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~")
    for package in _PUBLIC:
        head, _, attr = target.partition(".")  # ``InvalidMessage.message``
        name = head if head in package.__all__ else target.rsplit(".", 1)[-1]
        if name not in package.__all__:
            continue
        full = f"{package.__name__}.{name}" + (f".{attr}" if name == head and attr else "")
        if full == target:
            continue
        new = node.deepcopy()
        new["reftarget"] = full
        found = env.get_domain("py").resolve_xref(
            env, node["refdoc"], app.builder, node["reftype"], full, new, contnode
        )
        if found is not None:
            return found
    return None


class VerbatimArgParse(ArgParseDirective):  # type: ignore[misc]
    """sphinx-argparse's ``argparse`` directive, with the parser's help kept as written: no
    smart quotes, which would make ``--tcp`` and ``--`` in a description en dashes."""

    def run(self) -> list[nodes.Node]:
        result: list[nodes.Node] = super().run()
        for node in result:
            if isinstance(node, nodes.Element):
                node["support_smartquotes"] = False
        return result


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-data", PublicData)
    app.add_directive("argparse", VerbatimArgParse, override=True)
    app.connect("missing-reference", _resolve_short_name)
    app.connect("autodoc-before-process-signature", _attrs_defaults)
    return {"parallel_read_safe": True}
