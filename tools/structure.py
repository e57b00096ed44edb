"""The structure figures of ``src/mcp_sansio`` (and ``generator/``), from the code itself.

Run ``python tools/structure.py`` to print them; ``tests/test_structure.py`` holds each at its
target, and ``docs/make_layers.py`` draws the layers from the same import graph. Figures:

- **import cycles**: strongly connected groups of modules in the import graph (every
  ``import`` and ``from ... import`` anywhere in a module, inside functions and
  ``TYPE_CHECKING`` blocks too: a deferred import is still a dependency);
- **private names across packages**: ``from a.b import _name`` where ``_name`` is not a
  module and ``a.b`` is in another package (directory) than the importer. A package's private
  *modules* (``mcp_sansio._versions``) are the distribution's internal interfaces, which the
  layer contracts in ``pyproject.toml`` (``lint-imports``) order; a private *name* is one
  module's business;
- **long modules**: hand-written modules over :data:`MAX_LINES` lines (generated ones, which
  say so in their first lines, are not counted);
- **version compares**: comparisons with a protocol version's date string (``"2025-06-18"``) or
  with a member of ``Era`` (or a module-level name bound to one), outside the modules that
  hold the version tables: each is a branch on era or version that belongs in a table;
- **lines per runtime**: each runtime's modules, its HTTP binding included.

Only the standard library: it runs wherever the tests do.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "src", ROOT)  # (the import root of each tree)
TREES = (ROOT / "src" / "mcp_sansio", ROOT / "generator")

MAX_LINES = 800
"""The most lines a hand-written module may have (h11's largest is 659)."""

TABLE_MODULES = frozenset({"mcp_sansio._versions"})
"""The modules that hold the version tables: the only ones that may compare versions or eras."""

RUNTIMES = ("asyncio", "trio", "blocking")

_GENERATED = re.compile(r"generated|do not edit", re.IGNORECASE)
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class Module:
    """One module: its dotted name, file, lines and parsed tree."""

    name: str
    path: Path
    is_package: bool
    lines: int
    generated: bool
    tree: ast.Module
    imports: set[str] = field(default_factory=set)


def _name_of(path: Path) -> tuple[str, bool]:
    for base in SOURCES:
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] in ("mcp_sansio", "generator"):
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            return ".".join(parts), is_package
    raise ValueError(path)


def modules() -> dict[str, Module]:
    """Every module of the trees, by dotted name, with its imports resolved."""
    found: dict[str, Module] = {}
    for tree_root in TREES:
        for path in sorted(tree_root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            name, is_package = _name_of(path)
            head = "\n".join(text.splitlines()[:3])
            found[name] = Module(
                name=name,
                path=path,
                is_package=is_package,
                lines=text.count("\n") + (not text.endswith("\n") and bool(text)),
                generated=bool(_GENERATED.search(head)),
                tree=ast.parse(text, str(path)),
            )
    for module in found.values():
        module.imports = {target for target, _ in _imports(module, found)}
    return found


def _package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def _resolve(module: Module, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _imports(module: Module, known: dict[str, Module]) -> Iterator[tuple[str, str | None]]:
    """``(module imported, name imported from it or None)`` for each import in ``module``,
    keeping only modules of the trees (a name that is a submodule counts as that module)."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target:
                    yield target, None
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node.level, node.module)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in known:
                    yield sub, None
                elif source in known:
                    yield source, alias.name


def cycles(found: dict[str, Module]) -> list[list[str]]:
    """The import cycles: each strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so that deep graphs cannot overflow
        nonlocal counter
        work = [(start, iter(sorted(found[start].imports)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target == node or target not in found:
                    continue
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(found[target].imports))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for name in sorted(found):
        if name not in index:
            visit(name)
    return sorted(groups)


def private_imports(found: dict[str, Module]) -> list[str]:
    """``importer: from source import _name`` for each private name imported across
    packages."""
    out = []
    for module in found.values():
        for source, name in _imports(module, found):
            if name is None or not name.startswith("_") or name.startswith("__"):
                continue
            if _package_of(found[source]) != _package_of(module):
                out.append(f"{module.name}: from {source} import {name}")
    return sorted(set(out))


def long_modules(found: dict[str, Module]) -> list[tuple[str, int]]:
    """The hand-written modules over :data:`MAX_LINES` lines, longest first."""
    long = [(m.name, m.lines) for m in found.values() if not m.generated and m.lines > MAX_LINES]
    return sorted(long, key=lambda item: -item[1])


def _is_version_literal(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(_VERSION.match(node.value))
    )


def _era_aliases(tree: ast.Module) -> frozenset[str]:
    """The module-level names bound to an ``Era`` member (``_ERA_STATELESS: Final = Era.X``,
    kept for speed), which compare as the member does."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _is_era_member(node.value, frozenset()):
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def _is_era_member(node: ast.expr, aliases: frozenset[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in aliases
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and (node.value.id == "Era")
    )


def _operands(node: ast.Compare) -> Iterable[ast.expr]:
    yield node.left
    for comparator in node.comparators:
        if isinstance(comparator, (ast.Tuple, ast.List, ast.Set)):
            yield from comparator.elts
        else:
            yield comparator


def version_compares(found: dict[str, Module]) -> list[str]:
    """``module:line`` of each comparison with a version string or an ``Era`` member outside
    :data:`TABLE_MODULES`."""
    out = []
    for module in found.values():
        if module.name in TABLE_MODULES or module.generated:
            continue
        aliases = _era_aliases(module.tree)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Compare) and any(
                _is_version_literal(o) or _is_era_member(o, aliases) for o in _operands(node)
            ):
                out.append(f"{module.name}:{node.lineno}")
    return sorted(out, key=lambda s: (s.split(":")[0], int(s.split(":")[1])))


def runtime_lines(found: dict[str, Module]) -> dict[str, int]:
    """The lines of each runtime: its module or package, and its HTTP binding wherever it
    is filed (``http/_<runtime>_*.py`` before the redesign)."""
    lines = dict.fromkeys(RUNTIMES, 0)
    for module in found.values():
        parts = module.name.split(".")
        for runtime in RUNTIMES:
            if parts[:2] == ["mcp_sansio", runtime] or (
                parts[:2] == ["mcp_sansio", "http"] and parts[-1].startswith(f"_{runtime}_")
            ):
                lines[runtime] += module.lines
    return lines


def report() -> str:
    """The figures, as text."""
    found = modules()
    out = []
    groups = cycles(found)
    out.append(f"import cycles: {len(groups)}")
    out += [f"  {' <-> '.join(group)}" for group in groups]
    private = private_imports(found)
    out.append(f"private names imported across packages: {len(private)}")
    out += [f"  {line}" for line in private]
    long = long_modules(found)
    out.append(f"hand-written modules over {MAX_LINES} lines: {len(long)}")
    out += [f"  {name}: {lines}" for name, lines in long]
    compares = version_compares(found)
    out.append(f"version or era compares outside the tables: {len(compares)}")
    by_module: dict[str, int] = {}
    for where in compares:
        by_module[where.split(":")[0]] = by_module.get(where.split(":")[0], 0) + 1
    out += [f"  {name}: {n}" for name, n in sorted(by_module.items())]
    lines = runtime_lines(found)
    out.append(
        "lines per runtime (its HTTP binding included): "
        + ", ".join(f"{runtime} {n}" for runtime, n in lines.items())
    )
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
