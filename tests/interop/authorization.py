"""The parts of the authorization interop tests (``test_auth_*.py``): the real authorization
server (oidc-provider, run by ``oidc_provider.mjs``), a person's browser that signs in and
consents through its forms over HTTP, the stdlib HTTP client that carries out our sans-IO
flow's requests, a tiny protected resource metadata server, and the check of a JWT access
token against the server's keys.

Everything listens on 127.0.0.1 and every wait is bounded.
"""

from __future__ import annotations

import contextlib
import html
import http.client
import http.cookiejar
import http.server
import json
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from joserfc import jwt
from joserfc.jwk import KeySet

from mcp_sansio.auth._client_auth import Flow
from mcp_sansio.auth._flow import Authorized, OpenUrl
from mcp_sansio.auth._oauth import HttpRequest

from . import peers
from .conftest import STARTS, stop_process

#: The bound of one HTTP request of the tests, in seconds.
HTTP_TIMEOUT = 30.0
#: How long one start of oidc-provider may take to listen, in seconds (alone it takes
#: 0.3-0.6 s, and 1-5 s beside four busy cores; a few starts in ~17 runs beside other work
#: never listened at all, cause not found: so a start past the bound is killed, its log
#: (with the script's start steps) and its process state printed, and made again, at most
#: START_ATTEMPTS times).
START_TIMEOUT = 30.0
START_ATTEMPTS = 3
#: The most redirects and form posts one authorization may take in the browser.
MAX_BROWSER_STEPS = 20


# ---------------------------------------------------------------------- the authorization server


@dataclass
class OidcProvider:
    """A running oidc-provider: its ``issuer`` (``http://127.0.0.1:PORT``), and the log of
    what it answered (one JSON object per request, from the script's stderr)."""

    issuer: str
    process: subprocess.Popen[bytes]
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        """The requests it answered, in order (``method``, ``path``, ``status``, and the
        ``grant_type``, ``resource``, ``scope``, ``client_id`` it was sent, if any)."""
        out: list[dict[str, Any]] = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def token_requests(self) -> list[dict[str, Any]]:
        """The answered token requests (``POST /token``)."""
        return [r for r in self.requests() if r.get("path") == "/token"]

    def jwks(self) -> KeySet:
        """Its signing keys, from its ``jwks_uri``."""
        meta = get_json(f"{self.issuer}/.well-known/openid-configuration")
        return KeySet.import_key_set(get_json(meta["jwks_uri"]))


def _first_line(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):  # closed under it: the start was given up
        lines.put(stream.readline())


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _process_state(pid: int) -> str:
    """What Linux says of a process that has not started: its state and where it waits."""
    facts = []
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/status").read_text()
        facts += [line for line in status.splitlines() if line.startswith(("State:", "Threads:"))]
    with contextlib.suppress(OSError):
        facts.append(f"wchan: {Path(f'/proc/{pid}/wchan').read_text()}")
    return "; ".join(facts) or "(gone)"


def _start(argv: Sequence[str], log: Path) -> tuple[subprocess.Popen[bytes], bytes] | str:
    """One start: the process and its first stdout line, or (killed) why it failed."""
    began = time.monotonic()
    with open(log, "wb") as err:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    lines: queue.Queue[bytes] = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=_first_line, args=(process.stdout, lines), daemon=True).start()
    try:
        first = lines.get(timeout=START_TIMEOUT)
    except queue.Empty:
        state = _process_state(process.pid)
        stop_process(process)
        _close_pipes(process)
        took = time.monotonic() - began
        STARTS.append(("oidc-provider", None))
        tail = log.read_text(errors="replace")[-4000:]
        return f"no line in {took:.1f} s; {state}; its log:\n{tail}"
    took = time.monotonic() - began
    STARTS.append(("oidc-provider", took))
    if took > START_TIMEOUT / 3:
        print(f"oidc-provider took {took:.1f} s to start", file=sys.stderr)
    return process, first


