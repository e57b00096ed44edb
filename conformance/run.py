#!/usr/bin/env python3
"""Run the official MCP conformance suite against an HTTP server and an HTTP client.

The suite is the npm package ``@modelcontextprotocol/conformance``, in two pinned versions:
``0.1.16`` (the stable line) and ``0.2.0-alpha.12`` (the next one, which adds the frozen
requirement sets ``--requirements 2025-11-25`` and ``--requirements 2026-07-28``). Both need
Node 22 (``fs.globSync``), which is installed from the npm registry into a folder; everything
else keeps the machine's Node.

Subcommands::

    python conformance/run.py setup
    python conformance/run.py server --command "python -m mcp_sansio serve --http 127.0.0.1:{port}"
    python conformance/run.py client --command "python -m mcp_sansio.conformance_client"
    python conformance/run.py summary RESULTS_DIR

``setup`` installs, once and under a file lock, into ``.interop/conformance/`` (or
``$MCP_SANSIO_INTEROP_DIR/conformance/``): Node 22 (``npm install --prefix node22 node@22``)
and each suite version in its own prefix. ``server`` and ``client`` run it first.

``server`` starts the server command (``{port}`` is replaced by a free loopback port, in the
arguments and in ``--server-env`` values) once per suite run, waits until it accepts TCP
connections, runs ``conformance server --url http://localhost:PORT/mcp`` and stops it
(SIGTERM, then SIGKILL) afterwards. The suite runs:

- ``0.1.16`` ``--suite all``;
- ``0.2.0-alpha.12`` ``--requirements 2025-11-25``;
- ``0.2.0-alpha.12`` ``--requirements 2026-07-28``.

``client`` runs ``conformance client --command CMD --scenario X`` for each client scenario
(``0.2.0-alpha.12`` also with ``--spec-version``, which picks the wire the scenario's mock
server speaks and the ``MCP_CONFORMANCE_PROTOCOL_VERSION`` the client is given): the
non-auth ones in the runs ``client`` (0.1.16), ``client-2025-11-25`` and
``client-2026-07-28``; every ``auth/*`` scenario the suite's ``list`` names in the run
``client-auth`` of each version (22 in 0.1.16, 33 in 0.2.0-alpha.12, extensions included),
in 0.2.0-alpha.12 each at the newest protocol version its ``list`` entry gives (an
extension, on no timeline, without ``--spec-version``: the suite then says 2025-11-25).

Each run reads ``conformance/expected-failures-<version>-<run>.yml`` when it exists (for
example ``expected-failures-0.2.0-alpha.12-server-2026-07-28.yml``): the suite's own format
(``server:``/``client:`` lists of ``<scenario>`` or, for 0.2, ``<scenario>:<check-id>``),
restricted here to ``auth/*`` and extension scenarios, each entry with a ``#`` comment
giving its reason.

The suite hands the client command to ``sh -c`` with the URL appended, so shell quoting
works in it; the client gets ``MCP_CONFORMANCE_SCENARIO`` (and, from 0.2,
``MCP_CONFORMANCE_PROTOCOL_VERSION``; for some scenarios ``MCP_CONFORMANCE_CONTEXT``) and must
exit 0 within 30 s. A client scenario fails on a FAILURE check and also whenever the suite
failed the run: the client exited non-zero or late, or a check only WARNED (the suite fails
client runs on warnings). A server scenario fails on a FAILURE check, or when it threw inside
the suite (a result folder without ``checks.json``).

``--no-expected-failures`` reads none of those files, and ``client --spec-version V`` runs
each ``client-auth`` scenario that lists V at V (both to measure another implementation, as
``REFERENCE.md`` does). ``--only`` picks runs (a suite version, a run name such as
``server-2026-07-28`` or ``client``, or ``VERSION/RUN``); ``--scenario`` picks client
scenarios; ``--jobs N`` runs N suite invocations at once (default 1). Results go to
``--out`` (default ``.interop/conformance/results/<UTC time>/``), laid out
``<version>/<run>/`` for a server run and ``<version>/<run>/<scenario>/`` for a client
scenario.

Every results folder gets the suite's ``checks.json`` files, the suite's and the server's
logs, and a ``run.json``; the summary (printed, and written as JSON with ``--json FILE``)
gives, per suite version and run, the scenarios and checks passed and failed and the names
of the failures. Scenarios a requirement set runs without scoring them (extensions,
pending scenarios, scenarios added after the release) are reported but, as in the suite,
do not fail the run.

Exit status: 0 when there is no unexpected failure, 1 when there is one, 2 when the setup
or the harness itself failed, 3 when the suite cannot be had on this machine (no ``node``
or ``npm`` on PATH, or the npm registry cannot be reached): the test that calls this skips
on 3 and only on 3. Every subprocess has a time bound; all traffic stays on loopback
(``tests/interop/loopback.cjs`` is preloaded into the Node processes, which otherwise
listen on every interface).

Standard library only; Python 3.10+.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

#: The repository's root (this file is ``conformance/run.py``).
ROOT = Path(__file__).resolve().parents[1]
#: Where the peers of the tests are installed, as in ``tests/interop/peers.py``.
INTEROP_DIR = Path(os.environ.get("MCP_SANSIO_INTEROP_DIR") or ROOT / ".interop")
#: This harness's part of it.
CONFORMANCE_DIR = INTEROP_DIR / "conformance"
#: The folder of this file: the expected-failures files live here.
HERE = Path(__file__).resolve().parent

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_STABLE = "0.1.16"
SUITE_NEXT = "0.2.0-alpha.12"
SUITE_VERSIONS = (SUITE_STABLE, SUITE_NEXT)
NODE_SPEC = "node@22"
NODE_MAJOR = "v22."

#: The preload that forces Node's wildcard listens onto 127.0.0.1; the interop tests
#: preload the same file.
BIND_LOCALHOST = ROOT / "tests" / "interop" / "loopback.cjs"

#: Bounds, in seconds.
NPM_TIMEOUT = 600.0
PROBE_TIMEOUT = 60.0
LOCK_TIMEOUT = 3 * NPM_TIMEOUT
SERVER_START_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 10.0
SERVER_RUN_TIMEOUT = 900.0
CLIENT_RUN_TIMEOUT = 180.0
#: The suite's own bound on one client process (``--timeout``), in milliseconds.
CLIENT_PROCESS_TIMEOUT_MS = 30_000

#: Suite runs at once. One by default: the sse-retry check allows the client 200 ms of
#: lateness, which parallel runs on a small machine can eat.
DEFAULT_JOBS = 1

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_HARNESS = 2
EXIT_UNAVAILABLE = 3

_MARKER = ".mcp-sansio-installed"
_TAIL = 4000
_STATUSES = ("SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: ``<scenario>-2026-01-02T03-04-05-678Z``: the folder the suite writes each result into.
_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


class Unavailable(Exception):
    """The suite cannot be had on this machine (no node/npm, or no registry): skip."""


class HarnessError(Exception):
    """The setup or the harness itself failed (not a conformance failure)."""


def _tail(text: str, limit: int = _TAIL) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- processes


def _kill_group(proc: subprocess.Popen[Any], grace: float) -> None:
    """Stop a process started in its own session, with everything it started: SIGTERM to
    its group, then SIGKILL after ``grace`` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    # Children that outlived their parent, and a parent that ignored SIGTERM.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)


