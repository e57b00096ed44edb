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


def relay(sock: socket.socket, stdin: int = 0, stdout: int = 1) -> None:
    """Copy ``stdin`` (a file descriptor) to ``sock`` and ``sock`` to ``stdout`` until
    ``sock`` ends; at the end of ``stdin``, half-close ``sock``."""
    threading.Thread(target=_up, args=(sock, stdin), daemon=True).start()
    with contextlib.suppress(OSError):
        while data := sock.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(stdout, view) :]


def _up(sock: socket.socket, stdin: int) -> None:
    with contextlib.suppress(OSError):
        while data := os.read(stdin, _CHUNK):
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
    with sock:
        relay(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