@contextlib.contextmanager
def oidc_provider(
    command: Sequence[str],
    *,
    resources: Sequence[str] = (),
    log: Path,
    mount: str = "",
    clients: Sequence[Mapping[str, Any]] = (),
) -> Iterator[OidcProvider]:
    """Run oidc-provider (``command`` from :func:`peers.ensure_oidc_provider`) for the
    ``resources`` (every loopback http URL when empty), mounted at ``mount`` (a path such
    as ``/oidc``: the issuer then has it; by default the root), with the pre-registered
    ``clients`` (their metadata), stopped at the end. A start that does not listen within
    ``START_TIMEOUT`` is killed, its log and state printed, and made again."""
    argv = [*command, str(peers.oidc_provider_dir())]
    for resource in resources:
        argv += ["--resource", resource]
    if mount:
        argv += ["--mount", mount]
    for client in clients:
        argv += ["--client", json.dumps(client)]
    failed: list[str] = []
    while True:
        started = _start(argv, log)
        if not isinstance(started, str):
            process, first = started
            break
        failed.append(started)
        print(f"oidc-provider start {len(failed)}: {started}", file=sys.stderr)
        if len(failed) >= START_ATTEMPTS:
            logs = "\n".join(f"--- attempt {i + 1}: {t}" for i, t in enumerate(failed))
            raise AssertionError(f"oidc-provider did not start, {START_ATTEMPTS} times:\n{logs}")
    try:
        if not first:
            raise AssertionError(f"oidc-provider exited ({process.wait(10)}):\n{log.read_text()}")
        issuer = json.loads(first)["issuer"]
        yield OidcProvider(issuer, process, log)
    finally:
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        stop_process(process)
        _close_pipes(process)
        print(f"--- oidc-provider's log ---\n{log.read_text(errors='replace')[-20000:]}")


# ---------------------------------------------------------------------- HTTP


def get_json(url: str) -> Any:
    """GET ``url`` and read its JSON (status 200 asserted)."""
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as response:
        assert response.status == 200, url
        return json.load(response)


def fetch(request: HttpRequest) -> tuple[int, list[tuple[str, str]], bytes]:
    """Make one of the flow's requests with ``http.client`` (no redirect followed)."""
    url = urllib.parse.urlsplit(request.url)
    assert url.scheme == "http", request.url
    assert url.hostname == "127.0.0.1", request.url
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=HTTP_TIMEOUT)
    try:
        target = url.path or "/"
        if url.query:
            target += "?" + url.query
        connection.request(request.method, target, body=request.body, headers=dict(request.headers))
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Browser:
    """A person's browser at the authorization server: it follows the redirects, keeps the
    server's cookies (so a second authorization finds the session and the grant), signs in
    as ``login`` on oidc-provider's development login form and submits its consent form,
    until the server redirects to the client's ``redirect_uri``."""

    login: str = "interop-user"
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)
    pages: list[str] = field(default_factory=list)
    """The form of each page shown (``login`` or ``consent``), in order."""
    redirects: list[str] = field(default_factory=list)
    """Each URL the server redirected to under the ``redirect_uri``, in order."""

    def _open(self, url: str, form: Mapping[str, str] | None = None) -> tuple[int, str, str]:
        opener = urllib.request.build_opener(
            _NoRedirect, urllib.request.HTTPCookieProcessor(self.jar)
        )
        data = None if form is None else urllib.parse.urlencode(form).encode()
        try:
            with opener.open(urllib.request.Request(url, data=data), timeout=HTTP_TIMEOUT) as r:
                return r.status, r.headers.get("Location", ""), r.read().decode()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, e.headers.get("Location", ""), e.read().decode(errors="replace")

    def authorize(self, url: str, redirect_uri: str, *, deliver: bool = False) -> str:
        """Open the authorization request ``url``; the URL it ends at under
        ``redirect_uri`` (holding ``code``, ``state`` and ``iss``). With ``deliver``, that
        URL is opened too, as a browser does (a loopback redirect listener takes it)."""
        form: dict[str, str] | None = None
        for _ in range(MAX_BROWSER_STEPS):
            status, location, page = self._open(url, form)
            form = None
            if status in (302, 303):
                url = urllib.parse.urljoin(url, location)
                if url.startswith(redirect_uri):
                    self.redirects.append(url)
                    if deliver:
                        status, _, page = self._open(url)
                        assert status == 200, f"the redirect listener answered {status}: {page}"
                    return url
                continue
            assert status == 200, f"{url}: {status}\n{page[:2000]}"
            action = re.search(r'<form[^>]*action="([^"]+)"', page)
            prompt = re.search(r'name="prompt" value="(\w+)"', page)
            assert action, f"no form at {url}:\n{page[:2000]}"
            assert prompt, f"no prompt in the form at {url}:\n{page[:2000]}"
            url = urllib.parse.urljoin(url, html.unescape(action.group(1)))
            self.pages.append(prompt.group(1))
            if prompt.group(1) == "login":
                form = {"prompt": "login", "login": self.login, "password": "any"}
            else:
                form = {"prompt": prompt.group(1)}
        raise AssertionError(f"no redirect to {redirect_uri} after {MAX_BROWSER_STEPS} steps")


