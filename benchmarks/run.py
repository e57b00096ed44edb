"""mcp-sansio benchmarks: per-message decode/encode, a round trip, and import cost.

Everything is measured side by side in one process, in one run, and reported as ratios:
orjson alone on the same bytes (the floor), mcp-sansio (envelope only, and fully typed),
and the official Python SDK (``mcp`` on PyPI, pinned in ``_env.SDK_PIN``) doing its own
per-message work. See ``_columns`` for exactly what each column does.

    python benchmarks/run.py [--quick] [--compiled] [--json FILE] [--no-import]

Runs from the dev venv or a bare ``python3``: it first re-executes itself inside
``benchmarks/.sdk-venv`` (created and cached by ``_env``), where both libraries are
installed. ``--quick`` takes few, short measurements (a CI smoke run).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _env

if __name__ == "__main__":
    # Before anything heavy is imported: this may replace the process.
    _env.ensure()

import adapters
import http_bench
import import_cost
from _columns import COLUMNS, NotAvailable
from _messages import PROTOCOL_VERSION, SAMPLES, Sample
from _roundtrip import ROUND_TRIP_ROWS
from _timing import Settings, Timing, measure_group

Loop = Callable[[int], object]

FULL: Final = Settings(target_s=0.05, repeats=15, warmup_s=0.05)
QUICK: Final = Settings(target_s=0.01, repeats=5, warmup_s=0.005)

# Targets (from the "Fast" section of the design and the Foundation / Connection issues).
SMALL_DECODE_MAX_X_FLOOR: Final = 4.0
SMALL_DECODE_MIN_X_SDK: Final = 4.0
SMALL_ENCODE_MIN_X_SDK: Final = 8.0
TOOLS_LIST_DECODE_MAX_X_FLOOR: Final = 3.0
ROUND_TRIP_MAX_X_FLOOR: Final = 5.0


@dataclass
class Cell:
    """One measurement, or why there is none."""

    timing: Timing | None = None
    na: str | None = None
    error: str | None = None

    @property
    def us(self) -> float | None:
        return self.timing.median_us if self.timing else None

    def to_json(self) -> dict[str, Any]:
        if self.timing is not None:
            return {
                "median_us": self.timing.median_us,
                "min_us": self.timing.min_ns / 1000,
                "max_us": self.timing.max_ns / 1000,
                "n": self.timing.n,
                "repeats": self.timing.repeats,
            }
        return {"na": self.na} if self.na else {"error": self.error}


@dataclass
class Target:
    name: str
    value: float | None
    """The measured ratio, or None when a column is missing."""
    limit: float
    kind: str
    """"max": value must be <= limit; "min": value must be >= limit."""
    unit: str = "x"

    @property
    def status(self) -> str:
        if self.value is None:
            return "n/a"
        ok = self.value <= self.limit if self.kind == "max" else self.value >= self.limit
        return "met" if ok else "MISSED"

    def describe(self) -> str:
        sign = "≤" if self.kind == "max" else "≥"
        got = "n/a" if self.value is None else f"{self.value:.1f}{self.unit}"
        return f"{self.name} {sign} {self.limit:g}{self.unit}: {self.status} ({got})"


@dataclass
class Report:
    errors: int = 0
    results: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)


# --------------------------------------------------------------------------- helpers


def _run_group(
    builders: Mapping[str, Callable[[], Loop]], settings: Settings, report: Report, what: str
) -> dict[str, Cell]:
    """Build each loop (n/a or error when it cannot be), then measure them side by side."""
    cells: dict[str, Cell] = {}
    loops: dict[str, Loop] = {}
    for key, build in builders.items():
        try:
            loops[key] = build()
        except NotAvailable as exc:
            cells[key] = Cell(na=str(exc))
        except Exception as exc:
            cells[key] = _error(report, f"{what} {key}", exc)
    timings, errors = measure_group(loops, settings)
    for key in loops:
        if key in errors:
            cells[key] = _error(report, f"{what} {key}", errors[key])
        else:
            cells[key] = Cell(timing=timings[key])
    text = ", ".join(f"{k} {_cell_text(cells[k], None, is_floor=True)}" for k in builders)
    print(f"[benchmarks] {what}: {text}", file=sys.stderr, flush=True)
    return {key: cells[key] for key in builders}


def _error(report: Report, what: str, exc: BaseException) -> Cell:
    report.errors += 1
    print(f"[benchmarks] error in {what}:", file=sys.stderr)
    traceback.print_exception(exc)
    return Cell(error=f"{type(exc).__name__}: {exc}")


def _fmt_us(us: float) -> str:
    if us < 10:
        return f"{us:.2f}"
    if us < 1000:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def _fmt_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.2f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _cell_text(cell: Cell, floor: float | None, *, is_floor: bool = False) -> str:
    if cell.timing is None:
        return cell.na or "error (see stderr)"
    text = _fmt_us(cell.timing.median_ns / 1000)
    if is_floor:
        return text
    r = _ratio(cell.us, floor)
    return f"{text} ({r:.1f}x)" if r is not None else text


def _speedup_text(sdk: Cell, ours: Cell) -> str:
    r = _ratio(sdk.us, ours.us)
    return f"{r:.1f}x" if r is not None else "n/a"


# --------------------------------------------------------------------------- per message


def bench_messages(settings: Settings, report: Report) -> list[str]:
    out: list[str] = []
    rows: dict[str, dict[str, list[str]]] = {"decode": {}, "encode": {}}
    data: list[dict[str, Any]] = []
    for sample in SAMPLES:
        entry: dict[str, Any] = {
            "key": sample.key,
            "label": sample.label,
            "bytes": len(sample.line),
        }
        for op in ("decode", "encode"):
            builders = {
                col.key: functools.partial(col.decoder if op == "decode" else col.encoder, sample)
                for col in COLUMNS
            }
            cells = _run_group(builders, settings, report, f"{op} {sample.key}")
            entry[op] = {k: c.to_json() for k, c in cells.items()}
            rows[op][sample.key] = _message_row(sample, op, cells, report)
        data.append(entry)
    report.results["messages"] = data

    for op, title in (
        ("decode", "Decode: one line of bytes → message"),
        ("encode", "Encode: message → one line of bytes"),
    ):
        out.append(f"### {title} (µs per message, median; x the floor in parentheses)\n")
        out.append(
            "| message | size | orjson (floor) | mcp-sansio envelope | mcp-sansio typed "
            "| official SDK | typed vs SDK | envelope vs SDK | target |"
        )
        out.append("|---|--:|--:|--:|--:|--:|--:|--:|---|")
        out.extend("| " + " | ".join(r) + " |" for r in rows[op].values())
        out.append("")
    return out


def _message_row(sample: Sample, op: str, cells: dict[str, Cell], report: Report) -> list[str]:
    floor = cells["floor"].us
    typed, sdk = cells["typed"], cells["sdk"]
    targets: list[Target] = []
    if op == "decode" and sample.small:
        targets.append(
            Target(
                f"{sample.label}: typed decode vs floor",
                _ratio(typed.us, floor),
                SMALL_DECODE_MAX_X_FLOOR,
                "max",
            )
        )
        targets.append(
            Target(
                f"{sample.label}: typed decode, times faster than SDK",
                _ratio(sdk.us, typed.us),
                SMALL_DECODE_MIN_X_SDK,
                "min",
            )
        )
    if op == "encode" and sample.small:
        targets.append(
            Target(
                f"{sample.label}: typed encode, times faster than SDK",
                _ratio(sdk.us, typed.us),
                SMALL_ENCODE_MIN_X_SDK,
                "min",
            )
        )
    if op == "decode" and sample.key == "tools_list_50":
        targets.append(
            Target(
                f"{sample.label}: typed decode vs floor",
                _ratio(typed.us, floor),
                TOOLS_LIST_DECODE_MAX_X_FLOOR,
                "max",
            )
        )
    report.targets.extend(targets)
    short = []
    for t in targets:
        sign = "≤" if t.kind == "max" else "≥"
        what = "floor" if "vs floor" in t.name else "faster than SDK"
        short.append(f"{sign} {t.limit:g}x {what}: {t.status}")
    return [
        sample.label,
        _fmt_size(len(sample.line)),
        _cell_text(cells["floor"], floor, is_floor=True),
        _cell_text(cells["envelope"], floor),
        _cell_text(typed, floor),
        _cell_text(sdk, floor),
        _speedup_text(sdk, typed),
        _speedup_text(sdk, cells["envelope"]),
        "; ".join(short),
    ]


# --------------------------------------------------------------------------- round trip


def bench_round_trip(settings: Settings, report: Report) -> list[str]:
    cells = _run_group(
        {row.key: row.build for row in ROUND_TRIP_ROWS}, settings, report, "round trip"
    )
    report.results["round_trip"] = {k: c.to_json() for k, c in cells.items()}
    floor, sdk = cells["floor"].us, cells["sdk"]
    target = Target(
        "tools/call round trip through two Connections vs floor",
        _ratio(cells["sansio"].us, floor),
        ROUND_TRIP_MAX_X_FLOOR,
        "max",
    )
    report.targets.append(target)
    out = [
        "### Round trip: `tools/call` request + 200 B result, bytes → event → bytes "
        "(µs per round trip, median; x the floor)\n",
        "| path | µs | vs SDK | round trips/s | target |",
        "|---|--:|--:|--:|---|",
    ]
    for row in ROUND_TRIP_ROWS:
        cell = cells[row.key]
        rate = f"{1e6 / cell.us:,.0f}" if cell.us else "n/a"
        vs_sdk = "—" if row.key == "sdk" else _speedup_text(sdk, cell)
        tgt = f"≤ {target.limit:g}x floor: {target.status}" if row.key == "sansio" else ""
        out.append(
            f"| {row.title} | {_cell_text(cell, floor, is_floor=row.key == 'floor')} "
            f"| {vs_sdk} | {rate} | {tgt} |"
        )
    out.append("")
    return out


# --------------------------------------------------------------------------- adapters


def bench_adapters(quick: bool, report: Report) -> list[str]:
    """Whole clients and servers, in process and over stdio, and server startup (adapters.py)."""
    result = adapters.measure(quick)
    report.errors += result.errors
    report.results.update(result.results)
    report.targets += [Target(*t) for t in result.targets]
    return result.lines


def bench_http(quick: bool, report: Report) -> list[str]:
    """tools/call round trips over Streamable HTTP, ours and the SDK's (http_bench.py)."""
    result = http_bench.measure(quick)
    report.errors += result.errors
    report.results.update(result.results)
    report.targets += [Target(*t) for t in result.targets]
    return result.lines


