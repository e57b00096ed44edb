"""``mcp-sansio probe``: the command behind the CLI (:func:`probe_command`). It imports the
server probe and the client probe, neither of which imports the other."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from mcp_sansio.auth import BearerToken
from mcp_sansio.auth._client_auth import ClientAuth
from mcp_sansio.auth._errors import AuthError
from mcp_sansio.testing._client_probe import run_client_probe
from mcp_sansio.testing._http_target import HttpTarget
from mcp_sansio.testing._probe import run_probe
from mcp_sansio.testing._stdio_target import ClientTarget, StdioTarget
from mcp_sansio.testing._targets import Target, TargetError
from mcp_sansio.testing._wire import DEFAULT_STARTUP

#: What the command line gives for ``--http`` with authorization: the ClientAuth, the
#: ``open_url`` handler and what to call when done (``mcp_sansio._cli_auth.command_line_auth``).
CommandAuth = tuple[ClientAuth | None, Callable[[str], str] | None, Callable[[], None]]


def _authorize(url: str, auth: CommandAuth, timeout: float) -> ClientAuth:
    """Before the probe: a session opened (and closed) with ``auth``, so that its flow, if
    the server asks for one, runs once; then ``auth`` holds the token the probe sends."""
    client_auth, open_url, _ = auth
    assert client_auth is not None
    if not isinstance(client_auth, BearerToken):
        from mcp_sansio.blocking import Client

        with Client.connect_http(url, auth=client_auth, open_url=open_url, timeout=timeout):
            pass
    return client_auth


def probe_command(
    *,
    http: str | None,
    command: Sequence[str] | None,
    json_output: bool,
    examples: int,
    seed: int | None,
    timeout: float,
    startup: float = DEFAULT_STARTUP,
    versions: Sequence[str] | None,
    jobs: int,
    out: TextIO,
    err: TextIO,
    client: bool = False,
    strict: bool = False,
    auth: CommandAuth | None = None,
) -> int:
    """``mcp-sansio probe``: run the probe, print the report (JSON with ``json_output``).
    Returns the exit status: 0 when no rule failed (warnings and notes do not fail,
    warnings do under ``strict``), 1 when one did, 2 when the target
    cannot be used (it cannot be started or reached, or it offers no version: then the
    report says why), 130 when interrupted (the conversations in progress are shut down
    first; no report). With ``client``,
    ``command`` is a client to probe (see :func:`~mcp_sansio.testing.run_client_probe`).
    With ``auth`` (``http`` only), the server's flow is run first, once, and every request
    of the probe carries the token (exit status 2 when the authorization fails)."""
    try:
        target: Target
        if client:
            report = run_client_probe(
                ClientTarget(command or (), startup=startup),
                timeout=timeout,
                startup=startup,
                examples=examples,
                seed=seed,
                jobs=jobs,
                progress=err,
                strict=strict,
            )
        else:
            if http is not None and auth is not None and auth[0] is not None:
                client_auth = _authorize(http, auth, max(timeout, startup))
                url = http
                target = HttpTarget(
                    http,
                    extra_headers=lambda method: client_auth.headers(method, url, now=time.time()),
                )
            elif http is not None:
                target = HttpTarget(http)
            elif command:
                target = StdioTarget(command)
            else:
                target = StdioTarget([sys.executable, "-m", "mcp_sansio", "serve"])
            report = run_probe(
                target,
                versions=versions,
                timeout=timeout,
                startup=startup,
                examples=examples,
                seed=seed,
                jobs=jobs,
                progress=err,
                strict=strict,
            )
    except TargetError as exc:
        err.write(f"mcp-sansio probe: {exc}\n")
        return 2
    except AuthError as exc:  # (its message holds no token)
        err.write(f"mcp-sansio probe: authorization failed: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("\nmcp-sansio probe: interrupted\n")
        return 130
    finally:
        if auth is not None:
            auth[2]()
    if json_output:
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(report.render())
    if report.unusable is not None:
        err.write(f"mcp-sansio probe: unusable: {report.unusable}\n")
        return 2
    return 0 if report.ok else 1
