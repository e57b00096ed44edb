"""tox's inline plugin for this project (tox loads ``toxfile.py`` beside ``tox.ini``).

Two things, so that the README's test command needs nothing set by hand:

- **pyenv's Pythons are found.** pyenv's shims (``python3.12`` and so on) run a Python only
  when its version is active: ``PYENV_VERSION``, a ``.python-version`` file or pyenv's global
  version. When ``pyenv`` is on PATH and ``PYENV_VERSION`` is not set, this plugin sets it in
  tox's own process, for this run only: the versions active already, then the newest
  installed patch release of each of Python 3.10-3.13 they leave out. tox hands
  ``PYENV_VERSION`` to the interpreter discovery of each environment (``pass_env`` in
  ``tox.ini``). A ``PYENV_VERSION`` you set yourself is left as it is.
- **The run says which Pythons it used.** After tox's own summary it prints, for each
  environment that ran its commands, the interpreter (version and path), and for each of
  Python 3.10-3.13 whose environment did not run, why (for example ``py313: no python3.13
  on PATH and none in pyenv``).

Standard library and tox's plugin API only.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tox.config.sets import ConfigSet
from tox.plugin import impl
from tox.session.state import State
from tox.tox_env.api import ToxEnv
from tox.tox_env.python.api import Python

#: The Pythons the ``py3XY`` environments of ``tox.ini`` test (``requires-python >= 3.10``).
WANTED = ("3.10", "3.11", "3.12", "3.13")
#: A plain CPython release as pyenv names it (not ``3.13.0t``, ``3.12-dev`` or a virtualenv).
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_PY_ENV = re.compile(r"py(\d)(\d+)")
_PYENV_TIMEOUT = 30.0


@dataclass(frozen=True)
class Interpreter:
    """The base interpreter an environment ran with."""

    implementation: str
    version: str
    path: str


@dataclass
class _Run:
    """What this tox process learned: filled by the hooks, printed at exit."""

    #: The ``PYENV_VERSION`` this plugin set, if it did.
    pyenv_version_set: str | None = None
    #: Each environment that ran its commands, and its interpreter (``None``: not Python).
    ran: dict[str, Interpreter | None] = field(default_factory=dict)
    #: The environments torn down without having run their commands.
    not_run: set[str] = field(default_factory=set)


_lock = threading.Lock()
_run = _Run()


# ---------------------------------------------------------------------- pyenv


def _pyenv() -> str | None:
    """The ``pyenv`` executable on PATH, if any."""
    return shutil.which("pyenv")


def _pyenv_lines(pyenv: str, *args: str) -> list[str]:
    """The non-empty output lines of ``pyenv ARGS``; none when it fails."""
    try:
        done = subprocess.run(
            [pyenv, *args],
            capture_output=True,
            text=True,
            timeout=_PYENV_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def newest_releases(names: list[str]) -> dict[str, str]:
    """Map each ``major.minor`` among the plain CPython releases in ``names`` (pyenv's
    version names) to its newest patch release: ``{"3.12": "3.12.1", ...}``."""
    newest: dict[str, tuple[int, str]] = {}
    for name in names:
        match = _RELEASE.fullmatch(name)
        if match is None:
            continue
        minor = f"{match[1]}.{match[2]}"
        patch = int(match[3])
        if minor not in newest or patch > newest[minor][0]:
            newest[minor] = (patch, name)
    return {minor: name for minor, (_, name) in newest.items()}


def _minor_of(name: str) -> str | None:
    match = _RELEASE.fullmatch(name)
    return f"{match[1]}.{match[2]}" if match else None


def pyenv_version_for(active: list[str], installed: list[str]) -> str | None:
    """The ``PYENV_VERSION`` that keeps the ``active`` versions first and adds the newest
    ``installed`` release of each :data:`WANTED` Python they leave out; ``None`` when
    nothing would be added."""
    covered = {_minor_of(name) for name in active}
    newest = newest_releases(installed)
    added = [newest[minor] for minor in WANTED if minor in newest and minor not in covered]
    if not added:
        return None
    return ":".join([*active, *added])


def _expose_pyenv_pythons() -> None:
    """Set ``PYENV_VERSION`` for this process when pyenv is there and it is not set."""
    if os.environ.get("PYENV_VERSION"):
        return
    pyenv = _pyenv()
    if pyenv is None:
        return
    # ``pyenv version-name`` answers "3.11.7" or "3.11.7:3.12.1"; it fails when the active
    # version is not installed, and then only the added versions are active.
    active = [
        name for line in _pyenv_lines(pyenv, "version-name") for name in line.split(":") if name
    ]
    value = pyenv_version_for(active, _pyenv_lines(pyenv, "versions", "--bare"))
    if value is not None:
        os.environ["PYENV_VERSION"] = value
        _run.pyenv_version_set = value


# ---------------------------------------------------------------------- why a Python is missing


def _on_path(command: str) -> str | None:
    """``command`` on PATH, pyenv's shims left out (a shim that runs nothing is not a
    Python)."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    shims = os.path.normpath(os.path.join(root, "shims"))
    dirs = [
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and os.path.normpath(entry) != shims
    ]
    return shutil.which(command, path=os.pathsep.join(dirs))


