"""``HttpTarget(extra_headers=...)``: every request of the probe's HTTP channel, its POSTs
and the DELETE that ends the session, carries the headers the hook gives for its method
(``mcp-sansio probe --http URL --token T`` sends ``Authorization`` this way)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import orjson
import pytest

from mcp_sansio.testing._http_target import HttpTarget

SEEN: list[tuple[str, str | None]] = []


class _Recorder(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        SEEN.append(("POST", self.headers.get("Authorization")))
        message = orjson.loads(body)
        answer = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "serverInfo": {"name": "recorder", "version": "0"},
                },
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_DELETE(self) -> None:
        SEEN.append(("DELETE", self.headers.get("Authorization")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def url() -> Iterator[str]:
    SEEN.clear()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
)


def _session(target: HttpTarget) -> None:
    channel = target.open()
    channel.send(INITIALIZE + b"\n")
    assert channel.receive(10.0) is not None
    channel.close()


def test_each_request_carries_the_hooks_headers(url: str) -> None:
    methods: list[str] = []

    def extra(method: str) -> list[tuple[str, str]]:
        methods.append(method)
        return [("Authorization", f"Bearer for-{method}")]

    _session(HttpTarget(url, extra_headers=extra))
    assert SEEN == [("POST", "Bearer for-POST"), ("DELETE", "Bearer for-DELETE")]
    assert methods == ["POST", "DELETE"]


def test_without_the_hook_no_authorization_goes(url: str) -> None:
    _session(HttpTarget(url))
    assert SEEN == [("POST", None), ("DELETE", None)]
