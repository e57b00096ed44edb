"""Import cost of mcp-sansio, next to a bare interpreter and the official SDK.

Each case runs in a fresh subprocess of the benchmark venv's interpreter (``python -I -c``,
so neither the working directory nor ``PYTHONPATH`` leak in). The parent measures the
process's wall time (start to exit); the child reports the time its import statement
took (``perf_counter`` around it) and its peak resident set size (``VmHWM`` from
``/proc/self/status``: ``ru_maxrss`` is not used on Linux, where a child may inherit the
parent's high-water mark across ``exec``). Every case is run once untimed (to write
bytecode caches), then ``runs`` times, round-robin across cases; medians are reported.
The "over bare" figures subtract the bare interpreter's medians (``-c pass`` plus the same
probe).

Run alone: ``python benchmarks/import_cost.py [--runs N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _env

__all__ = ["Case", "ImportResult", "cases", "measure_imports", "render"]

_PROBE: Final = """\
import time as _t
_t0 = _t.perf_counter()
{stmt}
_t1 = _t.perf_counter()
def _hwm():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((_t1 - _t0) * 1e3, _hwm())
"""


@dataclass(frozen=True)
class Case:
    key: str
    stmt: str
    note: str = ""


@dataclass(frozen=True)
class ImportResult:
    key: str
    stmt: str
    wall_ms: float
    """Median wall time of the whole process."""
    import_ms: float
    """Median time of the import statement itself, inside the child."""
    peak_rss_mib: float
    """Median peak RSS of the child."""
    wall_over_bare_ms: float
    rss_over_bare_mib: float
    runs: int
    note: str = ""


def _has(module: str) -> bool:
    """Whether ``module`` is installed as a real module (not an empty namespace package)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def cases() -> list[Case]:
    """What to measure here: always bare and mcp_sansio; the rest when installed."""
    out = [Case("bare", "pass"), Case("mcp_sansio", "import mcp_sansio")]
    if _has("mcp_sansio.types"):
        out.append(Case("mcp_sansio.types", "import mcp_sansio.types"))
    if _has("mcp"):
        out.append(Case("mcp.types", "import mcp.types"))
        out.append(Case("mcp", "import mcp"))
    return out


def _run_once(python: str, case: Case) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [python, "-I", "-c", _PROBE.format(stmt=case.stmt)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = (time.perf_counter() - t0) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"{case.stmt!r} failed:\n{proc.stderr.strip()}")
    import_ms, hwm_kib = proc.stdout.split()
    return wall, float(import_ms), int(hwm_kib) / 1024.0


def measure_imports(python: str = sys.executable, runs: int = 10) -> list[ImportResult]:
    """Measure every case of :func:`cases` (see the module docstring)."""
    todo = cases()
    samples: dict[str, list[tuple[float, float, float]]] = {c.key: [] for c in todo}
    for case in todo:
        _run_once(python, case)  # bytecode caches, page cache
    for _ in range(runs):
        for case in todo:
            samples[case.key].append(_run_once(python, case))

    def med(key: str, i: int) -> float:
        return statistics.median(s[i] for s in samples[key])

    bare_wall, bare_rss = med("bare", 0), med("bare", 2)
    return [
        ImportResult(
            key=c.key,
            stmt=c.stmt,
            wall_ms=med(c.key, 0),
            import_ms=med(c.key, 1),
            peak_rss_mib=med(c.key, 2),
            wall_over_bare_ms=med(c.key, 0) - bare_wall,
            rss_over_bare_mib=med(c.key, 2) - bare_rss,
            runs=runs,
            note=c.note,
        )
        for c in todo
    ]


#: The targets for ``import mcp_sansio``: over a bare interpreter.
TARGET_MS: Final = 150.0
TARGET_MIB: Final = 15.0


def _target(r: ImportResult) -> str:
    if r.key != "mcp_sansio":
        return ""
    ok_ms = r.wall_over_bare_ms <= TARGET_MS
    ok_mib = r.rss_over_bare_mib <= TARGET_MIB
    return (
        f"≤ {TARGET_MS:.0f} ms: {'met' if ok_ms else 'MISSED'}; "
        f"≤ {TARGET_MIB:.0f} MiB: {'met' if ok_mib else 'MISSED'}"
    )


def render(results: list[ImportResult]) -> str:
    """A Markdown table of the results."""
    lines = [
        "| `python -I -c` | wall ms | over bare ms | import stmt ms | peak RSS MiB "
        "| over bare MiB | target (over bare) |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]
    for r in results:
        over_ms = "—" if r.key == "bare" else f"{r.wall_over_bare_ms:+.1f}"
        over_mib = "—" if r.key == "bare" else f"{r.rss_over_bare_mib:+.1f}"
        stmt = "pass" if r.key == "bare" else r.stmt
        lines.append(
            f"| `{stmt}` | {r.wall_ms:.1f} | {over_ms} | {r.import_ms:.1f} "
            f"| {r.peak_rss_mib:.1f} | {over_mib} | {_target(r)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per case (median)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    _env.ensure()
    results = measure_imports(sys.executable, args.runs)
    print(
        f"Import cost, {args.runs} runs per case, median; "
        f"Python {sys.version.split()[0]} ({sys.executable})\n"
    )
    print(render(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
