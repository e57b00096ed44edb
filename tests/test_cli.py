"""The command line: ``serve`` (stdio, TCP, Unix socket), ``call`` (against the example server,
against ``-- python -m mcp_sansio serve``, against sockets), the usage errors and exit codes.

``call`` runs in this process (``main(argv, out, err)``); the servers it talks to are
subprocesses, or the example server served by this process. Every test is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_sansio import Notification, _cli
from mcp_sansio import asyncio as aio
from mcp_sansio.__main__ import main
from mcp_sansio.example import build_server

PYTHON = sys.executable
SERVE = [PYTHON, "-m", "mcp_sansio", "serve"]
LIMIT = 30.0


def run(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(argv, out, err)
    assert time.monotonic() - started < LIMIT
    return status, out.getvalue(), err.getvalue()


def served(listen: Callable[[], Awaitable[Any]]) -> Iterator[Any]:
    """The example server, listening as ``listen()`` sets it up, served by a thread of this
    process until the generator is closed; yields the listener's address (or URL)."""
    ready: list[Any] = []
    stop = threading.Event()

    async def serve() -> None:
        async with await listen() as listener:
            ready.append(getattr(listener, "url", None) or listener.address)
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + LIMIT
    while not ready:
        assert time.monotonic() < deadline, "the example server did not start"
        time.sleep(0.01)
    yield ready[0]
    stop.set()
    thread.join(LIMIT)


@pytest.fixture(scope="module")
def tcp() -> Iterator[str]:
    """The example server on 127.0.0.1 (a free port), served by a thread of this process:
    ``call --tcp`` without starting a subprocess each time. Yields ``HOST:PORT``."""
    for address in served(lambda: aio.serve_tcp(build_server())):
        host, port = address[:2]
        yield f"{host}:{port}"


@pytest.fixture(scope="module")
def http() -> Iterator[str]:
    """The example server over Streamable HTTP on 127.0.0.1. Yields its URL."""
    yield from served(lambda: aio.serve_http(build_server()))


def only_text(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    return str(block["text"])


# ---------------------------------------------------------------------- pieces


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("localhost:0", ("localhost", 0)),
        (":9", ("127.0.0.1", 9)),
        ("9", ("127.0.0.1", 9)),
        ("[::1]:65535", ("::1", 65535)),
    ],
)
def test_parse_tcp(text: str, expected: tuple[str, int]) -> None:
    assert _cli.parse_tcp(text) == expected


@pytest.mark.parametrize("text", ["host:", "host:port", "1.2.3.4:65536", ":-1"])
def test_parse_tcp_refuses(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _cli.parse_tcp(text)


def test_accept_defaults() -> None:
    form: dict[str, Any] = {
        "message": "m",
        "requestedSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "default": "x"}, "b": {"type": "number"}},
        },
    }
    assert _cli.accept_defaults(None, form) == {"action": "accept", "content": {"a": "x"}}
    required = {**form, "requestedSchema": {**form["requestedSchema"], "required": ["b"]}}
    assert _cli.accept_defaults(None, required) == {"action": "decline"}
    url = {"mode": "url", "message": "m", "url": "https://example.com"}
    assert _cli.accept_defaults(None, url) == {"action": "decline"}


def test_roots_of_cwd() -> None:
    (root,) = _cli.roots_of_cwd(None, {})["roots"]
    assert root["uri"] == Path.cwd().as_uri()


def test_fraction() -> None:
    assert _cli._fraction({"progress": 1}) == "1"
    assert _cli._fraction({"progress": 1, "total": 4, "message": "one"}) == "1/4 one"


def test_example_command() -> None:
    assert _cli.example_command() == SERVE


