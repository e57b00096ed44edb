"""Installing the real peers of the interop tests into ``.interop/`` (ignored by git).

Three peers, pinned (see ``/docs/interop.rst``):

- the everything server of the TypeScript SDK, ``npm install --prefix .interop/npm
  @modelcontextprotocol/server-everything@2026.8.31``, run with ``node``;
- a certified OpenID Provider / OAuth 2.0 authorization server, ``npm install --prefix
  .interop/oidc oidc-provider@9.13.3``, run with ``node`` by ``oidc_provider.mjs`` (the
  authorization interop tests, ``test_auth_*.py``);
- the official Python SDK, ``mcp==2.3.0``, in its own virtual environment
  ``.interop/sdk-venv`` (it never enters the environment under test).

Each install happens once and is then reused: a marker file records what was installed, and
is written last, so an interrupted install is redone from scratch. A file lock
(``fcntl.flock`` on ``.interop/<peer>.lock``) makes parallel test runs (``tox -p``) wait for
each other instead of racing. Every command has a timeout.

:class:`PeerUnavailable` means the peer cannot be had on this machine at all (no ``node`` or
``npm``, or the package registry cannot be reached): the tests that need it are skipped,
loudly. Any other failure is :class:`PeerSetupFailed`, and fails those tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

#: The repository's root (``tests/interop/peers.py`` is two levels down).
ROOT = Path(__file__).resolve().parents[2]
#: Where the peers are installed: ``.interop/`` at the root, unless
#: ``MCP_SANSIO_INTEROP_DIR`` names another folder (a CI cache, say).
INTEROP_DIR = Path(os.environ.get("MCP_SANSIO_INTEROP_DIR") or ROOT / ".interop")

#: The Node preload that makes a Node process's wildcard TCP listens bind 127.0.0.1
#: (``loopback.cjs`` beside this file; the conformance harness preloads it too).
LOOPBACK_PRELOAD = Path(__file__).resolve().parent / "loopback.cjs"

EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"
OIDC_PACKAGE = "oidc-provider"
OIDC_VERSION = "9.13.3"
SDK_PACKAGE = "mcp"
SDK_VERSION = "2.3.0"

#: Bounds, in seconds, of each step of the setup.
NPM_TIMEOUT = 600.0
PIP_TIMEOUT = 900.0
VENV_TIMEOUT = 180.0
PROBE_TIMEOUT = 60.0
#: How long a run waits for another run's install of the same peer.
LOCK_TIMEOUT = NPM_TIMEOUT + PIP_TIMEOUT + VENV_TIMEOUT

_MARKER = ".mcp-sansio-installed"
_TAIL = 4000


class PeerUnavailable(Exception):
    """The peer cannot be installed on this machine (no Node, or no registry): skip."""


class PeerSetupFailed(Exception):
    """Installing the peer failed for another reason: a test failure."""


def _tail(text: str) -> str:
    return text if len(text) <= _TAIL else "…" + text[-_TAIL:]


def run(
    command: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a setup command to its end, within ``timeout`` seconds (else
    :class:`PeerSetupFailed`), with its output captured."""
    argv = [os.fspath(part) for part in command]
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        text = "".join(
            part.decode(errors="replace") if isinstance(part, bytes) else part
            for part in (exc.stdout or "", exc.stderr or "")
        )
        raise PeerSetupFailed(
            f"`{' '.join(argv)}` took more than {timeout:g} s:\n{_tail(text)}"
        ) from None


def _failure(what: str, result: subprocess.CompletedProcess[str]) -> str:
    return (
        f"{what} failed (exit {result.returncode}):\n"
        f"{_tail(result.stdout)}\n{_tail(result.stderr)}".rstrip()
    )


@contextlib.contextmanager
def locked(name: str, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold ``.interop/<name>.lock`` (an exclusive ``flock``), waiting at most ``timeout``."""
    INTEROP_DIR.mkdir(parents=True, exist_ok=True)
    with open(INTEROP_DIR / f"{name}.lock", "a+b") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise PeerSetupFailed(
                        f"waited {timeout:g} s for {lock.name}: another run's install hangs"
                    ) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _marked(folder: Path, want: str) -> bool:
    try:
        return (folder / _MARKER).read_text() == want
    except OSError:
        return False


def loopback_node_options() -> str:
    """A ``NODE_OPTIONS`` value that preloads :data:`LOOPBACK_PRELOAD` (quoted, so a
    checkout path with spaces works)."""
    return f'--require "{LOOPBACK_PRELOAD}"'


# ---------------------------------------------------------------------- the everything server


def everything_dir() -> Path:
    """The installed package's folder."""
    return INTEROP_DIR / "npm" / "node_modules" / EVERYTHING_PACKAGE


def _node_and_npm(package: str) -> tuple[str, str]:
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, p in (("node", node), ("npm", npm)) if p is None)
        raise PeerUnavailable(f"{missing} not found on PATH: cannot run {package}")
    return node, npm


