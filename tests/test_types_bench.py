"""Speed and import-cost measurements of ``mcp_sansio.types`` (run as a script).

``python tests/test_types_bench.py`` prints, for every version:

- typed decode (``orjson.loads`` + ``structure``) of a small ``tools/call`` params
  and of a ``tools/list`` result with 50 tools, against ``orjson.loads`` alone on
  the same bytes (best of several repeats, as a ratio; the target is <= 3x);
- the same for encode (``unstructure`` + ``orjson.dumps``) against ``orjson.dumps``
  of the plain dict;
- ``import mcp_sansio.types`` and of each version module, cold, in a fresh
  interpreter: median wall time and RSS growth over several runs
  (``--import-runs N``; bytecode caching as the environment sets it).

Under pytest, only the payload builders and one decode per version run (a smoke test:
the numbers are not asserted, the machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import orjson

from mcp_sansio import types as mcp_types


def call_params(version: str) -> dict[str, Any]:
    """A small ``tools/call`` params object of ``version``."""
    params: dict[str, Any] = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    if version >= "2026-07-28":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return params


def tool(i: int) -> dict[str, Any]:
    return {
        "name": f"tool_{i}",
        "description": f"Tool number {i}: does something useful with its arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A file path."},
                "count": {"type": "integer", "minimum": 0},
            },
            "required": ["path"],
        },
    }


def list_result(version: str, n: int = 50) -> dict[str, Any]:
    """A ``tools/list`` result of ``version`` with ``n`` tools."""
    result: dict[str, Any] = {"tools": [tool(i) for i in range(n)]}
    if version >= "2026-07-28":
        result.update(resultType="complete", ttlMs=60_000, cacheScope="public")
    return result


def paired(
    floor: Callable[[], object], typed: Callable[[], object], number: int, repeat: int
) -> tuple[float, float, float]:
    """(best floor us, best typed us, median of per-repeat ratios), in CPU time.

    The two are timed back to back in every repeat and their ratio taken per repeat,
    so that load from other processes on a shared machine cancels out."""
    t_floor = timeit.Timer(floor, timer=time.process_time)
    t_typed = timeit.Timer(typed, timer=time.process_time)
    floors, typeds, ratios = [], [], []
    for _ in range(repeat):
        a = t_floor.timeit(number)
        b = t_typed.timeit(number)
        floors.append(a / number * 1e6)
        typeds.append(b / number * 1e6)
        ratios.append(b / a)
    return min(floors), min(typeds), statistics.median(ratios)


def request(version: str) -> dict[str, Any]:
    """A whole ``tools/call`` JSON-RPC request of ``version``."""
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call_params(version)}


def bench_case(
    label: str, value: Any, cls: Any, number: int, repeat: int
) -> list[tuple[str, float, float, float]]:
    loads, dumps = orjson.loads, orjson.dumps
    structure, unstructure = mcp_types.structure, mcp_types.unstructure
    data = dumps(value)
    obj = structure(loads(data), cls)
    assert unstructure(obj) == value

    def floor_decode() -> object:
        return loads(data)

    def typed_decode() -> object:
        return structure(loads(data), cls)

    def floor_encode() -> object:
        return dumps(value)

    def typed_encode() -> object:
        return dumps(unstructure(obj))

    return [
        (f"decode {label}", *paired(floor_decode, typed_decode, number, repeat)),
        (f"encode {label}", *paired(floor_encode, typed_encode, number, repeat)),
    ]


def bench_codec(version: str, repeat: int) -> list[tuple[str, float, float, float]]:
    module = mcp_types.module_for(version)
    params_cls = module.METHODS["tools/call"].params
    return [
        *bench_case("tools/call params", call_params(version), params_cls, 2_000, repeat),
        *bench_case("tools/call request", request(version), module.CallToolRequest, 2_000, repeat),
        *bench_case(
            "tools/list result x50", list_result(version), module.ListToolsResult, 40, repeat
        ),
    ]


_IMPORT_PROBE = """
import gc, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
{pre}
gc.collect()
r0, t0, c0 = rss(), time.perf_counter(), time.process_time()
import {target}
t1, c1 = time.perf_counter(), time.process_time()
print(t1 - t0, c1 - c0, rss() - r0)
"""


def bench_import(target: str, pre: str, runs: int) -> tuple[float, float, float]:
    """Median (wall ms, CPU ms, RSS MiB) of importing ``target`` after ``pre``, each in a
    fresh interpreter."""
    times, cpus, sizes = [], [], []
    code = _IMPORT_PROBE.format(pre=pre, target=target)
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout.split()
        times.append(float(out[0]) * 1e3)
        cpus.append(float(out[1]) * 1e3)
        sizes.append(int(out[2]) / 2**20)
    return statistics.median(times), statistics.median(cpus), statistics.median(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=51)
    parser.add_argument("--import-runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"codec": {}, "import": {}}
    for version in mcp_types.VERSIONS:
        report["codec"][version] = bench_codec(version, args.repeat)
    report["import"]["mcp_sansio"] = bench_import("mcp_sansio", "", args.import_runs)
    report["import"]["mcp_sansio.types"] = bench_import(
        "mcp_sansio.types", "import mcp_sansio", args.import_runs
    )
    for version in mcp_types.VERSIONS:
        name = "mcp_sansio.types.v" + version.replace("-", "_")
        report["import"][name] = bench_import(name, "import mcp_sansio.types", args.import_runs)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("| version | case | orjson alone (us) | typed (us) | ratio (median of pairs) |")
    print("|---|---|---:|---:|---:|")
    for version, rows in report["codec"].items():
        for label, floor, typed, ratio in rows:
            print(f"| {version} | {label} | {floor:.2f} | {typed:.2f} | {ratio:.2f}x |")
    print()
    print("| import (in a fresh interpreter, after its parent) | wall ms | CPU ms | RSS MiB |")
    print("|---|---:|---:|---:|")
    for name, (ms, cpu, mib) in report["import"].items():
        print(f"| {name} | {ms:.1f} | {cpu:.1f} | {mib:.2f} |")
    return 0


def test_bench_smoke() -> None:
    for version in mcp_types.VERSIONS:
        module = mcp_types.module_for(version)
        params = mcp_types.loads(
            orjson.dumps(call_params(version)), module.METHODS["tools/call"].params
        )
        assert params.name == "get_weather"
        result = mcp_types.structure(list_result(version, 3), module.ListToolsResult)
        assert mcp_types.unstructure(result) == list_result(version, 3)


if __name__ == "__main__":
    sys.exit(main())