def why_missing(minor: str) -> str:
    """Why no environment found a Python ``minor`` (such as ``3.13``), as far as PATH and
    pyenv tell."""
    command = f"python{minor}"
    found = _on_path(command)
    pyenv = _pyenv()
    in_pyenv = None
    if pyenv is not None:
        in_pyenv = newest_releases(_pyenv_lines(pyenv, "versions", "--bare")).get(minor)
    if found is None and pyenv is None:
        return f"no {command} on PATH (and no pyenv)"
    if found is None and in_pyenv is None:
        return f"no {command} on PATH and none in pyenv"
    if found is None:
        active = os.environ.get("PYENV_VERSION", "")
        if in_pyenv in active.split(":"):
            return f"pyenv's {in_pyenv} is active, but the environment did not run (see above)"
        return (
            f"pyenv has {in_pyenv}, but it is not active (PYENV_VERSION={active or 'unset'}; "
            f"unset PYENV_VERSION or add {in_pyenv} to it)"
        )
    return f"{command} is at {found}, but the environment did not run (see above)"


# ---------------------------------------------------------------------- the hooks


@impl
def tox_add_core_config(core_conf: ConfigSet, state: State) -> None:
    """Before any environment is configured: make pyenv's Pythons discoverable."""
    _expose_pyenv_pythons()


@impl
def tox_before_run_commands(tox_env: ToxEnv) -> None:
    """Record the base interpreter of an environment about to run its commands."""
    interpreter = None
    if isinstance(tox_env, Python):
        info = tox_env.base_python
        vi = info.version_info
        version = f"{vi.major}.{vi.minor}.{vi.micro}"
        if vi.releaselevel != "final":
            version += f"{vi.releaselevel[0]}{vi.serial}"
        path = str(info.extra.get("executable", "?"))
        interpreter = Interpreter(info.implementation, version, path)
    with _lock:
        _run.ran[tox_env.name] = interpreter


@impl
def tox_env_teardown(tox_env: ToxEnv) -> None:
    """Note an environment that ends without having run its commands (skipped, or failed
    in its setup)."""
    with _lock:
        if tox_env.name not in _run.ran:
            _run.not_run.add(tox_env.name)


def summary() -> list[str]:
    """The lines printed at the end of a run: which Python each environment ran with, and
    why any of :data:`WANTED` did not run. Empty when no environment ran or was skipped."""
    with _lock:
        ran = dict(_run.ran)
        missing = sorted(name for name in _run.not_run if _PY_ENV.fullmatch(name))
    if not ran and not missing:
        return []
    width = max(len(name) for name in [*ran, *missing])
    known = [i for i in ran.values() if i is not None]
    label = max((len(f"{i.implementation} {i.version}") for i in known), default=0)
    lines = ["Pythons of this run (toxfile.py):"]
    for name in sorted(ran, key=lambda name: (_PY_ENV.fullmatch(name) is None, name)):
        interpreter = ran[name]
        what = "(not a Python environment)"
        if interpreter is not None:
            which = f"{interpreter.implementation} {interpreter.version}"
            what = f"{which:<{label}}  {interpreter.path}"
        lines.append(f"  {name:<{width}}  {what}")
    for name in missing:
        match = _PY_ENV.fullmatch(name)
        assert match is not None
        minor = f"{match[1]}.{match[2]}"
        lines.append(f"  {name:<{width}}  did not run: {why_missing(minor)}")
    if _run.pyenv_version_set:
        lines.append(f"  (PYENV_VERSION={_run.pyenv_version_set} for this run, set by toxfile.py)")
    return lines


def _print_summary() -> None:
    lines = summary()
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()


atexit.register(_print_summary)
