"""Targets that are processes: a command spoken to over stdin and stdout
(:class:`StdioTarget`), and a client command whose server is the probe
(:class:`ClientTarget`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_sansio.testing._targets import (
    CHUNK,
    MAX_STDERR,
    SHUTDOWN_TIMEOUT,
    Channel,
    StreamChannel,
    TargetError,
)


class StdioTarget:
    """A command run as a subprocess for each peer, spoken to over stdin and stdout.

    :param command: the program and its arguments.
    :param env: the environment (default: this process's).
    :param cwd: the working directory (default: this process's).
    """

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        if not command:
            raise TargetError("no command given")
        self.command: tuple[str, ...] = tuple(command)
        """The command line."""
        self.env = dict(env) if env is not None else None
        self.cwd = cwd

    def describe(self) -> str:
        """A short description for reports."""
        return "stdio: " + " ".join(self.command)

    def open(self) -> Channel:
        """Start the command: a fresh peer. Raises :class:`TargetError` when it cannot be
        started."""
        return _ProcessChannel(self.command, self.env, self.cwd)


class _ProcessChannel(StreamChannel):
    """A process spoken to over its stdin and stdout (a server), or, with ``listener``, over
    the connection its relay makes to ``listener`` (a client, which starts its server: the
    relay)."""

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        env: dict[str, str] | None,
        cwd: Any,
        listener: socket.socket | None = None,
        startup: float = 0.0,
    ) -> None:
        self.opened = time.monotonic()  # (a client's relay connects later: see _accept)
        try:
            process = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE if listener is None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if listener is None else subprocess.STDOUT,
                env=env,
                cwd=cwd,
                bufsize=0,
                start_new_session=True,  # its own process group: the shutdown reaches children
            )
        except OSError as exc:
            raise TargetError(f"cannot start {' '.join(command)}: {exc}") from None
        assert process.stdout is not None
        self.process = process
        self._stderr = bytearray()
        self._ended = ""
        self._sock: socket.socket | None = None
        if listener is None:
            assert process.stdin is not None
            assert process.stderr is not None
            out, into = process.stdout.fileno(), process.stdin.fileno()
            kept = process.stderr.fileno()

            def read() -> bytes:
                return os.read(out, CHUNK)

            def write(data: bytes) -> None:
                view = memoryview(data)
                while view:
                    view = view[os.write(into, view) :]

        else:
            # The client's stdout and stderr are kept as its "stderr"; its protocol bytes
            # come through the relay's connection.
            kept = process.stdout.fileno()
            self._stderr_thread = threading.Thread(target=self._drain, args=(kept,), daemon=True)
            self._stderr_thread.start()
            sock = self._accept(listener, startup)
            self._sock = sock
            read = functools.partial(sock.recv, CHUNK)

            def write(data: bytes) -> None:
                sock.sendall(data)

        super().__init__(read, write)
        if listener is None:
            self._stderr_thread = threading.Thread(target=self._drain, args=(kept,), daemon=True)
            self._stderr_thread.start()
        self._start()

    def _accept(self, listener: socket.socket, startup: float) -> socket.socket:
        """The relay's connection, within ``startup`` seconds of the start."""
        deadline = time.monotonic() + startup
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([listener], [], [], max(0.0, min(remaining, 0.1)))
            if ready:
                sock, _ = listener.accept()
                sock.setblocking(True)
                return sock
            if self.process.poll() is not None or remaining <= 0:
                why = (
                    f"exited ({self.process.returncode})"
                    if self.process.poll() is not None
                    else f"did not start its server within {startup:g} s"
                )
                self._signal(signal.SIGKILL)
                self.process.wait()
                self._stderr_thread.join(SHUTDOWN_TIMEOUT)
                assert self.process.stdout is not None
                self.process.stdout.close()
                tail = self.stderr.strip()[-2000:]
                raise TargetError(
                    f"the client {why} before connecting to the probe"
                    + (f"; it said:\n{tail}" if tail else "")
                )

    def _drain(self, fd: int) -> None:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                return
            if not data:
                return
            room = MAX_STDERR - len(self._stderr)
            if room > 0:
                self._stderr += data[:room]

    @property
    def stderr(self) -> str:
        """See :meth:`Channel.stderr`."""
        return self._stderr.decode("utf-8", "replace")

    def close(self) -> str:
        """Hang up (close the server's stdin; for a client, the relay's connection, so its
        server exits), wait, ``SIGTERM`` the process group, wait, ``SIGKILL`` it."""
        if self._ended:
            return self._ended
        proc = self.process
        self._stop_writer()
        with contextlib.suppress(OSError):
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
            elif proc.stdin is not None:
                proc.stdin.close()
        how = ""
        try:
            proc.wait(SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            how = " after SIGTERM"
            self._signal(signal.SIGTERM)
            try:
                proc.wait(SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                how = " after SIGKILL"
                self._signal(signal.SIGKILL)
                proc.wait()
        # Children that kept the pipes open would keep the readers waiting: end them too.
        self._signal(signal.SIGKILL)
        self._reader.join(SHUTDOWN_TIMEOUT)
        self._stderr_thread.join(SHUTDOWN_TIMEOUT)
        if self._sock is not None:
            self._sock.close()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        self._ended = f"exit status {proc.returncode}{how}"
        return self._ended

    def _signal(self, which: signal.Signals) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, which)


#: What stands for the probe's server in a client's command line.
SERVER_PLACEHOLDER: Final = "{server}"


class ClientTarget(StdioTarget):
    """A client under test: a command run for each peer, which starts its server as a
    subprocess over stdio; the server it starts is the probe (through a relay,
    ``python -m mcp_sansio._relay``, that connects to a loopback port the probe listens on).

    :param command: the client's command line. An argument ``{server}`` is replaced by the
        server command (several arguments); without one, the server command is appended.
    :param env: the environment (default: this process's).
    :param cwd: the working directory (default: this process's).
    :param startup: seconds the client has to start its server.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup: float = 10.0,
    ) -> None:
        super().__init__(command, env=env, cwd=cwd)
        self.startup = startup
        """Seconds the client has to start its server."""

    def describe(self) -> str:
        """A short description for reports."""
        return "stdio client: " + " ".join(self.command)

    def argv(self, port: int) -> list[str]:
        """The command line for a probe listening on ``port``."""
        relay = [sys.executable, "-m", "mcp_sansio._relay", "127.0.0.1", str(port)]
        if SERVER_PLACEHOLDER not in self.command:
            return [*self.command, *relay]
        out: list[str] = []
        for arg in self.command:
            out.extend(relay if arg == SERVER_PLACEHOLDER else [arg])
        return out

    def open(self) -> Channel:
        """Start the client and take its server's connection. Raises :class:`TargetError`
        when it cannot be started or does not start its server in time."""
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            return _ProcessChannel(self.argv(port), self.env, self.cwd, listener, self.startup)