# --------------------------------------------------------------------------- import cost


def bench_imports(runs: int, report: Report) -> list[str]:
    try:
        results = import_cost.measure_imports(sys.executable, runs)
    except Exception as exc:
        report.errors += 1
        traceback.print_exc()
        return [f"### Import cost\n\nerror: {exc}\n"]
    report.results["import"] = [asdict(r) for r in results]
    for r in results:
        if r.key == "mcp_sansio":
            ms = Target(
                "import mcp_sansio, wall time over bare",
                r.wall_over_bare_ms,
                import_cost.TARGET_MS,
                "max",
                " ms",
            )
            mib = Target(
                "import mcp_sansio, peak RSS over bare",
                r.rss_over_bare_mib,
                import_cost.TARGET_MIB,
                "max",
                " MiB",
            )
            report.targets.extend([ms, mib])
    return [
        f"### Import cost (fresh `python -I -c` subprocesses, median of {runs}; "
        "wall = process start to exit, peak RSS = VmHWM)\n",
        import_cost.render(results),
        "",
    ]


# --------------------------------------------------------------------------- environment


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _build() -> str:
    """Which build of mcp-sansio's core is measured (pure Python, or compiled: --compiled)."""
    try:
        from mcp_sansio._version import build
    except ImportError:  # an mcp-sansio from before builds were told apart
        return "pure Python"
    return build()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_revision() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(_env.REPO), *args], capture_output=True, text=True, check=False
        ).stdout.strip()

    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "src")
    return rev + (" + uncommitted changes in src/" if dirty else "")


