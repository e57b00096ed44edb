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

``--compiled`` on any script's command line (or ``MCP_SANSIO_BENCH_COMPILED=1``) measures
the compiled core instead: the venv is ``benchmarks/.sdk-venv-compiled``, where mcp-sansio is
built with ``MCP_SANSIO_COMPILE=1`` (mypyc; see setup.py) and installed as a wheel, not in
editable mode (an editable compiled build would drop its extensions into ``src/``). It is
rebuilt whenever a file under ``src/`` or the build's own files change.
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

__all__ = ["COMPILED", "REPO", "SDK_PIN", "VENV", "ensure", "in_bench_venv"]

#: The official SDK release the benchmarks compare against. Changing it reinstalls.
SDK_PIN: Final = "mcp==2.3.0"

_REEXEC_FLAG: Final = "MCP_SANSIO_BENCH_REEXEC"
NO_SDK_FLAG: Final = "MCP_SANSIO_BENCH_NO_SDK"
COMPILED_FLAG: Final = "MCP_SANSIO_BENCH_COMPILED"

if "--compiled" in sys.argv[1:]:
    # Said once on the command line; the environment carries it to the re-executed process
    # and to the servers the adapter benchmarks spawn.
    sys.argv.remove("--compiled")
    os.environ[COMPILED_FLAG] = "1"

#: Whether this run measures the compiled core (``--compiled``).
COMPILED: Final = os.environ.get(COMPILED_FLAG) == "1"

HERE: Final = Path(__file__).resolve().parent
REPO: Final = HERE.parent
VENV: Final = HERE / (".sdk-venv-compiled" if COMPILED else ".sdk-venv")
STAMP: Final = VENV / "bench-stamp.json"


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


def _digest(paths: list[Path]) -> str:
    sha = hashlib.sha256()
    for path in sorted(p for p in paths if p.is_file()):
        sha.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def _wanted_stamp() -> dict[str, str]:
    stamp = {
        "sdk": SDK_PIN,
        "python": ".".join(map(str, sys.version_info[:3])),
        "implementation": sys.implementation.name,
        "pyproject_sha256": _digest([REPO / "pyproject.toml"]),
    }
    if COMPILED:  # an installed copy: any change to the sources needs a new build
        build_files = [REPO / "setup.py", *(REPO / "build_backend").glob("*.py")]
        sources = [
            path
            for path in (REPO / "src").rglob("*")
            if "__pycache__" not in path.parts
            and not str(path).endswith((".pyc", ".so"))
            and ".egg-info" not in str(path)
        ]
        stamp["sources_sha256"] = _digest([*sources, *build_files])
    return stamp


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
    how = "compiled with mypyc" if COMPILED else "-e"
    _log(f"installing {REPO.name} ({how}) and {SDK_PIN} (first run takes a while)")
    STAMP.unlink(missing_ok=True)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if COMPILED:
        # The dependencies and the SDK with a quick pure build, then the compiled build over it.
        subprocess.run([*pip, str(REPO), SDK_PIN], check=True)
        env = dict(os.environ, MCP_SANSIO_COMPILE="1")
        subprocess.run([*pip, "--force-reinstall", "--no-deps", str(REPO)], check=True, env=env)
    else:
        subprocess.run([*pip, "-e", str(REPO), SDK_PIN], check=True)
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