def run_captured(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a short command to its end within ``timeout`` seconds (else
    :class:`HarnessError`), its output captured."""
    command = [os.fspath(part) for part in argv]
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=None if env is None else dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        text = "".join(
            part.decode(errors="replace") if isinstance(part, bytes) else part
            for part in (exc.stdout or "", exc.stderr or "")
        )
        raise HarnessError(
            f"`{shlex.join(command)}` took more than {timeout:g} s:\n{_tail(text)}"
        ) from None


def run_logged(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str],
    log: Path,
    cwd: Path = ROOT,
) -> tuple[int | None, float]:
    """Run ``argv`` in its own session with stdout and stderr into ``log``; kill its whole
    group after ``timeout`` seconds. Returns the exit code (``None`` on timeout) and the
    time it took."""
    started = time.monotonic()
    with open(log, "ab") as out:
        out.write(f"$ {shlex.join(argv)}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        try:
            code: int | None = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
            out.write(f"\n[run.py] killed after {timeout:g} s\n".encode())
        finally:
            _kill_group(proc, 5.0)
    return code, time.monotonic() - started


# ---------------------------------------------------------------------- setup


@contextlib.contextmanager
def locked(name: str, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold ``<interop>/<name>.lock`` (an exclusive ``flock``), waiting at most ``timeout``
    seconds: parallel runs (``tox -p``) wait for each other's install."""
    INTEROP_DIR.mkdir(parents=True, exist_ok=True)
    with open(INTEROP_DIR / f"{name}.lock", "a+b") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise HarnessError(
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


def _package_version(folder: Path) -> str | None:
    try:
        version = json.loads((folder / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, str) else None


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """What ``setup`` installed."""

    #: Node 22's executable and the folder to put first on PATH for the suite.
    node: Path
    node_bin: Path
    node_version: str
    #: The suite's entry point (``dist/index.js``), per version.
    suites: dict[str, Path]
    bind_localhost: Path

    def suite_argv(self, version: str) -> list[str]:
        return [os.fspath(self.node), os.fspath(self.suites[version])]

    def suite_env(self) -> dict[str, str]:
        """The environment of the suite: Node 22 first on PATH, and the loopback preload
        (the suite's client mode listens for the client under test)."""
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([os.fspath(self.node_bin), env.get("PATH", "")])
        env["NODE_OPTIONS"] = node_options(self.bind_localhost)
        return env


def node_options(bind_localhost: Path) -> str:
    """``NODE_OPTIONS`` with the loopback preload added to whatever is already there."""
    path = os.fspath(bind_localhost)
    require = f'--require "{path}"' if " " in path else f"--require {path}"
    existing = os.environ.get("NODE_OPTIONS", "").strip()
    return f"{existing} {require}".strip()


def _npm_install(npm: str, prefix: Path, spec: str) -> None:
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    _log(f"conformance setup: npm install --prefix {prefix} {spec}")
    result = run_captured(
        [npm, "install", "--prefix", prefix, spec, "--no-audit", "--no-fund", "--loglevel=error"],
        timeout=NPM_TIMEOUT,
    )
    if result.returncode != 0:
        ping = run_captured([npm, "ping"], timeout=PROBE_TIMEOUT)
        if ping.returncode != 0:
            raise Unavailable(
                f"the npm registry cannot be reached (`npm ping` failed), so {spec} cannot be "
                f"installed:\n{_tail(ping.stderr)}"
            )
        raise HarnessError(
            f"npm install {spec} failed (exit {result.returncode}):\n"
            f"{_tail(result.stdout)}\n{_tail(result.stderr)}".rstrip()
        )


def setup() -> Toolchain:
    """Install Node 22 and both suite versions (once; later calls only check them)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, p in (("node", node), ("npm", npm)) if p is None)
        raise Unavailable(f"{missing} not found on PATH: cannot install {SUITE_PACKAGE}")
    if not BIND_LOCALHOST.is_file():
        raise HarnessError(
            f"{BIND_LOCALHOST} does not exist: it keeps the suite's Node servers on loopback "
            "(it is part of the repository; is the checkout complete?)"
        )
    with locked("conformance"):
        node_prefix = CONFORMANCE_DIR / "node22"
        node_bin = node_prefix / "node_modules" / ".bin"
        node22 = node_bin / "node"
        version = _node_version(node22) if _marked(node_prefix, NODE_SPEC) else None
        if version is None:
            _npm_install(npm, node_prefix, NODE_SPEC)
            version = _node_version(node22)
            if version is None:
                raise HarnessError(f"npm install {NODE_SPEC} left no working Node 22 at {node22}")
            (node_prefix / _MARKER).write_text(NODE_SPEC)
        suites: dict[str, Path] = {}
        for suite in SUITE_VERSIONS:
            prefix = CONFORMANCE_DIR / f"suite-{suite}"
            folder = prefix / "node_modules" / "@modelcontextprotocol" / "conformance"
            entry = folder / "dist" / "index.js"
            want = f"{SUITE_PACKAGE}@{suite}"
            if not (_marked(prefix, want) and entry.is_file()):
                _npm_install(npm, prefix, want)
                installed = _package_version(folder)
                if installed != suite or not entry.is_file():
                    raise HarnessError(f"npm installed {SUITE_PACKAGE} {installed}, not {suite}")
                (prefix / _MARKER).write_text(want)
            suites[suite] = entry
    return Toolchain(
        node=node22,
        node_bin=node_bin,
        node_version=version,
        suites=suites,
        bind_localhost=BIND_LOCALHOST,
    )


def _node_version(node: Path) -> str | None:
    if not node.exists():
        return None
    try:
        result = run_captured([node, "--version"], timeout=PROBE_TIMEOUT)
    except HarnessError:
        return None
    version = result.stdout.strip()
    return version if result.returncode == 0 and version.startswith(NODE_MAJOR) else None


# ---------------------------------------------------------------------- the suite's catalogue


@dataclasses.dataclass
class Catalogue:
    """What one suite version knows: scenario names with their tags, per leg."""

    server: dict[str, list[str]]
    client: dict[str, list[str]]

    def is_extension(self, scenario: str) -> bool:
        tags = self.server.get(scenario, []) + self.client.get(scenario, [])
        return "extension" in tags


@dataclasses.dataclass
class Requirements:
    """A frozen requirement set (``conformance list --requirements REV``)."""

    server: list[str]
    client: list[str]
    #: scenario -> (leg, reason) for what the set runs without scoring.
    not_scored: dict[str, tuple[str, str]]


_ITEM = re.compile(r"^\s+- (\S+)(?: \[([^\]]*)\])?\s*$")


def _list(tools: Toolchain, version: str, *args: str) -> str:
    result = run_captured(
        [*tools.suite_argv(version), "list", *args], timeout=PROBE_TIMEOUT, env=tools.suite_env()
    )
    if result.returncode != 0:
        raise HarnessError(
            f"conformance@{version} list {' '.join(args)} failed (exit {result.returncode}):\n"
            f"{_tail(result.stdout)}\n{_tail(result.stderr)}"
        )
    return result.stdout


def load_catalogue(tools: Toolchain, version: str) -> Catalogue:
    catalogue = Catalogue(server={}, client={})
    target: dict[str, list[str]] | None = None
    for line in _list(tools, version).splitlines():
        if line.startswith("Server scenarios"):
            target = catalogue.server
        elif line.startswith("Client scenarios"):
            target = catalogue.client
        elif line and not line[0].isspace():
            target = None
        elif target is not None and (match := _ITEM.match(line)):
            target[match[1]] = [t.strip() for t in (match[2] or "").split(",") if t.strip()]
    if not catalogue.server or not catalogue.client:
        raise HarnessError(f"conformance@{version} list printed no scenarios")
    return catalogue


def load_requirements(tools: Toolchain, version: str, revision: str) -> Requirements:
    out = Requirements(server=[], client=[], not_scored={})
    section = ""
    reason = ""
    for line in _list(tools, version, "--requirements", revision).splitlines():
        if line.startswith("Server scenarios"):
            section = "server"
        elif line.startswith("Client scenarios"):
            section = "client"
        elif line.startswith("Run and reported, but never scored"):
            section = "not-scored"
        elif section == "not-scored" and (head := re.match(r"^  (\S+) \(\d+\):$", line)):
            reason = head[1]
        elif match := _ITEM.match(line):
            if section == "server":
                out.server.append(match[1])
            elif section == "client":
                out.client.append(match[1])
            elif section == "not-scored":
                out.not_scored[match[1]] = (match[2] or "", reason)
    if not out.server:
        raise HarnessError(f"conformance@{version} list --requirements {revision}: no scenarios")
    return out


# ---------------------------------------------------------------------- expected failures


@dataclasses.dataclass(frozen=True)
class Expected:
    """One entry of an expected-failures file: a whole scenario, or one check of it."""

    scenario: str
    check: str | None
    reason: str


def expected_failures_file(version: str, run: str, use: bool = True) -> Path:
    """The expected-failures file of a run (a path that does not exist when ``use`` is
    False: ``--no-expected-failures``)."""
    if not use:
        return HERE / "no-expected-failures" / "none.yml"
    return HERE / f"expected-failures-{version}-{run}.yml"


def read_expected(path: Path, leg: str, catalogue: Catalogue) -> list[Expected]:
    """The entries of ``leg`` (``server`` or ``client``) in an expected-failures file.

    The suite reads the file itself (it is YAML); this reads the one shape allowed here, a
    mapping of ``server``/``client`` to a block list of plain scalars, each with a ``#``
    comment giving its reason, and enforces the rule: only ``auth/*`` and extension
    scenarios may be listed.
    """
    if not path.is_file():
        return []
    entries: list[Expected] = []
    section: str | None = None
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}:{number}"
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        head = re.fullmatch(r"(server|client):\s*(\[\s*\])?\s*(#.*)?", raw)
        if head:
            section = head[1]
            continue
        item = re.fullmatch(r"\s+-\s+([^\s#]+)\s*(#\s*(.*))?", raw)
        if item is None or section is None:
            raise HarnessError(f"{where}: not `server:`, `client:` or `  - <scenario>  # why`")
        if not (item[3] or "").strip():
            raise HarnessError(f"{where}: {item[1]} needs a `# reason` comment")
        name = item[1].strip("'\"")
        scenario, _, check = name.partition(":")
        if not (scenario.startswith("auth/") or catalogue.is_extension(scenario)):
            raise HarnessError(
                f"{where}: {scenario} may not be an expected failure: only auth/* and "
                "extension scenarios may be"
            )
        if section == leg:
            entries.append(Expected(scenario, check or None, item[3].strip()))
    return entries


# ---------------------------------------------------------------------- results


@dataclasses.dataclass
class ScenarioResult:
    scenario: str
    scored: bool
    counts: dict[str, int]
    failed_checks: list[str]
    warning_checks: list[str]
    #: Why the scenario failed besides its checks (client exit, no results, ...).
    error: str | None = None
    not_scored_reason: str | None = None

    @property
    def failed(self) -> bool:
        return self.counts["FAILURE"] > 0 or self.error is not None


@dataclasses.dataclass
class RunResult:
    suite: str
    mode: str
    run: str
    args: list[str]
    results_dir: str
    exit_code: int | None = None
    seconds: float = 0.0
    scenarios: list[ScenarioResult] = dataclasses.field(default_factory=list)
    unexpected: list[str] = dataclasses.field(default_factory=list)
    expected: list[str] = dataclasses.field(default_factory=list)
    not_scored_failures: list[str] = dataclasses.field(default_factory=list)
    messages: list[str] = dataclasses.field(default_factory=list)
    #: Seconds per scenario (client runs, one suite invocation each).
    timings: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.suite} {self.mode} {self.run}"

    def to_json(self) -> dict[str, Any]:
        scored = [s for s in self.scenarios if s.scored]
        unscored = [s for s in self.scenarios if not s.scored]
        return {
            "suite": self.suite,
            "mode": self.mode,
            "run": self.run,
            "args": self.args,
            "results_dir": self.results_dir,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 1),
            "ok": not self.unexpected,
            "scenarios": {
                "passed": sum(1 for s in scored if not s.failed),
                "failed": sum(1 for s in scored if s.failed),
                "not_scored": len(unscored),
                "not_scored_failed": sum(1 for s in unscored if s.failed),
            },
            # The checks of the scored scenarios, then those of the others.
            "checks": _check_totals(scored),
            "checks_not_scored": _check_totals(unscored),
            "unexpected_failures": self.unexpected,
            "expected_failures": self.expected,
            "not_scored_failures": self.not_scored_failures,
            "warnings": [
                f"{s.scenario}:{check}" for s in self.scenarios for check in s.warning_checks
            ],
            "messages": self.messages,
            "scenario_seconds": {k: round(v, 1) for k, v in self.timings.items()},
            "results": [dataclasses.asdict(s) for s in self.scenarios],
        }


def _check_totals(results: list[ScenarioResult]) -> dict[str, int]:
    totals = dict.fromkeys(_STATUSES, 0)
    for result in results:
        for status, count in result.counts.items():
            totals[status] = totals.get(status, 0) + count
    return {
        "passed": totals["SUCCESS"],
        "failed": totals["FAILURE"],
        "warnings": totals["WARNING"],
        "skipped": totals["SKIPPED"],
        "info": totals["INFO"],
    }


def read_checks(path: Path) -> list[dict[str, Any]]:
    """One ``checks.json``: a JSON array of checks, each with at least ``id``, ``name``,
    ``description``, ``status`` (SUCCESS, FAILURE, WARNING, SKIPPED or INFO) and
    ``timestamp``, often ``errorMessage`` and ``details``."""
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: not a JSON array")
    return [c for c in data if isinstance(c, dict)]


def scenario_of(results_dir: Path, checks_json: Path, mode: str) -> str:
    """The scenario a ``checks.json`` belongs to, from the folder the suite made for it:
    ``server-<scenario>-<timestamp>`` in server mode, ``<scenario>-<timestamp>`` in client
    mode (scenario names may hold a ``/``, which makes a sub-folder)."""
    relative = checks_json.parent.relative_to(results_dir).as_posix()
    name = _STAMP.sub("", relative)
    if mode == "server" and name.startswith("server-"):
        name = name[len("server-") :]
    return name


def summarize_checks(
    scenario: str, checks: list[dict[str, Any]], scored: bool, reason: str | None
) -> ScenarioResult:
    counts = dict.fromkeys(_STATUSES, 0)
    failed: list[str] = []
    warned: list[str] = []
    for check in checks:
        status = str(check.get("status"))
        counts[status] = counts.get(status, 0) + 1
        label = str(check.get("id"))
        details = check.get("details")
        message = check.get("errorMessage") or (
            details.get("message") if isinstance(details, dict) else None
        )
        if message:
            label += f" ({_tail(str(message), 300)})"
        if status == "FAILURE":
            failed.append(label)
        elif status == "WARNING":
            warned.append(label)
    return ScenarioResult(scenario, scored, counts, failed, warned, None, reason)


def judge(run: RunResult, expected: list[Expected]) -> None:
    """Sort the failures of ``run`` into unexpected, expected and not scored."""
    whole = {e.scenario for e in expected if e.check is None}
    checks = {(e.scenario, e.check) for e in expected if e.check is not None}
    for result in run.scenarios:
        if not result.failed:
            continue
        names = [f"{result.scenario}:{c}" for c in result.failed_checks]
        if result.error is not None:
            names.append(f"{result.scenario} ({result.error})")
        if not result.scored:
            run.not_scored_failures.extend(names)
            continue
        if result.scenario in whole:
            run.expected.extend(names)
            continue
        for check in result.failed_checks:
            check_id = check.split(" ", 1)[0]
            target = run.expected if (result.scenario, check_id) in checks else run.unexpected
            target.append(f"{result.scenario}:{check}")
        if result.error is not None:
            run.unexpected.append(f"{result.scenario} ({result.error})")


# ---------------------------------------------------------------------- the server leg


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


class ServerExited(Exception):
    """The server under test exited before it accepted connections."""


@contextlib.contextmanager
def running_server(
    command: str,
    env_items: Sequence[str],
    port: int,
    log: Path,
    bind_localhost: Path,
    startup_timeout: float,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` (``{port}`` replaced) with its output into ``log``, wait until
    127.0.0.1:``port`` accepts connections, and stop it (SIGTERM, then SIGKILL, to its
    whole process group) at the end."""
    argv = [part.replace("{port}", str(port)) for part in shlex.split(command)]
    env = dict(os.environ)
    for item in env_items:
        key, _, value = item.partition("=")
        env[key] = value.replace("{port}", str(port))
    # A Node server under test must listen on loopback only, like the suite.
    env["NODE_OPTIONS"] = node_options(bind_localhost)
    out: IO[bytes]
    with open(log, "ab") as out:
        out.write(f"$ {shlex.join(argv)}\n".encode())
        out.flush()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerExited(f"the server command cannot be started: {exc}") from None
        try:
            deadline = time.monotonic() + startup_timeout
            while not _accepts(port):
                code = proc.poll()
                if code is not None:
                    raise ServerExited(
                        f"the server command exited (code {code}) before accepting connections "
                        f"on 127.0.0.1:{port}"
                    )
                if time.monotonic() > deadline:
                    raise ServerExited(
                        f"the server accepted no connection on 127.0.0.1:{port} within "
                        f"{startup_timeout:g} s"
                    )
                time.sleep(0.1)
            yield proc
        finally:
            _kill_group(proc, SERVER_STOP_TIMEOUT)


@dataclasses.dataclass(frozen=True)
class ServerRun:
    suite: str
    run: str
    args: tuple[str, ...]
    #: The requirement set that decides which scenarios are scored (None: all are).
    revision: str | None


SERVER_RUNS = (
    ServerRun(SUITE_STABLE, "server-all", ("--suite", "all"), None),
    ServerRun(SUITE_NEXT, "server-2025-11-25", ("--requirements", "2025-11-25"), "2025-11-25"),
    ServerRun(SUITE_NEXT, "server-2026-07-28", ("--requirements", "2026-07-28"), "2026-07-28"),
)


@dataclasses.dataclass
class Context:
    tools: Toolchain
    out: Path
    catalogues: dict[str, Catalogue]
    requirements: dict[tuple[str, str], Requirements]
    #: False with ``--no-expected-failures`` (measuring another implementation).
    use_expected: bool = True
    #: ``client --spec-version``: the version of each per-scenario run that lists it.
    spec_override: str | None = None


def run_server_leg(
    ctx: Context,
    spec: ServerRun,
    command: str,
    env_items: Sequence[str],
    host: str,
    path: str,
    startup_timeout: float,
) -> RunResult:
    folder = ctx.out / spec.suite / spec.run
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results"
    catalogue = ctx.catalogues[spec.suite]
    expected_file = expected_failures_file(spec.suite, spec.run, ctx.use_expected)
    expected = read_expected(expected_file, "server", catalogue)
    port = free_port()
    url = f"http://{host}:{port}{path}"
    args = [*spec.args, "-o", os.fspath(results)]
    if expected_file.is_file():
        args += ["--expected-failures", os.fspath(expected_file)]
    run = RunResult(spec.suite, "server", spec.run, args, os.fspath(folder))
    server_log = folder / "server.log"
    suite_log = folder / "suite.log"
    _log(f"conformance {run.ident}: server on 127.0.0.1:{port}, suite against {url}")
    try:
        with running_server(
            command, env_items, port, server_log, ctx.tools.bind_localhost, startup_timeout
        ) as proc:
            run.exit_code, run.seconds = run_logged(
                [*ctx.tools.suite_argv(spec.suite), "server", "--url", url, *args],
                timeout=SERVER_RUN_TIMEOUT,
                env=ctx.tools.suite_env(),
                log=suite_log,
            )
            died = proc.poll()
    except ServerExited as exc:
        output = server_log.read_text(errors="replace") if server_log.exists() else ""
        message = (
            f"THE SERVER UNDER TEST DID NOT COME UP: {exc}.\n  command: {command}\n"
            f"  its output ({server_log}):\n{_tail(output, 2000)}"
        )
        _log(message)
        run.messages.append(message)
        run.unexpected.append(f"(server did not start: {exc})")
        return run
    if died is not None:
        run.messages.append(
            f"the server exited (code {died}) while the suite ran; see {server_log}"
        )
    if run.exit_code is None:
        run.messages.append(f"the suite ran past {SERVER_RUN_TIMEOUT:g} s and was killed")
    requirements = ctx.requirements.get((spec.suite, spec.revision or ""))
    seen: set[str] = set()
    log_text = _ANSI.sub("", suite_log.read_text(errors="replace")) if suite_log.exists() else ""
    # The suite makes a folder per scenario before running it and writes checks.json into
    # it afterwards; a scenario that threw has a folder and no checks.json.
    found = results.rglob("*") if results.exists() else iter(())
    for scenario_folder in sorted(p for p in found if p.is_dir() and _STAMP.search(p.name)):
        checks_json = scenario_folder / "checks.json"
        scenario = scenario_of(results, checks_json, "server")
        seen.add(scenario)
        scored, reason = True, None
        if requirements is not None and scenario not in requirements.server:
            scored, reason = False, requirements.not_scored.get(scenario, ("", "not scored"))[1]
        result = summarize_checks(scenario, [], scored, reason)
        if not checks_json.exists():
            crash = re.search(rf"Failed to run scenario {re.escape(scenario)}: (.*)", log_text)
            result.error = "the scenario threw" + (f": {crash[1].strip()}" if crash else "")
        else:
            try:
                result = summarize_checks(scenario, read_checks(checks_json), scored, reason)
            except ValueError as exc:
                result.error = f"unreadable checks.json: {exc}"
        run.scenarios.append(result)
    wanted = requirements.server if requirements is not None else list(catalogue.server)
    for scenario in wanted:
        if scenario not in seen:
            result = summarize_checks(scenario, [], True, None)
            result.error = "no results (the suite did not run it, or died first)"
            run.scenarios.append(result)
    judge(run, expected)
    if run.exit_code != 0 and not run.unexpected:
        run.unexpected.append(
            f"(the suite exited with {run.exit_code}: stale expected-failures entries, "
            f"warnings under a baseline, or a crash; see {suite_log})"
        )
    if died is not None:
        run.unexpected.append(f"(the server exited with code {died} during the run)")
    return run


# ---------------------------------------------------------------------- the client leg


#: ``ClientRun.spec_version`` for "per scenario": the newest protocol version the suite's
#: ``list`` gives the scenario, none for an extension (the suite then picks its own).
PER_SCENARIO = "per-scenario"
#: ``ClientRun.scenarios`` for "every ``auth/*`` client scenario the suite's ``list`` names".
AUTH_SCENARIOS: tuple[str, ...] = ("auth/*",)
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclasses.dataclass(frozen=True)
class ClientRun:
    suite: str
    run: str
    #: ``--spec-version`` (None: the suite's default for the scenario; 0.1.16 has no wire
    #: choice and sets no MCP_CONFORMANCE_PROTOCOL_VERSION; :data:`PER_SCENARIO`: each
    #: scenario's newest version).
    spec_version: str | None
    #: The scenarios, or :data:`AUTH_SCENARIOS`.
    scenarios: tuple[str, ...]

    def names(self, catalogue: Catalogue) -> list[str]:
        """The scenarios of this run in ``catalogue``'s order."""
        if self.scenarios == AUTH_SCENARIOS:
            return [name for name in catalogue.client if name.startswith("auth/")]
        return list(self.scenarios)

    def version_for(self, scenario: str, catalogue: Catalogue) -> str | None:
        """The ``--spec-version`` of ``scenario``."""
        if self.spec_version != PER_SCENARIO:
            return self.spec_version
        dated = sorted(t for t in catalogue.client.get(scenario, []) if _DATED.match(t))
        return dated[-1] if dated else None


_LEGACY_CLIENT = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")

CLIENT_RUNS = (
    ClientRun(SUITE_STABLE, "client", None, _LEGACY_CLIENT),
    ClientRun(
        SUITE_NEXT,
        "client-2025-11-25",
        "2025-11-25",
        (*_LEGACY_CLIENT, "json-schema-2020-12-preservation"),
    ),
    ClientRun(
        SUITE_NEXT,
        "client-2026-07-28",
        "2026-07-28",
        (
            "tools_call",
            "request-metadata",
            "http-standard-headers",
            "http-custom-headers",
            "http-invalid-tool-headers",
            "sep-2322-client-request-state",
            "json-schema-ref-no-deref",
            "json-schema-2020-12-preservation",
        ),
    ),
    # Every auth/* scenario, one suite invocation each: 0.1.16 has no wire choice; in
    # 0.2.0-alpha.12 each runs at the newest version its `list` entry names (an extension
    # at none: the suite's own default, 2025-11-25 for a client scenario).
    ClientRun(SUITE_STABLE, "client-auth", None, AUTH_SCENARIOS),
    ClientRun(SUITE_NEXT, "client-auth", PER_SCENARIO, AUTH_SCENARIOS),
)


def _client_failure(log_text: str, results: Path) -> str:
    """Why the suite failed a client run that has no failing check, from its output."""
    if "CLIENT TIMED OUT" in log_text:
        reason = f"the client did not exit within {CLIENT_PROCESS_TIMEOUT_MS // 1000} s"
    elif match := re.search(r"CLIENT EXITED WITH ERROR \(code (-?\d+)\)", log_text):
        reason = f"the client exited with code {match[1]}"
    elif "Warning Checks:" in log_text:
        reason = "warnings (the suite fails a client scenario on a warning)"
    else:
        reason = "the suite reported a failure"
    stderr = sorted(results.rglob("stderr.txt")) if results.exists() else []
    if stderr:
        line = _last_error_line(stderr[-1].read_text(errors="replace"))
        if line:
            reason += f"; its stderr: {_tail(line, 300)}"
    return reason


def _last_error_line(text: str) -> str | None:
    """The line of a client's stderr that most likely says what went wrong: the last one
    naming an error or exception, else the last one with words in it."""
    lines = [ln.strip(" \t|+-") for ln in text.splitlines()]
    lines = [ln for ln in lines if re.search(r"\w", ln)]
    for line in reversed(lines):
        if re.search(r"(Error|Exception|Traceback|error:)", line):
            return line
    return lines[-1] if lines else None


def run_client_scenario(
    ctx: Context, spec: ClientRun, scenario: str, command: str, expected_file: Path
) -> tuple[ScenarioResult, int | None, float, list[str]]:
    safe = scenario.replace("/", "_")
    folder = ctx.out / spec.suite / spec.run / safe
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results"
    args = ["--scenario", scenario, "--timeout", str(CLIENT_PROCESS_TIMEOUT_MS)]
    catalogue = ctx.catalogues[spec.suite]
    version = spec.version_for(scenario, catalogue)
    if (
        spec.spec_version == PER_SCENARIO
        and ctx.spec_override is not None
        and ctx.spec_override in catalogue.client.get(scenario, [])
    ):
        version = ctx.spec_override
    if version is not None:
        args += ["--spec-version", version]
    args += ["-o", os.fspath(results)]
    if expected_file.is_file():
        args += ["--expected-failures", os.fspath(expected_file)]
    log = folder / "suite.log"
    code, seconds = run_logged(
        [*ctx.tools.suite_argv(spec.suite), "client", "--command", command, *args],
        timeout=CLIENT_RUN_TIMEOUT,
        env=ctx.tools.suite_env(),
        log=log,
    )
    checks: list[dict[str, Any]] = []
    error: str | None = None
    found = sorted(results.rglob("checks.json")) if results.exists() else []
    if found:
        try:
            checks = read_checks(found[-1])
        except ValueError as exc:
            error = f"unreadable checks.json: {exc}"
    result = summarize_checks(scenario, checks, True, None)
    text = _ANSI.sub("", log.read_text(errors="replace"))
    if code is None:
        error = f"the suite ran past {CLIENT_RUN_TIMEOUT:g} s and was killed"
    elif "SKIPPED: scenario" in text:
        error = "the suite skipped it as not applicable at this spec version"
    elif not found:
        error = error or f"no results (the suite exited with {code}; see {log})"
    elif code != 0 and result.counts["FAILURE"] == 0:
        error = _client_failure(text, results)
    result.error = error
    return result, code, seconds, args


def run_client_leg(
    ctx: Context, spec: ClientRun, command: str, only: Sequence[str], jobs: int
) -> RunResult:
    folder = ctx.out / spec.suite / spec.run
    folder.mkdir(parents=True, exist_ok=True)
    catalogue = ctx.catalogues[spec.suite]
    expected_file = expected_failures_file(spec.suite, spec.run, ctx.use_expected)
    expected = read_expected(expected_file, "client", catalogue)
    scenarios = [s for s in spec.names(catalogue) if not only or s in only]
    for scenario in scenarios:
        if scenario not in catalogue.client:
            raise HarnessError(f"conformance@{spec.suite} has no client scenario {scenario!r}")
    extra = ["--spec-version", spec.spec_version] if spec.spec_version else []
    run = RunResult(spec.suite, "client", spec.run, ["--scenario", "…", *extra], os.fspath(folder))
    _log(f"conformance {run.ident}: {len(scenarios)} scenario(s), {jobs} at a time")
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(
            pool.map(lambda s: run_client_scenario(ctx, spec, s, command, expected_file), scenarios)
        )
    run.seconds = time.monotonic() - started
    codes = [code for _, code, _, _ in outcomes]
    run.exit_code = next((c for c in codes if c != 0), 0)
    for result, _code, seconds, _args in outcomes:
        run.scenarios.append(result)
        run.timings[result.scenario] = seconds
    judge(run, expected)
    return run


# ---------------------------------------------------------------------- summary


def summary_json(runs: list[RunResult], tools: Toolchain | None) -> dict[str, Any]:
    unexpected = [f"{r.ident}: {name}" for r in runs for name in r.unexpected]
    return {
        "ok": not unexpected,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "node": tools.node_version if tools else None,
        "suites": [f"{SUITE_PACKAGE}@{version}" for version in SUITE_VERSIONS],
        "runs": [r.to_json() for r in runs],
        "unexpected_failures": unexpected,
    }


def print_summary(data: dict[str, Any], out: IO[str] = sys.stdout) -> None:
    print("\n=== MCP conformance summary ===", file=out)
    for run in data["runs"]:
        sc, ch = run["scenarios"], run["checks"]
        extra = run.get("checks_not_scored", {})
        not_scored = (
            f" [+{sc['not_scored']} not scored: {sc['not_scored_failed']} failing, "
            f"checks {extra.get('passed', 0)} passed, {extra.get('failed', 0)} failed]"
            if sc["not_scored"]
            else ""
        )
        status = "ok" if run["ok"] else "FAILED"
        print(
            f"{run['suite']:<15} {run['run']:<18} {status:<6} "
            f"scenarios {sc['passed']} passed, {sc['failed']} failed; "
            f"checks {ch['passed']} passed, {ch['failed']} failed, {ch['warnings']} warnings; "
            f"{run['seconds']} s{not_scored}",
            file=out,
        )
        for name in run["unexpected_failures"]:
            print(f"    ✗ {name}", file=out)
        for name in run["expected_failures"]:
            print(f"    ~ {name} (expected)", file=out)
        failing: dict[str, int] = {}
        for name in run["not_scored_failures"]:
            scenario = name.split(":", 1)[0].split(" ", 1)[0]
            failing[scenario] = failing.get(scenario, 0) + 1
        if failing:
            listed = ", ".join(f"{k} ({v})" for k, v in failing.items())
            print(f"    · not scored, failing: {listed}", file=out)
        for name in run["warnings"]:
            print(f"    ! {name} (warning)", file=out)
        for message in run["messages"]:
            print(f"    note: {message}", file=out)
    if data["ok"]:
        print("No unexpected failures.", file=out)
    else:
        print(f"{len(data['unexpected_failures'])} UNEXPECTED FAILURE(S).", file=out)


def finish(runs: list[RunResult], tools: Toolchain | None, json_path: Path | None) -> int:
    data = summary_json(runs, tools)
    print_summary(data)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for run in runs:
        (Path(run.results_dir) / "run.json").write_text(
            json.dumps(run.to_json(), indent=2, ensure_ascii=False) + "\n"
        )
    return EXIT_OK if data["ok"] else EXIT_FAILURES


# ---------------------------------------------------------------------- command line


def _context(tools: Toolchain, out: Path, versions: Sequence[str]) -> Context:
    ctx = Context(tools, out, {}, {})
    for version in versions:
        ctx.catalogues[version] = load_catalogue(tools, version)
    for spec in SERVER_RUNS:
        if spec.revision is not None and spec.suite in versions:
            ctx.requirements[(spec.suite, spec.revision)] = load_requirements(
                tools, spec.suite, spec.revision
            )
    return ctx


def _default_out() -> Path:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return CONFORMANCE_DIR / "results" / stamp


def _selected(names: Sequence[str], suite: str, run: str) -> bool:
    return not names or f"{suite}/{run}" in names or suite in names or run in names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command_name", required=True)
    sub.add_parser("setup", help="install Node 22 and both suite versions (idempotent)")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--command", required=True, help="the server (with {port}) or client command line"
    )
    common.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="RUN",
        help="only these runs: a suite version, a run name (server-all, client-2026-07-28…) "
        "or VERSION/RUN; repeatable",
    )
    common.add_argument(
        "--no-expected-failures",
        action="store_true",
        help="read no expected-failures file (to measure another implementation)",
    )
    common.add_argument("-o", "--out", type=Path, help="results folder (default: a new one)")
    common.add_argument("--json", type=Path, help="write the summary here as JSON")
    common.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help=f"suite runs at once (default {DEFAULT_JOBS})",
    )

    server = sub.add_parser("server", parents=[common], help="test a Streamable HTTP server")
    server.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment of the server ({port} replaced); repeatable",
    )
    server.add_argument(
        "--host",
        default="localhost",
        help="the host of the URL the suite is given (default localhost; the server always "
        "listens on 127.0.0.1)",
    )
    server.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    server.add_argument(
        "--startup-timeout", type=float, default=SERVER_START_TIMEOUT, help="seconds"
    )

    client = sub.add_parser("client", parents=[common], help="test an HTTP client")
    client.add_argument(
        "--scenario", action="append", default=[], help="only these scenarios; repeatable"
    )
    client.add_argument(
        "--spec-version",
        help="run each client-auth scenario that lists this version at it (default: the "
        "newest it lists)",
    )

    summary = sub.add_parser("summary", help="summarize a results folder again")
    summary.add_argument("results", type=Path)
    summary.add_argument("--json", type=Path)

    args = parser.parse_args(argv)
    try:
        if args.command_name == "summary":
            return _resummarize(args.results, args.json)
        tools = setup()
        if args.command_name == "setup":
            print(f"node {tools.node_version}: {tools.node}")
            for version, entry in tools.suites.items():
                print(f"{SUITE_PACKAGE}@{version}: {entry}")
            return EXIT_OK
        out: Path = (args.out or _default_out()).resolve()
        out.mkdir(parents=True, exist_ok=True)
        _log(f"conformance results: {out}")
        runs: list[RunResult] = []
        if args.command_name == "server":
            specs = [s for s in SERVER_RUNS if _selected(args.only, s.suite, s.run)]
            if not specs:
                raise HarnessError(f"no server run matches --only {' '.join(args.only)}")
            ctx = _context(tools, out, sorted({s.suite for s in specs}))
            ctx.use_expected = not args.no_expected_failures
            with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(specs) or 1))) as pool:
                runs = list(
                    pool.map(
                        lambda s: run_server_leg(
                            ctx,
                            s,
                            args.command,
                            args.server_env,
                            args.host,
                            args.path,
                            args.startup_timeout,
                        ),
                        specs,
                    )
                )
        else:
            selected = [c for c in CLIENT_RUNS if _selected(args.only, c.suite, c.run)]
            ctx = _context(tools, out, sorted({c.suite for c in selected}))
            ctx.use_expected = not args.no_expected_failures
            ctx.spec_override = args.spec_version
            client_specs = [
                c
                for c in selected
                if not args.scenario or set(args.scenario) & set(c.names(ctx.catalogues[c.suite]))
            ]
            if not client_specs:
                raise HarnessError("no client run matches --only/--scenario")
            for spec in client_specs:
                runs.append(run_client_leg(ctx, spec, args.command, args.scenario, args.jobs))
        return finish(runs, tools, args.json)
    except Unavailable as exc:
        print(f"CONFORMANCE SUITE UNAVAILABLE: {exc}", flush=True)
        return EXIT_UNAVAILABLE
    except HarnessError as exc:
        print(f"CONFORMANCE HARNESS ERROR: {exc}", flush=True)
        return EXIT_HARNESS


def _resummarize(results: Path, json_path: Path | None) -> int:
    found = sorted(results.rglob("run.json"))
    if not found:
        print(f"no run.json under {results}", file=sys.stderr)
        return EXIT_HARNESS
    data: dict[str, Any] = {
        "runs": [json.loads(p.read_text()) for p in found],
    }
    data["unexpected_failures"] = [
        f"{r['suite']} {r['mode']} {r['run']}: {name}"
        for r in data["runs"]
        for name in r["unexpected_failures"]
    ]
    data["ok"] = not data["unexpected_failures"]
    print_summary(data)
    if json_path is not None:
        json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK if data["ok"] else EXIT_FAILURES


if __name__ == "__main__":
    sys.exit(main())
