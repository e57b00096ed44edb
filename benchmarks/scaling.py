"""What one more message costs as a table grows: small against large, as ratios.

    python benchmarks/scaling.py [--rounds N]

The tables a peer can grow must cost O(1) per message (docs/limits.rst). Where a test can count
the work, a test checks it. Where the work is inside CPython's C code and cannot be counted,
it is timed here instead of in the tests, which have no timing thresholds because this machine
is noisy. Each case times the same operation on a small table and on a large one, takes the
best of ``--rounds`` rounds for each, and prints their ratio next to the ratio measured before
the fix. A ratio near 1 is O(1). The O(n) code the fix replaced scaled with the table.

Cases:

- ``IdHistory.add`` of a new string id, in a full history of 16 ids and one of 65,536. Once the
  history is full, each new id forgets the oldest. A plain dict walked the dead slots at its
  front (12x before the fix). A large table also misses the CPU cache more often, so a ratio
  of 1-5 is that, not a walk.
- ``RecentIds.put`` of a new key, likewise (the owed and cancelled tables; no figure
  from before the fix was kept, hence ``-``).
- ``lower_headers`` of 6,000 and of 60,000 repeated ``Accept`` fields. Each one re-joined all
  the earlier ones, 70 times the cost for 10 times the fields. Linear is 10.
- ``lower_headers`` of 6,000 and of 60,000 repeated ``Authorization`` fields (``DPoP`` takes
  the same path): the same re-join, 1,163 times the cost before it was fixed the same way.
- A client ``Connection`` taking ``notifications/resources/updated`` (the check that the URI is
  under a subscription, then the event), with 10 subscriptions and with 50,000. The check
  walked every subscription (5 ms with 50,000 against 3 us with 10, about 1,700x). The tests
  count the walks over the subscription tables of the pure-Python core; compiled code walks
  them through the C API, which no counting subclass sees, so ``--compiled`` is how that
  build is checked.

Runs in the benchmark venv, as the other scripts do (``_env.py``); it needs only mcp-sansio.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Final

import _env

_env.ensure()

from mcp_sansio import Connection, Notification, Request, Response, Role  # noqa: E402
from mcp_sansio._ids import IdHistory, RecentIds  # noqa: E402  (inside the benchmark venv)
from mcp_sansio._version import build  # noqa: E402
from mcp_sansio.http._headers import lower_headers  # noqa: E402

__all__ = ["CASES", "main"]


def _new_keys(put: Callable[[str], object], size: int) -> Callable[[int], float]:
    """Seconds per ``put`` of a new key, once ``size`` keys have filled the table."""
    for i in range(size):
        put(f"a{i}")

    def once(round_: int, n: int = 5000) -> float:
        keys = [f"b{round_}-{i}" for i in range(n)]
        start = time.perf_counter()
        for key in keys:
            put(key)
        return (time.perf_counter() - start) / n

    return once


def _id_adds(size: int) -> Callable[[int], float]:
    """Seconds per add of a new string id to a full ``IdHistory`` of ``size`` ids."""
    return _new_keys(IdHistory(size).add, size)


def _recent_puts(size: int) -> Callable[[int], float]:
    """Seconds per put of a new key to a full ``RecentIds`` of ``size`` keys."""
    return _new_keys(RecentIds(size).put, size)


def _header_join(count: int, name: bytes = b"accept") -> Callable[[int], float]:
    """Seconds to lower ``count`` repeated ``name`` fields."""
    headers = [(name, b"a/b")] * count

    def once(round_: int) -> float:
        start = time.perf_counter()
        lower_headers(headers)
        return time.perf_counter() - start

    return once


def _subscribed(count: int) -> Callable[[int], float]:
    """Seconds per ``notifications/resources/updated`` taken by a 2025-11-25 client with
    ``count`` subscriptions (``file:///d<i>/``), for a URI under one of them."""
    client = Connection(Role.CLIENT, capabilities={})
    client.send(
        Request(
            id=0,
            method="initialize",
            params={
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "scaling", "version": "1"},
            },
        )
    )
    client.receive_data(
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{"resources":{"subscribe":true}},'
        b'"serverInfo":{"name":"s","version":"1"}}}\n'
    )
    assert isinstance(client.next_event(), Response)
    client.send(Notification(method="notifications/initialized"))
    for i in range(count):
        client.send(
            Request(id=i + 1, method="resources/subscribe", params={"uri": f"file:///d{i}/"})
        )
        client.receive_data(b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % (i + 1))
        assert isinstance(client.next_event(), Response)
    line = (
        b'{"jsonrpc":"2.0","method":"notifications/resources/updated",'
        b'"params":{"uri":"file:///d5/a/b"}}\n'
    )

    def once(round_: int, n: int = 2000) -> float:
        start = time.perf_counter()
        for _ in range(n):
            client.receive_data(line)
            client.next_event()
        return (time.perf_counter() - start) / n

    client.receive_data(line)
    assert isinstance(client.next_event(), Notification), "the notification is delivered"
    return once


#: (name, the small case, the large case, the ratio before the fix, a linear ratio).
CASES: Final[
    tuple[
        tuple[
            str,
            Callable[[], Callable[[int], float]],
            Callable[[], Callable[[int], float]],
            str,
            str,
        ],
        ...,
    ]
] = (
    (
        "IdHistory.add, full: 16 vs 65,536 ids",
        lambda: _id_adds(16),
        lambda: _id_adds(65536),
        "12x",
        "1x",
    ),
    (
        "RecentIds.put, full: 16 vs 65,536 keys",
        lambda: _recent_puts(16),
        lambda: _recent_puts(65536),
        "-",
        "1x",
    ),
    (
        "lower_headers: 6,000 vs 60,000 Accept fields",
        lambda: _header_join(6000),
        lambda: _header_join(60000),
        "70x",
        "10x",
    ),
    (
        "lower_headers: 6,000 vs 60,000 Authorization",
        lambda: _header_join(6000, b"authorization"),
        lambda: _header_join(60000, b"authorization"),
        "1163x",
        "10x",
    ),
    (
        "resources/updated: 10 vs 50,000 subscriptions",
        lambda: _subscribed(10),
        lambda: _subscribed(50000),
        "1700x",
        "5000x",
    ),
)


def main() -> None:
    """Print each case's best small and large times and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds per case (default 7)")
    args = parser.parse_args()
    print(f"mcp-sansio core: {build()}")
    print(f"{'case':<48} {'small':>10} {'large':>10} {'ratio':>7} {'before':>7} {'linear':>7}")
    for name, make_small, make_large, before, linear in CASES:
        small, large = make_small(), make_large()
        best_small = best_large = float("inf")
        for r in range(args.rounds):  # interleaved, so load from elsewhere hits both
            best_small = min(best_small, small(r))
            best_large = min(best_large, large(r))
        print(
            f"{name:<48} {best_small * 1e6:>8.2f}us {best_large * 1e6:>8.2f}us"
            f" {best_large / best_small:>6.1f}x {before:>7} {linear:>7}"
        )


if __name__ == "__main__":
    main()
