"""``python -m mcp_sansio._relay``: the server command the client probe gives a client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from mcp_sansio._relay import main, relay


def test_bytes_go_both_ways_and_the_ends_follow() -> None:
    probe, far = socket.socketpair()
    in_r, in_w = os.pipe()  # the client's writes to its server's stdin
    out_r, out_w = os.pipe()  # what the client reads from its server's stdout
    worker = threading.Thread(target=relay, args=(far, in_r, out_w))
    worker.start()
    os.write(in_w, b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n')
    assert probe.recv(4096) == b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'
    probe.sendall(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert os.read(out_r, 4096) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    os.close(in_w)  # the client closes its server's stdin: the probe sees the end
    assert probe.recv(4096) == b""
    probe.close()  # the probe hangs up: the relay ends
    worker.join(10)
    assert not worker.is_alive()
    for fd in (in_r, out_r, out_w):
        os.close(fd)
    far.close()


@pytest.mark.parametrize("argv", [[], ["127.0.0.1"], ["127.0.0.1", "port"]])
def test_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage" in capsys.readouterr().err


def test_nothing_to_connect_to(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        assert main(["127.0.0.1", str(port)]) == 2
    assert "cannot connect" in capsys.readouterr().err


def test_as_a_process() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_sansio._relay", "127.0.0.1", str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        listener.settimeout(10)
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"hello\n")
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"hello\n"
    assert proc.wait(10) == 0
    assert proc.stdin is not None
    proc.stdin.close()
    proc.stdout.close()
