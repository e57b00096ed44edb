"""Bootstrap for the benchmarks: a private venv holding mcp-sansio *and* the official SDK.

The benchmarks measure mcp-sansio and the official Python SDK (``mcp`` on PyPI) side by
side in one process, so both must be importable at once. :func:`ensure` makes sure the
current process runs inside ``benchmarks/.sdk-venv``:

- when it is already running there, it returns at once;
- otherwise it creates the venv if needed (with the interpreter that is running now),
  installs ``pip install -e <repo>`` and the pinned SDK when the install stamp does not
  match (the pin, the interpreter version or ``pyproject.toml`` changed), and then
  re-executes the current script inside the venv with the same arguments.

So ``python benchmarks/run.py`` works from the dev venv or from a bare ``python3``.
Set ``MCP_SANSIO_BENCH_NO_SDK=1`` to skip all of this and run in the current interpreter
(the SDK columns then read "n/a").
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Final

__all__ = ["REPO", "SDK_PIN", "VENV", "ensure", "in_bench_venv"]

#: The official SDK release the benchmarks compare against. Changing it reinstalls.
SDK_PIN: Final = "mcp==2.3.0"

HERE: Final = Path(__file__).resolve().parent
REPO: Final = HERE.parent
VENV: Final = HERE / ".sdk-venv"
STAMP: Final = VENV / "bench-stamp.json"

_REEXEC_FLAG: Final = "MCP_SANSIO_BENCH_REEXEC"
NO_SDK_FLAG: Final = "MCP_SANSIO_BENCH_NO_SDK"


def _venv_python() -> Path:
    if os.name == "nt":  # pragma: no cover - the project runs on POSIX machines
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def in_bench_venv() -> bool:
    """Whether this process runs on the benchmark venv's interpreter."""
    try:
        return Path(sys.prefix).resolve() == VENV.resolve()
    except OSError:
        return False


def _wanted_stamp() -> dict[str, str]:
    pyproject = REPO / "pyproject.toml"
    digest = hashlib.sha256(pyproject.read_bytes()).hexdigest() if pyproject.exists() else ""
    return {
        "sdk": SDK_PIN,
        "python": ".".join(map(str, sys.version_info[:3])),
        "implementation": sys.implementation.name,
        "pyproject_sha256": digest,
    }


def _read_stamp() -> dict[str, str] | None:
    try:
        data = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _log(message: str) -> None:
    print(f"[benchmarks] {message}", file=sys.stderr, flush=True)


def _install(wanted: dict[str, str]) -> None:
    stamp = _read_stamp()
    py = _venv_python()
    if stamp is not None and stamp.get("python") != wanted["python"]:
        _log(f"interpreter changed ({stamp.get('python')} -> {wanted['python']}): new venv")
        shutil.rmtree(VENV)
    if not py.exists():
        _log(f"creating {VENV.relative_to(REPO)} with {sys.executable}")
        if VENV.exists():
            shutil.rmtree(VENV)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    _log(f"installing -e {REPO.name} and {SDK_PIN} (first run takes a while)")
    STAMP.unlink(missing_ok=True)
    cmd = [
        str(py),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-e",
        str(REPO),
        SDK_PIN,
    ]
    subprocess.run(cmd, check=True)
    STAMP.write_text(json.dumps(wanted, indent=2) + "\n")


def ensure() -> None:
    """Make sure this process runs inside the benchmark venv (see the module docstring).

    Returns only when running inside it (or when bootstrapping is switched off);
    otherwise replaces the process with the same script run by the venv's interpreter.
    """
    if os.environ.get(NO_SDK_FLAG):
        return
    if in_bench_venv():
        # The venv was set up by an earlier run; keep it honest about the pin.
        stamp = _read_stamp()
        if stamp is not None and stamp.get("sdk") != SDK_PIN:
            _log(f"warning: venv has {stamp.get('sdk')}, the pin is {SDK_PIN}")
        return
    if os.environ.get(_REEXEC_FLAG):
        raise SystemExit(
            f"[benchmarks] re-executed into {_venv_python()} but sys.prefix is {sys.prefix}"
        )
    wanted = _wanted_stamp()
    if _read_stamp() != wanted or not _venv_python().exists():
        try:
            _install(wanted)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(
                f"[benchmarks] could not set up {VENV}: {exc}\n"
                f"[benchmarks] set {NO_SDK_FLAG}=1 to run without the SDK"
            ) from exc
    py = str(_venv_python())
    env = dict(os.environ, **{_REEXEC_FLAG: "1"})
    env.pop("VIRTUALENV_ENV", None)
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONHOME", None)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(py, [py, *sys.argv], env)
