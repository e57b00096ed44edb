"""The one-shot ``fetch`` of each runtime (blocking, asyncio, trio) against a small
loopback HTTP server of the test's own (``http.server`` in a thread): the answer whole,
a redirect not followed, the body bound, the time bound, a refused connection, and what
an error message may show (no query, no user information, no header value)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

pytest.importorskip("h11")

from mcp_sansio.auth._oauth import HttpRequest
from mcp_sansio.http._client_fetch import FetchError, FetchResponse, OneShot

Fetch = Callable[..., FetchResponse]


def _blocking(request: HttpRequest, **kw: Any) -> FetchResponse:
    from mcp_sansio.blocking._fetch import fetch

    return fetch(request, **kw)


def _asyncio(request: HttpRequest, **kw: Any) -> FetchResponse:
    from mcp_sansio.asyncio._fetch import fetch

    return asyncio.run(fetch(request, **kw))


def _trio(request: HttpRequest, **kw: Any) -> FetchResponse:
    trio = pytest.importorskip("trio")
    from mcp_sansio.trio._fetch import fetch

    out: list[FetchResponse] = []

    async def main() -> None:
        out.append(await fetch(request, **kw))

    trio.run(main)
    return out[0]


RUNTIMES = pytest.mark.parametrize(
    "fetch", [_blocking, _asyncio, _trio], ids=["blocking", "asyncio", "trio"]
)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[tuple[str, str, dict[str, str], bytes]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((self.command, self.path, dict(self.headers), body))
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/big"):
            data = b"x" * 5000
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path.startswith("/silent"):
            threading.Event().wait(5)
        else:
            data = b'{"echo": ' + (body or b"null") + b"}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    do_GET = do_POST = _answer


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@RUNTIMES
def test_get_and_post(fetch: Fetch, base: str) -> None:
    status, headers, body = fetch(
        HttpRequest("GET", base + "/doc?a=1", (("Accept", "application/json"),))
    )
    assert status == 200
    assert body == b'{"echo": null}'
    assert ("content-type", "application/json") in headers
    method, path, sent, _ = _Handler.seen[-1]
    assert (method, path, sent["Accept"]) == ("GET", "/doc?a=1", "application/json")
    status, _, body = fetch(
        HttpRequest("POST", base + "/token", (("Content-Type", "application/json"),), b"[1,2]")
    )
    assert status == 200
    assert body == b'{"echo": [1,2]}'
    assert _Handler.seen[-1][3] == b"[1,2]"


@RUNTIMES
def test_redirect_not_followed(fetch: Fetch, base: str) -> None:
    before = len(_Handler.seen)
    status, headers, _ = fetch(HttpRequest("GET", base + "/redirect"))
    assert status == 302
    assert ("location", "/elsewhere") in headers
    assert len(_Handler.seen) == before + 1


@RUNTIMES
def test_body_bound(fetch: Fetch, base: str) -> None:
    assert len(fetch(HttpRequest("GET", base + "/big"), max_body=5000).body) == 5000
    with pytest.raises(FetchError, match="over 4999 bytes"):
        fetch(HttpRequest("GET", base + "/big"), max_body=4999)


@RUNTIMES
def test_time_bound(fetch: Fetch, base: str) -> None:
    with pytest.raises(FetchError, match="no whole answer within"):
        fetch(HttpRequest("GET", base + "/silent"), timeout=0.2)


@RUNTIMES
def test_refused(fetch: Fetch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the test fetches: nothing listens there
    url = f"http://user:pw@127.0.0.1:{port}/token?code=SECRETCODE"
    with pytest.raises(FetchError) as info:
        fetch(HttpRequest("POST", url, (("Authorization", "Basic SECRETBASIC"),), b"SECRETBODY"))
    text = str(info.value)
    assert text.startswith(f"POST http://127.0.0.1:{port}/token: ")
    assert "SECRET" not in text
    assert "pw" not in text


def test_not_http() -> None:
    with pytest.raises(FetchError, match="not an http"):
        OneShot(HttpRequest("GET", "ftp://example.org/x"))


def test_malformed_answer() -> None:
    shot = OneShot(HttpRequest("GET", "http://127.0.0.1/x"))
    shot.start()
    with pytest.raises(FetchError, match="malformed"):
        shot.receive(b"NOT HTTP\r\n\r\n")


def test_eof_before_answer() -> None:
    shot = OneShot(HttpRequest("GET", "http://127.0.0.1/x"))
    shot.start()
    assert shot.receive(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") is None
    with pytest.raises(FetchError, match="closed connection"):
        shot.receive(b"")


def test_an_invalid_header_is_not_quoted() -> None:
    shot = OneShot(
        HttpRequest("POST", "http://127.0.0.1/t", (("Authorization", "Basic SE\nCRET"),))
    )
    with pytest.raises(FetchError) as info:
        shot.start()
    assert "CRET" not in str(info.value)


@pytest.fixture(scope="module")
def https_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ssl.SSLContext]]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl tool")
    from test_http_client_blocking import make_certificate

    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client_context = ssl.create_default_context(cafile=str(cert))
    yield f"https://127.0.0.1:{server.server_address[1]}", client_context
    server.shutdown()
    server.server_close()


@RUNTIMES
def test_https_with_the_context_given(fetch: Fetch, https_base: tuple[str, ssl.SSLContext]) -> None:
    base, context = https_base
    status, _, body = fetch(HttpRequest("GET", base + "/doc"), ssl=context)
    assert status == 200
    assert body == b'{"echo": null}'
    with pytest.raises(FetchError):  # the system's default context does not trust it
        fetch(HttpRequest("GET", base + "/doc"), timeout=5.0)
