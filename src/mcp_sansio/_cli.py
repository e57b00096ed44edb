"""The command line, ``mcp-sansio`` (also ``python -m mcp_sansio``).

``mcp-sansio``
    The demonstration: our client and our example server (:mod:`mcp_sansio.example`, started
    as a subprocess) talk over stdio, once with a client of the initialize era and once with a
    client that speaks both eras; each step is printed.
``mcp-sansio serve [--tcp HOST:PORT | --unix PATH | --http HOST:PORT [--auth-issuer ...]]``
    Run the example server on stdio (the default), on a TCP or Unix socket, or over
    Streamable HTTP (with ``--auth-issuer``, requiring access tokens).
``mcp-sansio call [OPTIONS] METHOD [--params JSON]``, ``... call [OPTIONS] tool NAME [--args JSON]``
    Connect to a server, run one method or one tool, print the result as JSON. The server is
    ``--tcp HOST:PORT``, ``--unix PATH``, or a command to start after ``--`` (the last
    thing on the line); with none, the example server is started.
``mcp-sansio probe [--http URL | -- CMD ...] [--json] [--examples N] [--seed S] ...``
    Test a server against every rule of the protocol (:mod:`mcp_sansio.testing`, needs
    hypothesis, the ``testing`` extra); with no server, the example server.
    ``probe --client -- CMD ... {server} ...`` tests a client instead: the probe is the
    server it starts.

Everything runs on :mod:`mcp_sansio.asyncio` (the probe: on threads).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import textwrap
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from . import _cli_serve_auth as serve_auth
from . import asyncio as mcp_asyncio
from ._cli_auth import add_auth_arguments, auth_from_arguments, check_auth_arguments
from ._errors import ProtocolError
from ._events import Notification
from ._version import __version__, build
from ._versions import ALL_VERSIONS, VERSIONS
from .auth._errors import AuthError
from .example import build_server
from .session import DEFAULT_PROBE_TIMEOUT, McpError

__all__ = [
    "DEMO_VERSIONS",
    "accept_defaults",
    "build_parser",
    "example_command",
    "main",
    "parse_tcp",
    "roots_of_cwd",
]

#: The two clients of the demonstration: one of the initialize era, one of both eras.
DEMO_VERSIONS: tuple[tuple[str, ...] | None, ...] = (("2025-11-25",), None)

_PROG = "mcp-sansio"
_DEFAULT_HOST = "127.0.0.1"


def example_command() -> list[str]:
    """The command that runs the example server on stdio: ``python -m mcp_sansio serve``."""
    return [sys.executable, "-m", "mcp_sansio", "serve"]


# ---------------------------------------------------------------------- client handlers


def accept_defaults(ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The command line's answer to ``elicitation/create``: accept a form with the default of
    each field that has one; decline when a required field has none, or for a URL."""
    schema = params.get("requestedSchema")
    if params.get("mode") == "url" or not isinstance(schema, Mapping):
        return {"action": "decline"}
    properties = schema.get("properties") or {}
    content = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, Mapping) and "default" in spec
    }
    if any(name not in content for name in schema.get("required") or ()):
        return {"action": "decline"}
    return {"action": "accept", "content": content}