# ---------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "argv",
    [
        ["call"],
        ["call", "tool"],
        ["call", "tool", "a", "b"],
        ["call", "tools/list", "resources/list"],
        ["call", "tools/list", "--args", "{}"],
        ["call", "tool", "echo", "--params", "{}"],
        ["call", "tools/list", "--params", "[1]"],
        ["call", "tools/list", "--params", "{nope"],
        ["call", "--versions", "1999-01-01", "tools/list"],
        ["call", "--versions", ",", "tools/list"],
        ["call", "--timeout", "0", "tools/list"],
        ["call", "--timeout", "soon", "tools/list"],
        ["call", "--tcp", "127.0.0.1:1", "--unix", "/x", "tools/list"],
        ["call", "--tcp", "127.0.0.1:1", "tools/list", "--", "server"],
        ["call", "tools/list", "--"],
        ["call", "--header", "A: b", "tools/list"],
        ["call", "--http", "http://127.0.0.1:1/mcp", "--header", "nocolon", "tools/list"],
        ["call", "--http", "ftp://127.0.0.1/mcp", "tools/list"],
        ["call", "--http", "http://127.0.0.1:1/mcp", "--tcp", ":1", "tools/list"],
        ["call", "--http", "http://127.0.0.1:1/mcp", "tools/list", "--", "server"],
        ["call", "--max-message-size", "0", "tools/list"],
        ["call", "--max-message-size", "lots", "tools/list"],
        ["serve", "--max-message-size", "-5"],
        ["serve", "--tcp", "nowhere"],
        ["serve", "--tcp", ":1", "--unix", "/x"],
        ["serve", "--", "x"],
        ["--", "x"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(argv)
    assert status == 2
    assert out == ""
    assert "usage:" in capsys.readouterr().err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"])[0] == 0
    assert capsys.readouterr().out.startswith("mcp-sansio ")
    assert run(["call", "--help"])[0] == 0
    assert "tool NAME [--args JSON]" in capsys.readouterr().out


# ---------------------------------------------------------------------- call


def test_call_a_method_on_the_example_server() -> None:
    status, out, err = run(["call", "tools/list"])
    assert status == 0, err
    names = [t["name"] for t in json.loads(out)["tools"]]
    assert names[:3] == ["echo", "add", "add_numbers"]
    assert out.startswith('{\n  "tools": [')  # pretty


def test_call_a_method_with_params(tcp: str) -> None:
    status, out, err = run(
        ["call", "--tcp", tcp, "resources/read", "--params", '{"uri": "test://static-text"}']
    )
    assert status == 0, err
    (content,) = json.loads(out)["contents"]
    assert content["text"] == "This is the content of the static text resource."


def test_call_a_tool_in_each_era(tcp: str) -> None:
    for versions in ("2025-11-25", "2026-07-28", "2025-11-25,2026-07-28"):
        argv = [
            "call",
            "--tcp",
            tcp,
            "--versions",
            versions,
            "tool",
            "add",
            "--args",
            '{"a": 5, "b": 3}',
        ]
        status, out, err = run(argv)
        assert status == 0, err
        assert only_text(json.loads(out)) == "The sum of 5 and 3 is 8"


def test_call_a_tool_without_arguments(tcp: str) -> None:
    status, out, _ = run(["call", "--tcp", tcp, "tool", "test_simple_text"])
    assert status == 0
    assert only_text(json.loads(out)) == "This is a simple text response for testing."


def test_call_against_a_server_command() -> None:
    argv = ["call", "tool", "echo", "--args", '{"message": "hi"}', "--", *SERVE]
    status, out, err = run(argv)
    assert status == 0, err
    assert only_text(json.loads(out)) == "Echo: hi"


def test_call_answers_elicitation_and_roots(tcp: str) -> None:
    status, out, _ = run(["call", "tool", "test_elicitation_sep1034_defaults"])
    assert status == 0
    assert "action=accept" in only_text(json.loads(out))
    argv = ["call", "--tcp", tcp, "--versions", "2025-11-25", "tool", "test_elicitation"]
    status, out, _ = run(argv)
    assert status == 1  # the message argument is missing: the tool says so
    argv = ["call", "--tcp", tcp, "tool", "test_elicitation", "--args", '{"message": "Name?"}']
    status, out, _ = run(argv)
    assert status == 0
    assert only_text(json.loads(out)) == "User response: action=decline, content={}"
    status, out, _ = run(["call", "--tcp", tcp, "tool", "list-roots"])
    assert status == 0
    assert Path.cwd().as_uri() in only_text(json.loads(out))


def test_call_verbose_shows_progress_and_logs(tcp: str) -> None:
    for versions in ("2025-11-25", "2026-07-28"):
        verbose = ["call", "-v", "--tcp", tcp, "--versions", versions, "tool"]
        status, _, err = run([*verbose, "test_tool_with_progress"])
        assert status == 0
        assert err.splitlines() == [
            "progress 0/100 Completed step 0 of 100",
            "progress 50/100 Completed step 50 of 100",
            "progress 100/100 Completed step 100 of 100",
        ]
        status, _, err = run([*verbose, "update-resource"])
        assert status == 0
        assert err == ""
        status, _, err = run([*verbose, "test_tool_with_logging"])
        assert status == 0
        assert err.splitlines() == [
            "[info] Tool execution started",
            "[info] Tool processing data",
            "[info] Tool execution completed",
        ]
    # The bundled server, started for the call (stdio), in the default era.
    status, _, err = run(["call", "-v", "tool", "test_tool_with_logging"])
    assert status == 0
    assert len(err.splitlines()) == 3


def test_call_verbose_shows_other_notifications() -> None:
    shown = io.StringIO()
    show = _cli._note_printer(shown)
    show(Notification(method="notifications/message", params={"level": "info", "data": {"a": 1}}))
    show(Notification(method="notifications/tools/list_changed"))
    assert shown.getvalue() == '[info] {"a": 1}\nnotifications/tools/list_changed {}\n'


def test_a_tool_error_exits_1_with_the_result(tcp: str) -> None:
    status, out, err = run(["call", "--tcp", tcp, "tool", "test_error_handling"])
    assert status == 1
    assert json.loads(out)["isError"] is True
    assert err == "mcp-sansio call: the tool 'test_error_handling' reported an error\n"


def test_an_error_answer_exits_1(tcp: str) -> None:
    status, out, err = run(["call", "--tcp", tcp, "tool", "no-such-tool"])
    assert (status, out) == (1, "")
    assert err == "mcp-sansio call: tools/call: Unknown tool: 'no-such-tool' (code -32602)\n"
    argv = ["call", "--tcp", tcp, "resources/read", "--params", '{"uri": "test://nothing"}']
    status, out, err = run(argv)
    assert (status, out) == (1, "")
    assert "Resource not found" in err
    assert '"uri": "test://nothing"' in err  # the error's data


def test_a_method_the_version_does_not_have_exits_1(tcp: str) -> None:
    status, out, err = run(["call", "--tcp", tcp, "--versions", "2026-07-28", "ping"])
    assert (status, out) == (1, "")
    assert "'ping' is not a request of protocol version 2026-07-28" in err
    status, out, _ = run(["call", "--tcp", tcp, "--versions", "2025-11-25", "ping"])
    assert (status, json.loads(out)) == (0, {})


def test_a_timeout_exits_1(tcp: str) -> None:
    argv = ["call", "--tcp", tcp, "--timeout", "0.2", "tool", "long-running-operation"]
    status, out, err = run([*argv, "--args", '{"duration": 5}'])
    assert (status, out) == (1, "")
    assert err == (
        "mcp-sansio call: tools/call: no answer within the --timeout of 0.2 s"
        " (waiting for tools/call)\n"
    )


def test_unreachable_servers_exit_1() -> None:
    status, _, err = run(["call", "--tcp", "127.0.0.1:1", "tools/list"])
    assert status == 1
    assert (
        err == "mcp-sansio call: cannot reach the server at tcp 127.0.0.1:1: Connection refused\n"
    )
    status, _, err = run(["call", "--unix", "/nonexistent/socket", "tools/list"])
    assert status == 1
    assert err == (
        "mcp-sansio call: cannot reach the server at unix /nonexistent/socket:"
        " No such file or directory\n"
    )
    status, _, err = run(["call", "tools/list", "--", "/nonexistent/server"])
    assert status == 1
    assert err == (
        "mcp-sansio call: cannot start the server command '/nonexistent/server':"
        " No such file or directory\n"
    )
    status, _, err = run(["call", "--http", "http://127.0.0.1:1/mcp", "tools/list"])
    assert status == 1
    assert err.startswith("mcp-sansio call: tools/list: the HTTP request failed: cannot connect")


def call_command(*argv: str) -> tuple[int, str, str, float]:
    """``mcp-sansio call ARGV`` as a process of its own (so that what asyncio logs counts
    too): (status, stdout, stderr, seconds)."""
    started = time.monotonic()
    proc = subprocess.run(
        [PYTHON, "-m", "mcp_sansio", "call", *argv],
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


#: A "server" that prints a line of garbage after another, as fast as it can, and never
#: reads its stdin (as ``yes`` does).
GARBAGE = [PYTHON, "-c", "import sys\nwhile True: sys.stdout.write('y\\n' * 4096)"]
#: A server that never answers, nor exits when its stdin closes.
SILENT = [
    PYTHON,
    "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(1)",
]


def test_call_on_a_server_that_prints_garbage_stops_with_one_line() -> None:
    """A flood of unreadable lines: the session answers the first ones as JSON-RPC says,
    then closes as broken after ``DEFAULT_MAX_UNREADABLE`` in a row. One line of error
    (before: 163,838 lines of an asyncio warning and 1.2 GB, until the timeout)."""
    status, out, err, _ = call_command("tools/list", "--", *GARBAGE)
    assert (status, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith(
        "mcp-sansio call: tools/list: the server sent 256 unreadable messages in a row"
        " (the last: 'y': Parse error:"
    ), line
    assert line.endswith("the connection is closed as broken (code -32000)")


def test_call_timeout_bounds_the_whole_command() -> None:
    """``--timeout 1`` against a server that never answers and ignores SIGTERM: the
    ``server/discover`` probe, the fall back to ``initialize`` and stopping the server
    (stdin closed, SIGTERM, SIGKILL) all fit in it (before: 13 s)."""
    status, out, err, took = call_command("--timeout", "1", "tools/list", "--", *SILENT)
    assert (status, out) == (1, "")
    assert err == (
        "mcp-sansio call: tools/list: no answer within the --timeout of 1 s"
        " (waiting for initialize)\n"
    )
    # The command's own bound is 1 s (0.8 s of waiting, 2 x 0.1 s to stop the server);
    # the rest is the interpreter starting: generous, as this machine is noisy.
    assert took < 8, took


def test_call_http_without_h11_says_how_to_install_it() -> None:
    script = (
        "import sys; sys.modules['h11'] = None\n"
        "from mcp_sansio.__main__ import main\n"
        "sys.exit(main(['call', '--http', 'http://127.0.0.1:1/mcp', 'tools/list']))"
    )
    proc = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, timeout=LIMIT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.endswith(
        "mcp-sansio call: error: --http needs h11, the http extra: pip install"
        " 'mcp-sansio[http]' (from a checkout: pip install '.[http]')\n"
    ), proc.stderr


def test_an_interrupted_call_exits_130_without_a_traceback() -> None:
    """Ctrl-C while the server keeps ``call`` waiting: status 130, nothing but a clean stop."""
    process = subprocess.Popen(
        [PYTHON, "-m", "mcp_sansio", "call", "--timeout", "60", "tools/list", "--", *SILENT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)  # it is waiting for an answer by now (or still starting: either way)
        process.send_signal(signal.SIGINT)
        # The server it started is stopped before it exits: nothing holds its pipes open (on
        # Python 3.10 the server was left running, and communicate() waited for it).
        out, err = process.communicate(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
        for pipe in (process.stdout, process.stderr):
            assert pipe is not None
            pipe.close()
    assert process.returncode == 130
    assert out == ""
    assert "Traceback" not in err, err


def test_an_oversized_answer_fails_the_call_at_once(tcp: str) -> None:
    """``--max-message-size`` smaller than the answer: the call fails when the answer
    arrives, with its size (before: it waited out --timeout, then cancelled)."""
    argv = ["call", "--tcp", tcp, "--timeout", "20", "--max-message-size", "2000", "tools/list"]
    started = time.monotonic()
    status, out, err = run(argv)
    assert time.monotonic() - started < 10
    assert (status, out) == (1, "")
    assert err.startswith("mcp-sansio call: tools/list: Invalid response: "), err
    assert err.endswith(
        " bytes, larger than max_message_size (2000 bytes); dropped (code -32600)\n"
    )


def test_max_message_size_reaches_the_connection(tcp: str) -> None:
    status, out, err = run(["call", "--tcp", tcp, "--max-message-size", "1MiB", "tools/list"])
    assert status == 0, err
    assert json.loads(out)["tools"]
    args = _cli.build_parser().parse_args(["call", "--max-message-size", "64KiB", "tools/list"])
    client = _cli._client(args, None, io.StringIO(), 1.0, 0.1)
    assert client.session.connection.config.max_message_size == 65536


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1", 1),
        ("65536", 65536),
        ("64KiB", 65536),
        ("64k", 65536),
        ("4MiB", 4 << 20),
        ("4 MB", 4 << 20),
        ("1GiB", 1 << 30),
        ("10b", 10),
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert _cli._size(text) == size


@pytest.mark.parametrize("text", ["", "0", "-1", "4TiB", "1.5MiB", "MiB", "4 MiBs"])
def test_sizes_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _cli._size(text)


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("Authorization: Bearer abc", ("Authorization", "Bearer abc")),
        ("X-Key:v", ("X-Key", "v")),
        ("A:  spaced value  ", ("A", "spaced value")),
        ("Empty:", ("Empty", "")),
    ],
)
def test_headers(text: str, header: tuple[str, str]) -> None:
    assert _cli._header(text) == header


@pytest.mark.parametrize("text", ["Authorization", ": v", "Bad Name: v", "A: b\r\nC: d"])
def test_headers_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _cli._header(text)


def test_call_over_http_in_each_era(http: str) -> None:
    for versions in ("2025-11-25", "2026-07-28", "2025-11-25,2026-07-28"):
        argv = ["call", "--http", http, "--versions", versions, "tool", "add"]
        status, out, err = run([*argv, "--args", '{"a": 2, "b": 3}'])
        assert status == 0, err
        assert only_text(json.loads(out)) == "The sum of 2 and 3 is 5"
    status, out, err = run(["call", "--http", http, "--max-message-size", "64KiB", "tools/list"])
    assert status == 0, err


def test_call_over_http_sends_the_headers() -> None:
    """Each ``--header`` goes with the requests; a server that refuses the token (401)
    makes the call fail with the status."""
    import http.server

    seen: list[tuple[str | None, str | None]] = []

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append((self.headers.get("Authorization"), self.headers.get("X-Tenant")))
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
            argv = ["call", "--http", url, "-H", "Authorization: Bearer s3cret"]
            status, out, err = run([*argv, "--header", "X-Tenant: t1", "tools/list"])
        finally:
            server.shutdown()
            thread.join(LIMIT)
    assert (status, out) == (1, "")
    assert "401" in err, err
    assert seen
    assert all(pair == ("Bearer s3cret", "t1") for pair in seen), seen


def test_a_server_that_exits_at_once_exits_1() -> None:
    status, _, err = run(["call", "tools/list", "--", PYTHON, "-c", "pass"])
    assert status == 1
    assert "mcp-sansio call: " in err


# ---------------------------------------------------------------------- serve


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    # Short: a Unix socket's path is limited to about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="mcp-", dir="/tmp") as path:
        yield Path(path)


def start_serving(*options: str) -> tuple[subprocess.Popen[str], str]:
    """``python -m mcp_sansio serve OPTIONS`` and the address it says it serves on."""
    process = subprocess.Popen([*SERVE, *options], stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()  # one line, then it serves
    assert line.startswith("mcp-sansio: serving the example server on "), line
    return process, line.rsplit(" ", 1)[1].strip()


def stop_serving(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
        assert process.stderr is not None
        process.stderr.close()


def test_serve_tcp() -> None:
    process, address = start_serving("--tcp", "127.0.0.1:0")
    try:
        assert address.startswith("127.0.0.1:")
        for versions in ("2025-11-25", "2026-07-28"):
            argv = ["call", "--versions", versions, "--tcp", address, "tool", "echo"]
            status, out, err = run([*argv, "--args", '{"message": "over tcp"}'])
            assert status == 0, err
            assert only_text(json.loads(out)) == "Echo: over tcp"
    finally:
        assert stop_serving(process) == 130  # interrupted: stops quietly


def test_serve_stops_cleanly_on_sigterm() -> None:
    process, address = start_serving("--tcp", "127.0.0.1:0")
    try:
        status, out, _ = run(
            ["call", "--tcp", address, "tool", "echo", "--args", '{"message": "x"}']
        )
        assert status == 0
        assert only_text(json.loads(out)) == "Echo: x"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(LIMIT) == 128 + signal.SIGTERM
        finally:
            if process.poll() is None:
                process.kill()
            assert process.stderr is not None
            assert process.stderr.read() == ""  # no traceback
            process.stderr.close()


def test_serve_unix(socket_dir: Path) -> None:
    path = str(socket_dir / "example.sock")
    process, address = start_serving("--unix", path)
    try:
        assert address == path
        status, out, err = run(["call", "--unix", path, "resources/templates/list"])
        assert status == 0, err
        (template,) = json.loads(out)["resourceTemplates"]
        assert template["uriTemplate"] == "test://template/{id}/data"
    finally:
        assert stop_serving(process) == 130


def serve_fails(*options: str) -> tuple[int, str]:
    """``serve OPTIONS`` as a process, expected to fail at once: (status, stderr)."""
    proc = subprocess.run([*SERVE, *options], capture_output=True, text=True, timeout=LIMIT)
    assert proc.stdout == ""
    return proc.returncode, proc.stderr


def test_serve_on_a_port_in_use_says_so_in_one_line() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for option in ("--tcp", "--http"):
            status, err = serve_fails(option, f"127.0.0.1:{port}")
            kind = option[2:]
            assert (status, err) == (
                1,
                f"mcp-sansio serve: cannot listen on {kind} 127.0.0.1:{port}:"
                " Address already in use\n",
            )


def test_serve_in_a_missing_socket_folder_says_so_in_one_line(socket_dir: Path) -> None:
    path = socket_dir / "missing" / "s.sock"
    status, err = serve_fails("--unix", str(path))
    assert (status, err) == (
        1,
        f"mcp-sansio serve: cannot listen on unix {path}: No such file or directory\n",
    )


def test_serve_max_message_size_refuses_a_longer_message() -> None:
    """``serve --max-message-size`` reaches the connection: a longer line is refused with
    the error JSON-RPC defines for it, and the server goes on."""
    ping = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0" * 300},
        },
    }
    proc = subprocess.run(
        [*SERVE, "--max-message-size", "256"],
        input=json.dumps(ping) + "\n",
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert proc.returncode == 0, proc.stderr
    (answer,) = map(json.loads, proc.stdout.splitlines())
    assert answer["id"] == 1  # read from the line's head
    assert answer["error"]["code"] == -32600
    assert answer["error"]["message"].endswith(
        "bytes, larger than max_message_size (256 bytes); dropped"
    )


def test_serve_stdio_exits_0_at_the_end_of_stdin() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    proc = subprocess.run(
        SERVE, input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=LIMIT
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["serverInfo"]["name"] == "mcp-sansio-example"
    assert proc.stderr == ""


def test_serve_in_this_process(socket_dir: Path) -> None:
    """``serve``'s socket paths, run in this process (then cancelled)."""

    async def serve_and_call(options: list[str]) -> str:
        err = io.StringIO()
        args = _cli.build_parser().parse_args(["serve", *options])
        serving = asyncio.create_task(_cli._serve(args, err))
        while "serving" not in err.getvalue():
            await asyncio.sleep(0.01)
        address = err.getvalue().rsplit(" ", 1)[1].strip()
        if options[0] == "--tcp":
            host, port = _cli.parse_tcp(address)
            client = aio.Client.connect_tcp(host, port)
        else:
            client = aio.Client.connect_unix(address)
        async with client:
            result = await client.call_tool("echo", {"message": "in process"})
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        return only_text(result)

    async def main() -> None:
        tcp = await serve_and_call(["--tcp", "127.0.0.1:0"])
        unix = await serve_and_call(["--unix", str(socket_dir / "s.sock")])
        assert tcp == unix == "Echo: in process"

    asyncio.run(asyncio.wait_for(main(), LIMIT))


def test_the_console_script_is_main() -> None:
    script = Path(PYTHON).parent / "mcp-sansio"
    if not script.exists():
        pytest.skip("the mcp-sansio script is not installed beside this python")
    proc = subprocess.run(
        [str(script), "call", "tool", "echo", "--args", '{"message": "script"}'],
        capture_output=True,
        text=True,
        timeout=LIMIT,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert only_text(json.loads(proc.stdout)) == "Echo: script"
