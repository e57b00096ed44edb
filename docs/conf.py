"""Sphinx configuration for mcp-sansio's documentation.

Build: ``tox -e docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``).

Two small local additions keep the API page complete without hand-kept lists:

- the ``public-data`` directive documents the names in ``mcp_sansio.__all__`` that are
  neither classes nor functions (sentinels, constants, type aliases). ``automodule`` skips
  these, because their ``#:`` comments are in the private module that defines them, not in
  ``__init__``; the directive reads the comments from there.
- a ``missing-reference`` handler resolves a short name (``:class:`InvalidMessage```) used in
  a private module's docstring to the public name (``mcp_sansio.InvalidMessage``).
"""

from __future__ import annotations

import enum
import importlib
import sys
import typing
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

import mcp_sansio

# Pages include tables generated from the code at every build (never stale).
sys.path.insert(0, str(Path(__file__).parent))
import make_states

make_states.main()

project = "mcp-sansio"
author = "mcp-sansio developers"
copyright = "mcp-sansio developers"
release = mcp_sansio.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
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
        return repr(value).replace("typing.", "")
    return None


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


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-data", PublicData)
    app.connect("missing-reference", _resolve_short_name)
    return {"parallel_read_safe": True}
