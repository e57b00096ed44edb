"""``auth=`` on the blocking, asyncio and trio listeners and the ASGI app (under
hypercorn's asyncio worker), with the keys given as a dict and as a JWKS URL fetched by
each runtime (the :class:`~mcp_sansio.http._sessions.Fetch` work): 401 without a token,
401 for a forged token, the principal in the handler, the session bound to its principal;
503 when the keys cannot be fetched. The requests are made with ``http.client`` from the
test's thread."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest

pytest.importorskip("joserfc")
from test_http_server_auth import (
    INIT,
    ISSUER,
    JWKS,
    OTHER_KEY,
    _call,
    _initialize,
    _text,
    bearer,
    build,
    challenge,
    mint,
)

from mcp_sansio.auth._jwt import JwtVerifier
from mcp_sansio.auth._resource import ProtectedResource, ServerAuth

LIMIT = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Target:
    """Where a server listens: what the helpers of test_http_server_auth need."""

    def __init__(self, port: int) -> None:
        self.address = ("127.0.0.1", port)


@contextmanager
def jwks_server() -> Iterator[tuple[str, list[int]]]:
    """A loopback HTTP server answering the JWKS; the list counts the GETs."""
    hits: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(1)
            body = orjson.dumps(JWKS)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks", hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def make_auth(port: int, jwks_url: str | None, dpop: Any = None) -> tuple[ServerAuth, str]:
    resource = f"http://127.0.0.1:{port}/mcp"
    verifier = (
        JwtVerifier(issuer=ISSUER, jwks=JWKS)
        if jwks_url is None
        else JwtVerifier(issuer=ISSUER, jwks_url=jwks_url)
    )
    pr = ProtectedResource(resource, (ISSUER,), required_scopes=("mcp:tools",))
    return ServerAuth(pr, verifier, dpop=dpop), resource


@contextmanager
def in_thread(run: Callable[[threading.Event, threading.Event], None]) -> Iterator[None]:
    started, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=run, args=(started, stop), daemon=True)
    thread.start()
    assert started.wait(LIMIT)
    try:
        yield
    finally:
        stop.set()
        thread.join(LIMIT)
        assert not thread.is_alive()


def run_asyncio(port: int, auth: ServerAuth) -> Callable[[threading.Event, threading.Event], None]:
    from mcp_sansio.asyncio import serve_http

    def run(started: threading.Event, stop: threading.Event) -> None:
        async def main() -> None:
            listener = await serve_http(build(), port=port, auth=auth, keepalive=None)
            started.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)
            listener.close()
            await listener.wait_closed()

        asyncio.run(main())

    return run


def run_trio(port: int, auth: ServerAuth) -> Callable[[threading.Event, threading.Event], None]:
    import trio

    from mcp_sansio.trio import serve_http

    def run(started: threading.Event, stop: threading.Event) -> None:
        async def main() -> None:
            async with trio.open_nursery() as nursery:
                await nursery.start(
                    lambda task_status: serve_http(
                        build(), port=port, auth=auth, keepalive=None, task_status=task_status
                    )
                )
                started.set()
                while not stop.is_set():
                    await trio.sleep(0.02)
                nursery.cancel_scope.cancel()

        trio.run(main)

    return run


def run_asgi(port: int, auth: ServerAuth) -> Callable[[threading.Event, threading.Event], None]:
    hypercorn = pytest.importorskip("hypercorn")
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    from mcp_sansio.asgi import McpAsgiApp

    del hypercorn

    def run(started: threading.Event, stop: threading.Event) -> None:
        async def main() -> None:
            config = Config()
            config.bind = [f"127.0.0.1:{port}"]
            config.accesslog = None
            app = McpAsgiApp(build(), auth=auth, keepalive=None)
            shutdown = asyncio.Event()

            async def watch() -> None:
                while True:  # until hypercorn listens
                    try:
                        _, writer = await asyncio.open_connection("127.0.0.1", port)
                    except OSError:
                        await asyncio.sleep(0.02)
                        continue
                    writer.close()
                    break
                started.set()
                while not stop.is_set():
                    await asyncio.sleep(0.02)
                shutdown.set()

            task = asyncio.create_task(watch())
            await serve(app, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
            await task

        asyncio.run(main())

    return run


def run_blocking(port: int, auth: ServerAuth) -> Callable[[threading.Event, threading.Event], None]:
    from mcp_sansio.blocking._http_server import HttpListener

    def run(started: threading.Event, stop: threading.Event) -> None:
        sock = socket.create_server(("127.0.0.1", port))
        listener = HttpListener(build(), sock, auth=auth, keepalive=None)
        thread = threading.Thread(target=listener.serve_forever, daemon=True)
        thread.start()
        started.set()
        stop.wait()
        listener.stop()
        thread.join(LIMIT)
        listener.close()

    return run


RUNTIMES = {
    "asyncio": run_asyncio,
    "trio": run_trio,
    "asgi": run_asgi,
    "blocking": run_blocking,
}


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
@pytest.mark.parametrize("keys", ["dict", "url"])
def test_auth_on_the_runtime(runtime: str, keys: str) -> None:
    with jwks_server() as (url, hits):
        port = free_port()
        auth, resource = make_auth(port, url if keys == "url" else None)
        with in_thread(RUNTIMES[runtime](port, auth)):
            target: Any = Target(port)
            from test_http_server_auth import request

            status, headers, _ = request(target, "POST", "/mcp", INIT)
            assert status == 401
            assert challenge(headers)["scope"] == "mcp:tools"
            forged = mint(resource, key=OTHER_KEY)
            status, headers, _ = request(target, "POST", "/mcp", INIT, bearer(forged))
            assert status == 401
            assert challenge(headers)["error"] == "invalid_token"
            token = mint(resource)
            sid = _initialize(target, token)
            status, body = _call(target, token, sid)
            assert status == 200
            assert _text(body) == "alice|mcp:tools"
            status, _ = _call(target, mint(resource, sub="mallory"), sid)
            assert status == 404
        assert (len(hits) >= 1) == (keys == "url")


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_keys_that_cannot_be_fetched_answer_503(runtime: str) -> None:
    """The JWKS URL refuses connections (nothing listens there): the runtime's fetch fails
    (status 0), the token cannot be checked, and the answer is 503 with ``Retry-After``
    and no challenge, not 401 ``invalid_token`` (the token was not found bad)."""
    port = free_port()
    auth, resource = make_auth(port, f"http://127.0.0.1:{free_port()}/jwks")
    with in_thread(RUNTIMES[runtime](port, auth)):
        target: Any = Target(port)
        from test_http_server_auth import request

        status, headers, body = request(target, "POST", "/mcp", INIT, bearer(mint(resource)))
        assert status == 503
        assert headers.get("retry-after") == "60"
        assert headers.get("www-authenticate") is None
        assert b"could not be checked" in body


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_dpop_on_the_runtime(runtime: str) -> None:
    """DPoP (``dpop=DPoPProofs(required=True)``) with the keys fetched by the runtime: the
    proof is checked before the fetch, the key binding after it."""
    from test_http_server_auth import request

    from mcp_sansio.auth import DPoPKey, DPoPProofs

    key = DPoPKey.generate()
    with jwks_server() as (url, hits):
        port = free_port()
        auth, resource = make_auth(port, url, DPoPProofs(required=True))
        with in_thread(RUNTIMES[runtime](port, auth)):
            target: Any = Target(port)
            token = mint(resource, cnf={"jkt": key.thumbprint})
            proof = key.proof("POST", resource, now=time.time(), access_token=token)
            headers = {"authorization": f"DPoP {token}", "dpop": proof}
            status, _, body = request(target, "POST", "/mcp", INIT, headers)
            assert status == 200, body
            assert len(hits) == 1
            # the same proof again: refused before any fetch
            status, found, body = request(target, "POST", "/mcp", INIT, headers)
            assert status == 401
            assert b"used before" in body
            assert 'error="invalid_dpop_proof"' in found["www-authenticate"]
            # a token bound to another key: refused after the keys are known
            other = mint(resource, cnf={"jkt": DPoPKey.generate().thumbprint})
            proof = key.proof("POST", resource, now=time.time(), access_token=other)
            status, found, body = request(
                target, "POST", "/mcp", INIT, {"authorization": f"DPoP {other}", "dpop": proof}
            )
            assert status == 401
            assert b"bound to another key" in body