def environment(settings: Settings, quick: bool) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "mcp_sansio": f"{_version('mcp-sansio')} @ {_git_revision()}",
        "build": _build(),
        "sdk": f"mcp {_version('mcp')} (mcp-types {_version('mcp-types')}, "
        f"pydantic {_version('pydantic')}, pydantic-core {_version('pydantic-core')})",
        "orjson": _version("orjson"),
        "attrs_cattrs": f"attrs {_version('attrs')}, cattrs {_version('cattrs')}",
        "mode": "quick" if quick else "full",
        "settings": asdict(settings),
        "protocol_version": PROTOCOL_VERSION,
    }


def _env_lines(env: dict[str, Any]) -> list[str]:
    s = env["settings"]
    return [
        f"## mcp-sansio benchmarks ({env['mode']} run, {env['date']})\n",
        f"- Python: {env['python']} on {env['platform']}",
        f"- Machine: {env['cpu']}, {env['cpus']} CPUs",
        f"- mcp-sansio {env['mcp_sansio']}, **{env['build']}**; orjson {env['orjson']}; "
        f"{env['attrs_cattrs']}",
        f"- Official SDK: {env['sdk']}",
        f"- Method: `time.perf_counter_ns`, loop count calibrated to ~{s['target_s']} s per "
        f"repeat, warm-up, median of {s['repeats']} repeats, GC disabled while timing; "
        f"typed = protocol version {env['protocol_version']}",
        "",
    ]


