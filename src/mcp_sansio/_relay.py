"""``python -m mcp_sansio._relay HOST PORT``: a stdio server that is a TCP connection.

What the probe gives a client under test as its server command (``mcp-sansio probe --client``):
it connects to ``HOST:PORT`` (where the probe listens, on loopback), copies its stdin to the
connection and the connection to its stdout, and exits when either side ends, so the client
sees its "server" exit when the probe hangs up, and the probe sees the client close when it
closes the server's stdin.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

_CHUNK = 65536


def _up(sock: socket.socket) -> None:
    """stdin -> the connection; at its end, half-close the connection."""
    with contextlib.suppress(OSError):
        while data := os.read(0, _CHUNK):
            sock.sendall(data)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def main(argv: list[str] | None = None) -> int:
    """Relay until the connection ends. Returns the exit status (2: bad arguments or no
    connection)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or not args[1].isdigit():
        print("usage: python -m mcp_sansio._relay HOST PORT", file=sys.stderr)
        return 2
    try:
        sock = socket.create_connection((args[0], int(args[1])), timeout=10)
    except OSError as exc:
        print(f"mcp_sansio._relay: cannot connect: {exc}", file=sys.stderr)
        return 2
    sock.settimeout(None)
    threading.Thread(target=_up, args=(sock,), daemon=True).start()
    try:
        while data := sock.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