def deliver_in_thread(browser: Browser, redirect_uri: str) -> Callable[[str], None]:
    """An ``announce`` for a loopback redirect listener: the browser authorizes in a thread
    of its own (the listener waits meanwhile) and opens the redirect."""

    def announce(url: str) -> None:
        threading.Thread(
            target=browser.authorize,
            args=(url, redirect_uri),
            kwargs={"deliver": True},
            daemon=True,
        ).start()

    return announce


def run_flow(flow: Flow, browser: Browser, redirect_uri: str) -> Authorized:
    """Carry out ``flow`` to its end: its HTTP requests with :func:`fetch`, its person's
    step with ``browser``."""
    for _ in range(50):
        step = flow.next_step()
        if isinstance(step, Authorized):
            return step
        if isinstance(step, OpenUrl):
            flow.receive_redirect(browser.authorize(step.url, redirect_uri))
        else:
            status, headers, body = fetch(step)
            flow.receive_response(status, headers, body, now=time.time())
    raise AssertionError("the flow took more than 50 steps")


def query(url: str) -> dict[str, str]:
    """The query parameters of ``url`` (one value each)."""
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


# ---------------------------------------------------------------------- tokens


def access_token_claims(token: str, provider: OidcProvider) -> dict[str, Any]:
    """The claims of a JWT access token, its signature checked with the provider's keys
    (and its header's ``typ``: ``at+jwt``, RFC 9068 section 2.1)."""
    decoded = jwt.decode(token, provider.jwks(), algorithms=["RS256"])
    assert decoded.header.get("typ") == "at+jwt", decoded.header
    claims = dict(decoded.claims)
    assert claims["iss"] == provider.issuer, claims
    return claims


# ---------------------------------------------------------------------- resource metadata


class ResourceMetadataServer:
    """A loopback HTTP server answering the protected resource metadata (RFC 9728) of the
    resource ``http://127.0.0.1:PORT/mcp`` at its path-inserted well-known URI, 404 else;
    it records each request's path."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {}
        self.paths: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.paths.append(self.path)
                if self.path == "/.well-known/oauth-protected-resource/mcp" and outer.document:
                    body = json.dumps(outer.document).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                else:
                    body = b"{}"
                    self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.resource = f"{self.origin}/mcp"
        self.metadata_url = f"{self.origin}/.well-known/oauth-protected-resource/mcp"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ResourceMetadataServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)


def stderr_text(stream: IO[bytes]) -> str:
    """What a server wrote to ``stream`` (a temporary file), as text."""
    stream.seek(0)
    return stream.read().decode(errors="replace")
