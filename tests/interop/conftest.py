"""Fixtures of the interop tests: the real peers, installed on first use (``peers.py``), a
wire tap, the servers' stderr, and a time bound on every test.

These tests are part of the ordinary test run (``tox``'s ``py3*`` environments). They are
marked ``interop``, so ``pytest -m "not interop"`` leaves them out. A peer that cannot be
installed because ``node``/``npm`` or the package registry is missing makes its tests skip,
and the run's summary says so in capitals; any other install failure fails them.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any

import pytest

from . import peers

HERE = Path(__file__).resolve().parent

#: The time bound of one test, in seconds (a backstop: each test bounds its own waits far
#: tighter). ``@pytest.mark.interop_timeout(seconds)`` changes it for one test.
TEST_TIMEOUT = 240.0

_unavailable: dict[str, str] = {}
#: Each start of a peer server that the tests wait on (its name, the seconds it took to
#: listen, or None for a start given up), for the run's summary: a slow or given-up start
#: shows in the output of a run that passed too.
STARTS: list[tuple[str, float | None]] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "interop: a test against a real MCP peer (tests/interop)")
    config.addinivalue_line(
        "markers", "interop_timeout(seconds): the time bound of one interop test"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.interop)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for peer, reason in _unavailable.items():
        terminalreporter.write_sep("!", f"INTEROP TESTS SKIPPED: {peer} UNAVAILABLE", red=True)
        terminalreporter.write_line(reason)
    for name in sorted({name for name, _ in STARTS}):
        took = [t for n, t in STARTS if n == name and t is not None]
        given_up = sum(1 for n, t in STARTS if n == name and t is None)
        slowest = f", the slowest {max(took):.1f} s" if took else ""
        terminalreporter.write_line(
            f"interop: {name} started {len(took)} times{slowest}; {given_up} starts given up"
        )


def _peer(name: str, install: Any) -> Any:
    try:
        return install()
    except peers.PeerUnavailable as exc:
        _unavailable[name] = str(exc)
        pytest.skip(f"INTEROP PEER UNAVAILABLE ({name}): {exc}")
    except peers.PeerSetupFailed as exc:
        pytest.fail(f"installing the interop peer {name} failed: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def everything_command() -> list[str]:
    """The command that runs ``@modelcontextprotocol/server-everything`` on stdio."""
    command: list[str] = _peer(peers.EVERYTHING_PACKAGE, peers.ensure_everything)
    return command


@pytest.fixture(scope="session")
def oidc_provider_command() -> list[str]:
    """The command that runs oidc-provider (``oidc_provider.mjs``; its package folder and
    options follow: see ``authorization.oidc_provider``)."""
    command: list[str] = _peer(
        f"{peers.OIDC_PACKAGE}@{peers.OIDC_VERSION}", peers.ensure_oidc_provider
    )
    return command


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """The Python of the venv that holds the official SDK (``mcp==2.3.0``)."""
    python: Path = _peer(f"{peers.SDK_PACKAGE}=={peers.SDK_VERSION}", peers.ensure_sdk)
    return python


@pytest.fixture(scope="session")
def sdk_server_command(sdk_python: Path) -> list[str]:
    """The command that runs the SDK server of ``sdk_server.py`` on stdio."""
    return [str(sdk_python), str(HERE / "sdk_server.py")]


@pytest.fixture(scope="session")
def example_command() -> list[str]:
    """Our example server on stdio: ``python -m mcp_sansio serve``."""
    return [sys.executable, "-m", "mcp_sansio", "serve"]


@pytest.fixture
def server_stderr() -> Iterator[IO[bytes]]:
    """A file for a server's stderr; printed (so shown when the test fails) at teardown."""
    with tempfile.TemporaryFile() as file:
        yield file
        file.seek(0)
        text = file.read().decode(errors="replace")
        if text.strip():
            print(f"--- the server's stderr ---\n{text[-20000:]}")


class Wire:
    """A wire tap between a client and a stdio server (``wire_tap.py``): what passed,
    message by message."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def wrap(self, command: list[str]) -> list[str]:
        """``command``, run behind the tap."""
        return [sys.executable, str(HERE / "wire_tap.py"), str(self.log), "--", *command]

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def messages(self) -> list[tuple[str, Any]]:
        """``(">" or "<", message)`` for each JSON line: ``>`` the client's, ``<`` the
        server's. Lines that are not JSON come as text."""
        out: list[tuple[str, Any]] = []
        for line in self.text().splitlines():
            if line[:2] not in ("> ", "< "):
                continue
            try:
                out.append((line[0], json.loads(line[2:])))
            except ValueError:
                out.append((line[0], line[2:]))
        return out

    def sent(self, method: str) -> list[Any]:
        """The client's messages with this method."""
        return [
            m
            for d, m in self.messages()
            if d == ">" and isinstance(m, dict) and m.get("method") == method
        ]

    def received(self, method: str) -> list[Any]:
        """The server's messages with this method."""
        return [
            m
            for d, m in self.messages()
            if d == "<" and isinstance(m, dict) and m.get("method") == method
        ]

    def answer_to(self, request_id: Any, *, direction: str = "<") -> Any:
        """The answer (result or error) with this id, from the server (``<``) or the
        client (``>``); ``None`` when there is none."""
        for d, m in self.messages():
            if (
                d == direction
                and isinstance(m, dict)
                and "method" not in m
                and m.get("id") == request_id
            ):
                return m
        return None


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    """A :class:`Wire`; its log is printed at teardown (shown when the test fails)."""
    tap = Wire(tmp_path / "wire.log")
    yield tap
    text = tap.text()
    if text:
        print(f"--- the wire ---\n{text[-20000:]}")


class InteropTimeout(Exception):
    """A test ran past its time bound."""


@pytest.fixture(autouse=True)
def _time_bound(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that runs past :data:`TEST_TIMEOUT` (``SIGALRM``): nothing may hang."""
    marker = request.node.get_closest_marker("interop_timeout")
    limit = float(marker.args[0]) if marker is not None else TEST_TIMEOUT

    def expired(signum: int, frame: FrameType | None) -> None:
        raise InteropTimeout(f"{request.node.nodeid} ran for more than {limit:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------- servers on a port


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server to take."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_on_port(
    command: Sequence[str],
    port: int,
    stderr: IO[bytes],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> subprocess.Popen[bytes]:
    """Start ``command``, a server that listens on 127.0.0.1:``port``, and return it once
    it accepts connections (the test fails if it exits first, or after ``timeout``)."""
    process = subprocess.Popen(
        list(command),
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            pytest.fail(f"the server exited ({process.returncode}): {command[:2]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if time.monotonic() > deadline:
                stop_process(process)
                pytest.fail(f"the server did not listen within {timeout:g} s: {command[:2]}")
            time.sleep(0.1)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``, then kill it if it is still there after 10 s."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