_NOTES: Final = """\
Columns: **orjson (floor)** = `orjson.loads(line)` / `orjson.dumps(obj)` on the same message.
**envelope** = `mcp_sansio._jsonrpc.decode(line)` / `encode(event)` (payload stays a dict).
**typed** = envelope decode + `mcp_sansio.types.structure_params/structure_result`; encode =
`unstructure(typed)` + envelope encode. **official SDK** = `jsonrpc_message_adapter.validate_json`
+ `<Params or Result>.model_validate(..., by_name=False)`; encode = `model_dump(by_alias, json,
exclude_none)` of the typed message, wrapped in `JSONRPCRequest/Notification/Response`,
`model_dump_json(by_alias, exclude_unset)` + newline, as bytes (what SDK 2.3.0's session,
dispatcher and stdio transport do; its extra `validate_server_result` pass on results is left
out, in its favour). "typed vs SDK" = SDK time ÷ typed time.
"""


def summary(label: str, targets: list[Target], errors: int) -> str:
    """The run's last line: how many targets were checked, which were missed, and how many
    could not be judged (a column was n/a) or measured (an error)."""
    missed = [t.name for t in targets if t.status == "MISSED"]
    unjudged = sum(t.status == "n/a" for t in targets)
    text = f"{label}: {len(targets)} target{'' if len(targets) == 1 else 's'}, {len(missed)} missed"
    if missed:
        text += f" ({'; '.join(missed)})"
    if unjudged:
        text += f", {unjudged} n/a"
    if errors:
        text += f"; {errors} measurement(s) failed (see stderr)"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="mcp-sansio vs orjson vs the official SDK, side by side."
    )
    parser.add_argument("--quick", action="store_true", help="few, short measurements (CI)")
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="measure the compiled core (mypyc) in benchmarks/.sdk-venv-compiled (see _env)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write figures as JSON")
    parser.add_argument("--no-import", action="store_true", help="skip the import cost")
    parser.add_argument("--no-adapters", action="store_true", help="skip adapters.py's table")
    parser.add_argument("--no-http", action="store_true", help="skip http_bench.py's tables")
    args = parser.parse_args(argv)
    _env.ensure()
    if not _env.in_bench_venv():
        print("[benchmarks] not in the benchmark venv: SDK columns may be n/a", file=sys.stderr)

    settings = QUICK if args.quick else FULL
    report = Report()
    started = time.perf_counter()
    env = environment(settings, args.quick)
    lines = _env_lines(env)
    lines += bench_messages(settings, report)
    lines += bench_round_trip(settings, report)
    if not args.no_adapters:
        lines += bench_adapters(args.quick, report)
    if not args.no_http:
        lines += bench_http(args.quick, report)
    if not args.no_import:
        lines += bench_imports(3 if args.quick else 10, report)
    lines.append("### Targets\n")
    lines += [f"- {t.describe()}" for t in report.targets]
    lines += ["", _NOTES]
    elapsed = time.perf_counter() - started
    print("\n".join(lines))
    print(
        f"(measured in {elapsed:.0f} s; command: python benchmarks/run.py"
        f"{' --quick' if args.quick else ''}{' --compiled' if _env.COMPILED else ''})"
    )

    if args.json:
        report.results["environment"] = env
        report.results["targets"] = [{**asdict(t), "status": t.status} for t in report.targets]
        args.json.write_text(json.dumps(report.results, indent=2) + "\n")
    if report.errors:
        print(f"[benchmarks] {report.errors} measurement(s) failed", file=sys.stderr, flush=True)
    label = "bench-smoke" if args.quick else "benchmarks"
    print(summary(label, report.targets, report.errors), flush=True)
    return 1 if report.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