def _npm_install(npm: str, prefix: Path, want: str) -> None:
    """``npm install --prefix prefix want`` into an emptied ``prefix``;
    :class:`PeerUnavailable` when it fails and the registry cannot be reached."""
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    result = run(
        [npm, "install", "--prefix", prefix, want, "--no-audit", "--no-fund", "--loglevel=error"],
        timeout=NPM_TIMEOUT,
    )
    if result.returncode != 0:
        ping = run([npm, "ping"], timeout=PROBE_TIMEOUT)
        if ping.returncode != 0:
            raise PeerUnavailable(
                f"the npm registry cannot be reached (`npm ping` failed), so "
                f"{want} cannot be installed:\n{_tail(ping.stderr)}"
            )
        raise PeerSetupFailed(_failure(f"npm install {want}", result))


def ensure_everything() -> list[str]:
    """Install the everything server (once) and return the command that runs it on stdio."""
    node, npm = _node_and_npm(EVERYTHING_PACKAGE)
    prefix = INTEROP_DIR / "npm"
    want = f"{EVERYTHING_PACKAGE}@{EVERYTHING_VERSION}"
    entry = everything_dir() / "dist" / "index.js"
    with locked("npm"):
        if not (_marked(prefix, want) and entry.is_file()):
            _npm_install(npm, prefix, want)
            installed = json.loads((everything_dir() / "package.json").read_text())["version"]
            if installed != EVERYTHING_VERSION or not entry.is_file():
                raise PeerSetupFailed(f"npm installed {EVERYTHING_PACKAGE} {installed}, not {want}")
            (prefix / _MARKER).write_text(want)
    return [node, os.fspath(entry), "stdio"]


# ---------------------------------------------------------------------- oidc-provider


def oidc_provider_dir() -> Path:
    """The installed ``oidc-provider`` package's folder."""
    return INTEROP_DIR / "oidc" / "node_modules" / OIDC_PACKAGE


def ensure_oidc_provider() -> list[str]:
    """Install ``oidc-provider`` (once, into ``.interop/oidc``) and return the command that
    runs ``oidc_provider.mjs`` with it (the script's arguments follow)."""
    node, npm = _node_and_npm(OIDC_PACKAGE)
    prefix = INTEROP_DIR / "oidc"
    want = f"{OIDC_PACKAGE}@{OIDC_VERSION}"
    manifest = oidc_provider_dir() / "package.json"
    with locked("oidc"):
        if not (_marked(prefix, want) and manifest.is_file()):
            _npm_install(npm, prefix, want)
            installed = json.loads(manifest.read_text())["version"]
            if installed != OIDC_VERSION:
                raise PeerSetupFailed(f"npm installed {OIDC_PACKAGE} {installed}, not {want}")
            (prefix / _MARKER).write_text(want)
    return [node, os.fspath(Path(__file__).resolve().parent / "oidc_provider.mjs")]


def npm_versions() -> dict[str, str]:
    """The versions that matter of what npm installed: the server, its TypeScript SDK, and
    Node itself."""
    versions: dict[str, str] = {}
    for name, folder in (
        (EVERYTHING_PACKAGE, everything_dir()),
        (
            "@modelcontextprotocol/sdk",
            INTEROP_DIR / "npm" / "node_modules" / "@modelcontextprotocol" / "sdk",
        ),
    ):
        with contextlib.suppress(OSError, ValueError, KeyError):
            versions[name] = json.loads((folder / "package.json").read_text())["version"]
    node = shutil.which("node")
    if node is not None:
        result = run([node, "--version"], timeout=PROBE_TIMEOUT)
        versions["node"] = result.stdout.strip()
    return versions


# ---------------------------------------------------------------------- the Python SDK


def sdk_python() -> Path:
    """The SDK venv's interpreter."""
    return INTEROP_DIR / "sdk-venv" / "bin" / "python"


def _sdk_version(python: Path) -> str | None:
    if not python.exists():
        return None
    try:
        result = run(
            [python, "-c", f"import importlib.metadata as m; print(m.version({SDK_PACKAGE!r}))"],
            timeout=PROBE_TIMEOUT,
        )
    except PeerSetupFailed:
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def ensure_sdk() -> Path:
    """Make the SDK's venv (once) and return its Python."""
    venv = INTEROP_DIR / "sdk-venv"
    python = sdk_python()
    want = f"{SDK_PACKAGE}=={SDK_VERSION}"
    with locked("sdk-venv"):
        if _marked(venv, want) and _sdk_version(python) == SDK_VERSION:
            return python
        shutil.rmtree(venv, ignore_errors=True)
        made = run([sys.executable, "-m", "venv", venv], timeout=VENV_TIMEOUT)
        if made.returncode != 0:
            raise PeerSetupFailed(_failure(f"python -m venv {venv}", made))
        pip: list[str | os.PathLike[str]] = [
            python,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--no-input",
        ]
        result = run([*pip, "install", "-q", want], timeout=PIP_TIMEOUT)
        if result.returncode != 0:
            probe = run([*pip, "index", "versions", SDK_PACKAGE], timeout=PROBE_TIMEOUT)
            if probe.returncode != 0:
                raise PeerUnavailable(
                    f"the Python package index cannot be reached (`pip index versions "
                    f"{SDK_PACKAGE}` failed), so {want} cannot be installed:\n"
                    f"{_tail(probe.stderr)}"
                )
            raise PeerSetupFailed(_failure(f"pip install {want}", result))
        installed = _sdk_version(python)
        if installed != SDK_VERSION:
            raise PeerSetupFailed(f"pip installed {SDK_PACKAGE} {installed}, not {want}")
        (venv / _MARKER).write_text(want)
    return python