def roots_of_cwd(ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The command line's answer to ``roots/list``: the current directory."""
    cwd = Path.cwd()
    return {"roots": [{"uri": cwd.as_uri(), "name": cwd.name or str(cwd)}]}


# ---------------------------------------------------------------------- arguments


def parse_tcp(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (the host defaults to 127.0.0.1; ``[::1]:PORT``
    for IPv6) as ``(host, port)``."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or _DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"no such port: {number}")
    return host, number


def _versions(text: str) -> tuple[str, ...]:
    versions = tuple(v.strip() for v in text.split(",") if v.strip())
    unknown = [v for v in versions if v not in ALL_VERSIONS]
    if unknown or not versions:
        raise argparse.ArgumentTypeError(
            f"unknown protocol version {', '.join(unknown) or text!r}"
            f" (known: {', '.join(ALL_VERSIONS)})"
        )
    return versions


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("not a JSON object")
    return value


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


#: ``--max-message-size``: a number of bytes, with an optional binary unit (K, KB and KiB
#: all mean 1024 bytes).
_SIZE: Final = re.compile(r"(\d+)\s*(?:([kmg])(?:i?b)?|b)?", re.IGNORECASE)
_UNIT: Final = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
#: An HTTP header name (RFC 9110's ``token``).
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _size(text: str) -> int:
    """A size in bytes: ``65536``, ``64KiB``, ``4MiB``, ``1GiB``."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (4194304, 4MiB)")
    value = int(match[1]) * _UNIT[(match[2] or "").lower()]
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1 byte")
    return value


def _header(text: str) -> tuple[str, str]:
    """``NAME: VALUE`` as ``(NAME, VALUE)``; the name must be an HTTP token."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not name or not _TOKEN.fullmatch(name):
        raise argparse.ArgumentTypeError(f"not a header 'NAME: VALUE': {text!r}")
    if any(c in value for c in "\r\n\0"):
        raise argparse.ArgumentTypeError(f"a header value may not hold a line break: {text!r}")
    return name, value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``mcp-sansio`` (``call``'s server command, after ``--``, is
    split off before parsing)."""
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="A sans-IO Model Context Protocol core. With no command: our client and "
        "our example server talk over stdio, in both eras of the protocol.",
    )
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__} ({build()})")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run the example server",
        description="Run the example server (mcp_sansio.example) on stdio, or on a socket.",
    )
    where = serve.add_mutually_exclusive_group()
    where.add_argument(
        "--tcp", type=parse_tcp, metavar="HOST:PORT", help="listen on TCP (HOST: 127.0.0.1)"
    )
    where.add_argument("--unix", metavar="PATH", help="listen on a Unix socket")
    where.add_argument(
        "--http",
        type=parse_tcp,
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp (HOST: 127.0.0.1; needs h11)",
    )
    serve.add_argument(
        "--max-message-size",
        type=_size,
        metavar="BYTES",
        help="the largest message (or HTTP body) taken from a client (default: 4MiB)",
    )
    serve_auth.add_serve_auth_arguments(serve)
    serve.set_defaults(serve_parser=serve)

    call = commands.add_parser(
        "call",
        help="run one method or tool on a server and print the result",
        usage=f"{_PROG} call [OPTIONS] METHOD [--params JSON] [-- COMMAND ...]\n"
        f"       {_PROG} call [OPTIONS] tool NAME [--args JSON] [-- COMMAND ...]",
        description="Connect to an MCP server, run one method (tools/list, resources/read, "
        "...) or one tool, and print its result as JSON. The server: --tcp, --unix, --http, "
        "or a command to start after -- (the last thing on the line); by default, the "
        "example server. Exit status: 0, or 1 when the request fails, the tool reports an "
        "error, the server cannot be reached or started, or --timeout passes; 2 for a usage "
        "error; 130 when interrupted.",
        epilog="Elicitation requests are accepted with the defaults of the form (declined "
        "when a required field has none); roots/list is answered with the current directory.",
    )
    call.add_argument("what", nargs="+", metavar="METHOD | tool NAME")
    call.add_argument(
        "--params", type=_json_object, metavar="JSON", help="the method's params (an object)"
    )
    call.add_argument(
        "--args", type=_json_object, metavar="JSON", help="the tool's arguments (an object)"
    )
    call.add_argument(
        "--versions",
        type=_versions,
        metavar="V,...",
        help="protocol versions to speak, newest first (default: all, both eras)",
    )
    call.add_argument(
        "--timeout",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="the bound on the whole command: connecting, opening the session "
        "(server/discover, then initialize), the request, and stopping a server it started "
        "(default: 60)",
    )
    call.add_argument(
        "--max-message-size",
        type=_size,
        metavar="BYTES",
        help="the largest message (or HTTP body) taken from the server; a number of bytes, "
        "or with KiB, MiB or GiB (default: 64MiB)",
    )
    target = call.add_mutually_exclusive_group()
    target.add_argument("--tcp", type=parse_tcp, metavar="HOST:PORT", help="a server on TCP")
    target.add_argument("--unix", metavar="PATH", help="a server on a Unix socket")
    target.add_argument(
        "--http", metavar="URL", help="a Streamable HTTP endpoint (http:// or https://)"
    )
    call.add_argument(
        "-H",
        "--header",
        dest="headers",
        action="append",
        type=_header,
        metavar="'NAME: VALUE'",
        help="with --http: a header sent with every request (Authorization: Bearer ...); "
        "may be repeated",
    )
    add_auth_arguments(call)
    call.add_argument(
        "-v", "--verbose", action="store_true", help="show progress and log messages on stderr"
    )
    call.set_defaults(call_parser=call)

    probe = commands.add_parser(
        "probe",
        help="test a server against every rule of the protocol",
        usage=f"{_PROG} probe [OPTIONS] [--http URL | -- COMMAND ...]\n"
        f"       {_PROG} probe --client [OPTIONS] -- COMMAND ... [{{server}}] ...",
        description="Test an MCP server against the rules of the protocol: the versions it "
        "offers (server/discover, initialize), a deterministic check per rule (each on a "
        "fresh process or session), then a fuzz phase (hypothesis, seeded); every message "
        "the server sends is judged by mcp-sansio's own Connection. The server: --http URL "
        "(loopback only), or a command after -- (the last thing on the line); by default, "
        "the example server. Exit status: 0 when no rule failed, 1 when one did, 2 when "
        "the server cannot be used (it does not start, nothing listens, or it offers none of "
        "the versions probed: the report says why), for a usage error, or when hypothesis is "
        "not installed, 130 when interrupted. With --client, the "
        "command is a client that starts its server over stdio: the probe plays that "
        "server (the argument {server} stands for the server command; without one it is "
        "appended), answers initialize, and sends one near miss per check.",
        epilog="Needs hypothesis, the testing extra: pip install 'mcp-sansio[testing]' (from a "
        "checkout: pip install '.[testing]'). See docs/probe.rst.",
    )
    probe.add_argument("--http", metavar="URL", help="a Streamable HTTP endpoint (loopback)")
    probe.add_argument(
        "--client",
        action="store_true",
        help="the command is a client to test (it starts {server} over stdio)",
    )
    probe.add_argument("--json", action="store_true", help="print the report as JSON")
    probe.add_argument(
        "--strict",
        action="store_true",
        help="warnings fail too: SHOULD, SHOULD NOT and implied rules the peer broke (by "
        "default only MUST and MUST NOT rules fail; exit status 1)",
    )
    probe.add_argument(
        "--examples",
        type=_count,
        default=20,
        metavar="N",
        help="fuzz examples per version (default: 20; 0: no fuzz phase)",
    )
    probe.add_argument("--seed", type=int, metavar="S", help="the fuzz seed (default: random)")
    probe.add_argument(
        "--timeout",
        type=_positive,
        default=5.0,
        metavar="SECONDS",
        help="how long the server (with --client: the client) has for each answer (default: 5)",
    )
    probe.add_argument(
        "--startup",
        type=_positive,
        default=15.0,
        metavar="SECONDS",
        help="how long a fresh server has for its first answer, at least, counted from its "
        "start (with --client: a fresh client, to open its session); when none answers, the "
        "probe gives up after this, once (default: 15)",
    )
    probe.add_argument(
        "--versions",
        type=_versions,
        metavar="V,...",
        help="protocol versions to probe (default: all)",
    )
    probe.add_argument(
        "--jobs", type=_count, default=4, metavar="N", help="checks run at once (default: 4)"
    )
    add_auth_arguments(probe)
    probe.set_defaults(probe_parser=probe)
    return parser


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def _split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Split ``call``'s server command (after ``--``) off the arguments."""
    if "--" not in argv:
        return argv, None
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


# ---------------------------------------------------------------------- main


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line; returns the exit status (0, 1 when a call fails, 2 for a usage
    error, 130 when interrupted)."""
    out = out or sys.stdout
    err = err or sys.stderr
    args_list, command = _split_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
        if command is not None and args.command not in ("call", "probe"):
            parser.error("a server command after -- is only for `call` and `probe`")
        if args.command == "serve":
            serve_auth.check_serve_auth_arguments(args.serve_parser, args)
        if args.command == "call":
            _check_call(args.call_parser, args, command)
        if args.command == "probe":
            if command is not None and args.http:
                args.probe_parser.error("give one server: --http or -- COMMAND")
            if command == []:
                args.probe_parser.error("no command after --")
            if args.client and command is None:
                args.probe_parser.error("--client needs the client's command after --")
            if args.client and args.http:
                args.probe_parser.error("--client probes a client over stdio: no --http")
            check_auth_arguments(args.probe_parser, args)
    except SystemExit as exc:  # --help, --version, a usage error
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.command == "serve":
            return asyncio.run(_serve(args, err))
        if args.command == "call":
            return asyncio.run(_interruptible(_call(args, command, out, err), err))
        if args.command == "probe":
            return _probe(args, command, out, err)
        return asyncio.run(demo(out))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `mcp-sansio | head`: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush quiet
        return 1


def _check_call(
    call: argparse.ArgumentParser, args: argparse.Namespace, command: list[str] | None
) -> None:
    if command is not None and (args.tcp or args.unix or args.http):
        call.error("give one server: --tcp, --unix, --http or -- COMMAND")
    if command == []:
        call.error("no command after --")
    if args.headers and not args.http:
        call.error("--header is for an HTTP server (--http URL)")
    check_auth_arguments(call, args)
    if args.http:
        try:
            from .http._h11client import parse_url
        except ImportError:
            call.error(
                "--http needs h11, the http extra: pip install 'mcp-sansio[http]'"
                " (from a checkout: pip install '.[http]')"
            )
        try:
            parse_url(args.http)
        except ValueError as exc:
            call.error(str(exc))
    what = args.what
    if what[0] == "tool":
        if len(what) != 2:
            call.error("give one tool: tool NAME")
        if args.params is not None:
            call.error("a tool takes --args, not --params")
    else:
        if len(what) != 1:
            call.error(f"give one method, or tool NAME (got {' '.join(what)})")
        if args.args is not None:
            call.error("--args is for a tool (tool NAME --args JSON); a method takes --params")


# ---------------------------------------------------------------------- serve


async def _serve(args: argparse.Namespace, err: TextIO) -> int:
    server = build_server()
    size = args.max_message_size
    options: dict[str, Any] = {} if size is None else {"max_message_size": size}
    if args.tcp is None and args.unix is None and args.http is None:
        await mcp_asyncio.serve_stdio(server, **options)
        return 0
    listener: mcp_asyncio.Listener
    try:
        if args.http is not None:
            host, port = args.http
            where = f"http {host}:{port}"
            if size is not None:
                options["max_body_size"] = size
            listener = await mcp_asyncio.serve_http(
                server, host, port, auth=serve_auth.serve_auth_from_arguments(args), **options
            )
            where = f"http {listener.url}"  # type: ignore[attr-defined]
        elif args.tcp is not None:
            host, port = args.tcp
            where = f"tcp {host}:{port}"
            listener = await mcp_asyncio.serve_tcp(server, host, port, **options)
            address = listener.address
            where = f"tcp {address[0]}:{address[1]}"
        else:
            where = f"unix {args.unix}"
            listener = await mcp_asyncio.serve_unix(server, args.unix, **options)
    except OSError as exc:  # the port is taken, the folder is missing, no permission, ...
        err.write(f"{_PROG} serve: cannot listen on {where}: {_reason(exc)}\n")
        return 1
    except ImportError as exc:  # --http without h11
        err.write(f"{_PROG} serve: {exc}\n")
        return 1
    # SIGINT and SIGTERM close the listener and its connections (their handlers are
    # cancelled), then the command exits with 128 + the signal's number: a clean stop, not
    # a KeyboardInterrupt landing wherever the code happens to be.
    stopped_by: list[int] = []

    def stop(signum: int) -> None:
        stopped_by.append(signum)
        listener.close()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop, signum)
    async with listener:
        err.write(f"{_PROG}: serving the example server on {where}\n")
        err.flush()
        await listener.serve_forever()
    return 128 + stopped_by[0] if stopped_by else 0


# ---------------------------------------------------------------------- probe


def _probe(args: argparse.Namespace, command: list[str] | None, out: TextIO, err: TextIO) -> int:
    try:
        from .testing._command import probe_command
    except ImportError as exc:  # hypothesis (or h11) missing
        err.write(
            f"{_PROG} probe needs hypothesis, the testing extra ({exc}): pip install"
            " 'mcp-sansio[testing]' (from a checkout: pip install '.[testing]')\n"
        )
        return 2
    return probe_command(
        http=args.http,
        command=command,
        client=args.client,
        json_output=args.json,
        examples=args.examples,
        seed=args.seed,
        timeout=args.timeout,
        startup=args.startup,
        versions=args.versions,
        jobs=max(1, args.jobs),
        out=out,
        err=err,
        strict=args.strict,
        auth=auth_from_arguments(args, args.http, err) if args.http else None,
    )


# ---------------------------------------------------------------------- call


#: How long stopping a started server may take, at most, per step (its stdin closed, then
#: SIGTERM; SIGKILL does not wait), as a share of ``call --timeout`` and in seconds.
_STOP_SHARE: Final = 0.1
_STOP_MAX: Final = 2.0


def _client(
    args: argparse.Namespace, command: list[str] | None, err: TextIO, budget: float, stop: float
) -> Any:
    options: dict[str, Any] = {
        "versions": args.versions,
        # No timeout per request: the command's own bound (_call) is the one that applies,
        # and a request it cuts short is cancelled as usual.
        "timeout": None,
        # A dual-era client's server/discover probe gets at most half of the time: a server
        # of the initialize era that never answers it still has the rest for initialize.
        "probe_timeout": min(DEFAULT_PROBE_TIMEOUT, budget / 2),
        "handlers": {"elicitation/create": accept_defaults, "roots/list": roots_of_cwd},
    }
    if args.max_message_size is not None:
        options["max_message_size"] = args.max_message_size
    if args.verbose:
        options["on_notification"] = _note_printer(err)
        # 2026-07-28 has no logging/setLevel: each request says which log messages it wants
        # (in the initialize era, a server sends them all until told otherwise).
        options["log_level"] = "debug"
    if args.tcp is not None:
        return mcp_asyncio.Client.connect_tcp(*args.tcp, **options)
    if args.unix is not None:
        return mcp_asyncio.Client.connect_unix(args.unix, **options)
    if args.http is not None:
        if args.max_message_size is not None:
            options["max_body_size"] = args.max_message_size
        auth, open_url, args.auth_done = auth_from_arguments(args, args.http, err, budget)
        return mcp_asyncio.Client.connect_http(
            args.http,
            headers=dict(args.headers or ()),
            close_timeout=stop,
            auth=auth,
            open_url=open_url,
            **options,
        )
    return mcp_asyncio.Client.connect_stdio(
        command or example_command(), shutdown_timeout=stop, **options
    )


def _note_printer(err: TextIO) -> Callable[[Notification], None]:
    def show(note: Notification) -> None:
        params = note.params or {}
        if note.method == "notifications/message":
            data = params.get("data")
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            err.write(f"[{params.get('level')}] {text}\n")
        else:
            err.write(f"{note.method} {json.dumps(params, ensure_ascii=False)}\n")

    return show


async def _interruptible(work: Awaitable[int], err: TextIO) -> int:
    """Run ``work``; Ctrl-C (``SIGINT``) cancels it, so that its cleanup runs (a started
    server is stopped) on every Python, and the command exits with 130. (Python 3.11's
    ``asyncio.run`` cancels the main task on Ctrl-C; 3.10's raises ``KeyboardInterrupt``
    out of the event loop, past the cleanup, and a server would be left running.)"""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    interrupted: list[bool] = []

    def interrupt() -> None:
        interrupted.append(True)
        task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        return await task
    except asyncio.CancelledError:
        if not interrupted:
            raise
        err.write(f"{_PROG}: interrupted\n")
        return 130
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGINT)


async def _call(
    args: argparse.Namespace, command: list[str] | None, out: TextIO, err: TextIO
) -> int:
    if args.what[0] == "tool":
        method, params = "tools/call", {"name": args.what[1], "arguments": args.args or {}}
    else:
        method, params = args.what[0], args.params
    on_progress = None
    if args.verbose:

        def on_progress(progress: Mapping[str, Any]) -> None:
            err.write(f"progress {_fraction(progress)}\n")

    # --timeout bounds the whole command: what is left after the time set aside for
    # stopping the server (twice: after its stdin is closed, after SIGTERM) is for
    # connecting, opening and the request.
    stop = min(_STOP_MAX, args.timeout * _STOP_SHARE)
    budget = args.timeout - 2 * stop
    client = _client(args, command, err, budget, stop)

    async def run() -> Any:
        await client.open()
        return await client.request(method, params, on_progress=on_progress)

    try:
        try:
            result = await asyncio.wait_for(run(), budget)
        except asyncio.TimeoutError:
            session = client.session
            opening = session.opening
            waiting = method
            if not session.is_open:  # the opening call, the last one tried
                waiting = "the connection" if opening is None else opening.method
            err.write(
                f"{_PROG} call: {method}: no answer within the --timeout of {args.timeout:g} s"
                f" (waiting for {waiting})\n"
            )
            return 1
        except ProtocolError as exc:  # this side may not send it (not a method of the version)
            err.write(f"{_PROG} call: {method}: {exc} (code {exc.code})\n")
            return 1
        except McpError as exc:
            detail = "" if exc.data is None else f"\n{json.dumps(exc.data, indent=2)}"
            err.write(f"{_PROG} call: {method}: {exc.message} (code {exc.code}){detail}\n")
            return 1
        except AuthError as exc:  # (its message holds no token)
            err.write(f"{_PROG} call: {method}: authorization failed: {exc}\n")
            return 1
        except OSError as exc:
            err.write(f"{_PROG} call: cannot {_target(args, command)}: {_reason(exc)}\n")
            return 1
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        out.flush()
    finally:
        await client.aclose()
        getattr(args, "auth_done", lambda: None)()  # the loopback listener, if any
    if method == "tools/call" and isinstance(result, Mapping) and result.get("isError"):
        err.write(f"{_PROG} call: the tool {args.what[-1]!r} reported an error\n")
        return 1
    return 0


def _reason(exc: OSError) -> str:
    """An OS error in a few words: "Address already in use", not asyncio's long repr."""
    return os.strerror(exc.errno) if exc.errno else str(exc)


def _target(args: argparse.Namespace, command: list[str] | None) -> str:
    """What ``call`` failed to do when it could not connect: "reach the server at ...", or
    "start the server command ..."."""
    if args.tcp is not None:
        return f"reach the server at tcp {args.tcp[0]}:{args.tcp[1]}"
    if args.unix is not None:
        return f"reach the server at unix {args.unix}"
    if args.http is not None:
        return f"reach the server at {args.http}"
    if command is None:
        return "start the example server"
    return f"start the server command {command[0]!r}"


def _fraction(progress: Mapping[str, Any]) -> str:
    done = f"{progress.get('progress')}"
    if progress.get("total") is not None:
        done += f"/{progress['total']}"
    if progress.get("message"):
        done += f" {progress['message']}"
    return done


# ---------------------------------------------------------------------- the demonstration


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _texts(result: Mapping[str, Any]) -> str:
    blocks = result.get("content") or result.get("contents") or []
    return " ".join(str(b.get("text", f"<{b.get('type', 'blob')}>")) for b in blocks)


async def demo(out: TextIO, server_command: Sequence[str] | None = None) -> int:
    """The demonstration (``mcp-sansio`` with no command): two clients, one of the
    initialize era and one of both eras, each talking to the example server started with
    ``server_command`` (default: :func:`example_command`); every step is printed to
    ``out``. Returns 0."""
    command = list(server_command or example_command())
    out.write(f"{_PROG} {__version__}: our client and our example server, over stdio\n")
    out.write(f"server command: {' '.join(_shown(command))}\n")
    for versions in DEMO_VERSIONS:
        await _demo_client(out, command, versions)
    return 0


def _shown(command: Sequence[str]) -> list[str]:
    return ["python" if part == sys.executable else part for part in command]


async def _demo_client(out: TextIO, command: list[str], versions: Sequence[str] | None) -> None:
    def step(name: str, text: str, wrap: bool = False) -> None:
        line = f"{name:<15} {text}"
        if wrap:
            line = textwrap.fill(line, 100, subsequent_indent=" " * 18, break_on_hyphens=False)
        out.write(line + "\n")
        out.flush()  # each step as it happens

    def aside(name: str, text: str) -> None:
        """A step written from a callback: a closed stdout is left to the demo's own next
        step, which stops it quietly (the adapter would log the error with a traceback)."""
        with contextlib.suppress(BrokenPipeError):
            step(name, text)

    def elicit(ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        answer = accept_defaults(ctx, params)
        how = "an input_required round" if ctx.request_id is None else "a request to us"
        aside("  elicitation", f"{params.get('message')!r} ({how})")
        aside("  our answer", f"{answer['action']} {_compact(answer.get('content', {}))}")
        return answer

    def progress(params: Mapping[str, Any]) -> None:
        aside("  progress", _fraction(params))

    if versions is None:
        out.write("\n== a client of both eras (it probes with server/discover) ==\n")
    else:
        out.write(f"\n== a client of the initialize era (versions {', '.join(versions)}) ==\n")
    client = mcp_asyncio.Client.connect_stdio(
        command, versions=versions, handlers={"elicitation/create": elicit}
    )
    async with client:
        spec = VERSIONS.get(client.protocol_version or "")
        opening = "initialize" if spec is not None and spec.policy.handshake else "server/discover"
        info = client.server_info or {}
        step(
            "handshake",
            f"{opening} -> protocol {client.protocol_version}, "
            f"server {info.get('name')} {info.get('version')}",
        )
        tools = [t["name"] for t in (await client.list_tools())["tools"]]
        step("tools/list", f"{len(tools)} tools: {', '.join(tools)}", wrap=True)
        arguments = {"message": "hello over MCP"}
        result = await client.call_tool("echo", arguments)
        step("tools/call", f"echo {_compact(arguments)} -> {_texts(result)}")
        step("tools/call", "test_tool_with_progress")
        result = await client.call_tool("test_tool_with_progress", {}, on_progress=progress)
        step("", f"-> {_texts(result)}")
        step("tools/call", "test_elicitation_sep1034_defaults")
        result = await client.call_tool("test_elicitation_sep1034_defaults", {})
        step("", f"-> {_texts(result)}")
        result = await client.read_resource("test://static-text")
        step("resources/read", f"test://static-text -> {_texts(result)}")
    process = client.process
    status = process.returncode if process is not None else None
    step("closed", f"stdin closed; the server exited with status {status}")
