"""Instructions per ``tools/call`` round trip, counted by valgrind: a measure noise cannot move.

    python benchmarks/instructions.py [--compiled] [-n N]

Timings on a shared 2-CPU machine move by ±30% from one run to the next, which hides a change
of a few per cent. This script counts instead: for each row of the round-trip table
(:mod:`_roundtrip`: orjson alone, mcp-sansio with dict and with typed payloads, the official
SDK's per-message work), it runs the row's loop under ``valgrind --tool=callgrind`` twice, for
0 and for N iterations after the same warm-up, and divides the difference by N. Start-up,
imports and warm-up cancel out; what is left is the instructions one round trip executes, the
same from run to run to within about 0.5%. Two counts run at a time (one per CPU).

Instructions are not time: orjson's C code retires more of them per cycle than the
interpreter does, so mcp-sansio's ratio to the floor is lower here than in ``run.py``'s
timings. Use it to compare two versions of the code, not as the speed users see.

Needs ``valgrind`` (``apt-get install valgrind``); each row takes a few seconds to a minute.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Final

import _env

_env.ensure()

from _columns import NotAvailable  # noqa: E402
from _roundtrip import ROUND_TRIP_ROWS  # noqa: E402  (inside the benchmark venv)

_CHILD: Final = "--child"
_WARM_UP: Final = 200
_COLLECTED: Final = re.compile(rb"Collected : (\d+)")


def _child(key: str, n: int) -> None:
    """Run one row's loop: the warm-up, then ``n`` round trips (under valgrind)."""
    row = next(r for r in ROUND_TRIP_ROWS if r.key == key)
    loop = row.build()
    loop(_WARM_UP)
    if n:
        loop(n)


def _count(key: str, n: int) -> int:
    """The instructions valgrind counts for a whole child process."""
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            _CHILD,
            key,
            str(n),
        ],
        capture_output=True,
        env=dict(os.environ, PYTHONHASHSEED="0"),
        check=False,
    )
    if out.returncode != 0:
        tail = out.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise NotAvailable("n/a (" + " / ".join(tail) + ")")
    match = _COLLECTED.search(out.stderr)
    if match is None:
        raise NotAvailable("n/a (valgrind printed no instruction count)")
    return int(match.group(1))


def _per_round_trip(key: str, n: int) -> float | str:
    """Instructions per round trip of one row, or why there is no figure."""
    try:
        return (_count(key, n) - _count(key, 0)) / n
    except NotAvailable as exc:
        return str(exc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="round trips per count (2000)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    # Counts do not depend on what else runs: two at a time, one per CPU.
    with ThreadPoolExecutor(max_workers=2) as pool:
        figures = dict(
            zip(
                [row.key for row in ROUND_TRIP_ROWS],
                pool.map(lambda row: _per_round_trip(row.key, args.n), ROUND_TRIP_ROWS),
                strict=True,
            )
        )
    floor, sdk = figures["floor"], figures["sdk"]
    build = "compiled core (mypyc)" if _env.COMPILED else "pure Python"
    print(f"## Instructions per tools/call round trip ({build}; {args.n} round trips, callgrind)")
    print()
    print("| path | instructions | x floor | vs SDK |")
    print("|---|--:|--:|--:|")
    for row in ROUND_TRIP_ROWS:
        per = figures[row.key]
        if isinstance(per, str):
            print(f"| {row.title} | {per} | | |")
            continue
        x_floor = f"{per / floor:.2f}x" if isinstance(floor, float) else ""
        vs_sdk = f"{sdk / per:.2f}x" if isinstance(sdk, float) and row.key != "sdk" else ""
        print(f"| {row.title} | {per:,.0f} | {x_floor} | {vs_sdk} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == _CHILD:
        _child(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(main())
