"""A wire tap for stdio MCP servers: ``python wire_tap.py LOG -- COMMAND [ARG ...]``.

Runs ``COMMAND`` with its stdin and stdout relayed to ours, unchanged, and appends every
chunk that passes to ``LOG``: ``> `` lines are what the client sent, ``< `` lines what the
server answered. The interop tests put it between our client and a real server, to assert
on (and to quote) the exact exchange. The child's stderr is ours. When our stdin ends, the
child's stdin is closed; when the child's stdout ends, ours is closed; the tap exits with the
child's status.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from typing import BinaryIO


def relay(
    source: int,
    sink: BinaryIO | None,
    sink_fd: int | None,
    log: BinaryIO,
    mark: bytes,
    lock: threading.Lock,
) -> None:
    """Copy ``source`` to the sink (a pipe, or a descriptor) until EOF, logging each line
    with ``mark``; at EOF a pipe sink is closed."""
    pending = b""
    while True:
        try:
            data = os.read(source, 65536)
        except OSError:
            data = b""
        if data:
            with contextlib.suppress(OSError):
                if sink is not None:
                    sink.write(data)
                    sink.flush()
                elif sink_fd is not None:
                    os.write(sink_fd, data)
        pending += data
        *lines, pending = pending.split(b"\n")
        if not data and pending:
            lines, pending = [*lines, pending], b""
        if lines:
            with lock:
                for line in lines:
                    log.write(mark + line + b"\n")
                log.flush()
        if not data:
            if sink is not None:
                with contextlib.suppress(OSError):
                    sink.close()
            return


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    log_path, command = args[0], args[2:]
    lock = threading.Lock()
    with open(log_path, "ab") as log:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert child.stdin is not None
        assert child.stdout is not None
        to_child = threading.Thread(
            target=relay,
            args=(sys.stdin.fileno(), child.stdin, None, log, b"> ", lock),
            daemon=True,
        )
        to_child.start()
        relay(child.stdout.fileno(), None, sys.stdout.fileno(), log, b"< ", lock)
        # The server closed its stdout: so do we (our client sees EOF), then wait for it.
        os.close(sys.stdout.fileno())
        status = child.wait()
        with lock:
            log.write(f"# exit {status}\n".encode())
        return status


if __name__ == "__main__":
    sys.exit(main())
