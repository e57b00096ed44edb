"""The blocking binding of the Streamable HTTP client
(``mcp_sansio.blocking.Client.connect_http``) against our own server
(``mcp_sansio.blocking.serve_http`` in a thread, with sync tools: the blocking adapter cannot
run the example's coroutine handlers) over loopback, in both eras. Every wait is bounded.

In the initialize era, :func:`settle` waits, after opening, for the server's ``202`` to
``notifications/initialized``: the transport does not hold the next POST back until then,
so a call could otherwise reach the server first.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("h11")

import orjson

from mcp_sansio import Notification
from mcp_sansio.blocking import Client, Context, McpError, RequestTimeout, serve_http
from mcp_sansio.blocking._http_client import HttpStream
from mcp_sansio.blocking._http_server import HttpListener
from mcp_sansio.http._client import HttpRequest
from mcp_sansio.server import Server

LIMIT = 10.0  # seconds, for any one wait
V2025 = "2025-11-25"
V2026 = "2026-07-28"
ERAS = pytest.mark.parametrize("versions", [[V2025], None], ids=["initialize", "default"])
NOTHING = {"type": "object"}
WATCHED = "test://watched"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Probe:
    """What the tools saw."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0
        self.cancelled = threading.Event()


def make_server(probe: Probe) -> Server:
    server = Server("blocking-http-client-test", "1.0")

    @server.tool("echo", input_schema={"type": "object", "properties": {"m": {}}})
    def echo(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Echo ``m``."
        return f"Echo: {arguments.get('m', '')}"

    @server.tool("progress", input_schema=NOTHING)
    def progress(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Report progress three times."
        for step in (1, 2, 3):
            ctx.progress(step, 3, f"step {step}")
            ctx.sleep(0.01)
        return "done"

    @server.tool("ask", input_schema=NOTHING)
    def ask(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Ask the user's name."
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {}}})
        return f"Hello, {answer['content']['name']}!"

    @server.tool("nap", input_schema=NOTHING)
    def nap(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Wait a little, counting the handlers waiting at once."
        with probe.lock:
            probe.active += 1
            probe.most = max(probe.most, probe.active)
        ctx.sleep(float(arguments.get("seconds", 0.3)))
        with probe.lock:
            probe.active -= 1
        return f"nap {arguments.get('n')}"

    @server.tool("wait", input_schema=NOTHING)
    def wait(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Wait until cancelled (at most LIMIT seconds)."
        ctx.sleep(LIMIT)
        if ctx.cancelled:
            probe.cancelled.set()
        return "waited"

    @server.resource(WATCHED, name="watched")
    def watched(ctx: Context, uri: str) -> str:
        "A resource that ``touch`` changes."
        return "watched"

    @server.tool("touch", input_schema=NOTHING)
    def touch(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "Log at two levels and tell the subscribers of WATCHED that it changed."
        ctx.log("info", "touched (info)")
        ctx.log("error", "touched (error)")
        ctx.resource_updated(WATCHED)
        return "touched"

    @server.tool("reconnect", input_schema=NOTHING)
    def reconnect(ctx: Context, arguments: Mapping[str, Any]) -> str:
        "End the HTTP response mid-call; answer after."
        ctx.close_stream()
        ctx.sleep(0.1)
        return "after"

    return server


@pytest.fixture
def probe() -> Probe:
    return Probe()


@contextlib.contextmanager
def serving(probe: Probe, **options: Any) -> Iterator[HttpListener]:
    """``serve_http`` in a thread, stopped on the way out."""
    ready: queue.Queue[HttpListener] = queue.Queue()
    thread = threading.Thread(
        target=serve_http, args=(make_server(probe),), kwargs={"ready": ready.put, **options}
    )
    thread.start()
    listener = ready.get(timeout=LIMIT)
    try:
        yield listener
    finally:
        listener.stop()
        thread.join(LIMIT)
        assert not thread.is_alive()


def stream_of(client: Client) -> HttpStream:
    assert isinstance(client.stream, HttpStream)
    return client.stream


def until(condition: Callable[[], Any], what: str) -> None:
    end = time.monotonic() + LIMIT
    while not condition():
        assert time.monotonic() < end, f"still waiting for {what}"
        time.sleep(0.005)


def settle(client: Client) -> None:
    """Wait until no exchange is open (``notifications/initialized`` answered)."""
    until(lambda: not stream_of(client).transport.open_streams, "the open exchanges")


def workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcp-http-client-")}


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[HttpRequest]:
    """Every request the HTTP streams make, in order."""
    seen: list[HttpRequest] = []
    start = HttpStream._start

    def record(self: HttpStream, request: HttpRequest) -> None:
        seen.append(request)
        start(self, request)

    monkeypatch.setattr(HttpStream, "_start", record)
    return seen


def connect(listener: HttpListener, versions: list[str] | None, **options: Any) -> Client:
    options.setdefault("timeout", LIMIT)
    client = Client.connect_http(listener.url, versions=versions, **options)
    if versions == [V2025]:
        settle(client)
    return client


# ---------------------------------------------------------------------- calls


@ERAS
def test_open_call_and_progress(probe: Probe, versions: list[str] | None) -> None:
    with serving(probe) as listener, connect(listener, versions) as client:
        assert client.protocol_version == (V2025 if versions else V2026)
        assert (client.server_info or {}).get("name") == "blocking-http-client-test"
        assert {t["name"] for t in client.list_tools()["tools"]} >= {"echo", "progress"}
        assert client.call_tool("echo", {"m": "hi"})["content"][0]["text"] == "Echo: hi"
        seen: list[Mapping[str, Any]] = []
        assert client.call_tool("progress", on_progress=seen.append)["content"][0]["text"] == "done"
        assert [(p["progress"], p["message"]) for p in seen] == [
            (1, "step 1"),
            (2, "step 2"),
            (3, "step 3"),
        ]
    until(lambda: not workers(), "the worker threads to end")


@ERAS
def test_sequential_calls_reuse_connections(
    probe: Probe, versions: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[int] = []
    open_connection = HttpStream._open

    def counting(self: HttpStream) -> Any:
        opened.append(1)
        return open_connection(self)

    monkeypatch.setattr(HttpStream, "_open", counting)
    with serving(probe) as listener, connect(listener, versions) as client:
        client.call_tool("echo", {"m": 0})
        before = len(opened)
        for i in range(20):
            assert client.call_tool("echo", {"m": i})["content"][0]["text"] == f"Echo: {i}"
        assert len(opened) == before


@ERAS
def test_clients_in_threads_have_calls_in_flight_at_once(
    probe: Probe, versions: list[str] | None
) -> None:
    errors: list[BaseException] = []
    results: list[str] = []

    def one(n: int) -> None:
        try:
            with connect(listener, versions) as client:
                for i in range(3):
                    answer = client.call_tool("nap", {"n": f"{n}.{i}", "seconds": 0.1})
                    results.append(answer["content"][0]["text"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with serving(probe) as listener:
        threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(LIMIT)
    assert not errors, errors
    assert sorted(results) == sorted(f"nap {n}.{i}" for n in range(6) for i in range(3))
    assert probe.most > 1  # the calls of different clients overlapped


@pytest.mark.parametrize("max_workers", [3, 12])
def test_requests_in_flight_are_bounded_by_max_workers(probe: Probe, max_workers: int) -> None:
    with serving(probe) as listener:
        stream = HttpStream(listener.url, max_workers=max_workers)
        try:
            for n in range(12):  # 2026-07-28 calls, without a session: one POST each
                params = {"name": "nap", "arguments": {"n": n, "seconds": 0.3}, "_meta": META}
                call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
                stream.write(orjson.dumps(call) + b"\n")
            assert len(workers()) <= max_workers
            answers: dict[int, str] = {}
            data = b""
            end = time.monotonic() + LIMIT
            while len(answers) < 12:
                assert time.monotonic() < end
                assert len(stream._workers) <= max_workers
                chunk = stream.read_some(0.05)
                assert chunk != b""
                data += chunk or b""
                *lines, data = data.split(b"\n")
                for line in lines:
                    message = orjson.loads(line)
                    answers[message["id"]] = message["result"]["content"][0]["text"]
            assert answers == {n: f"nap {n}" for n in range(12)}
            assert probe.most == max_workers  # as many at once as there are threads
        finally:
            stream.close()
    assert not workers()


@ERAS
def test_elicitation_is_answered(
    probe: Probe, versions: list[str] | None, made: list[HttpRequest]
) -> None:
    asked: list[Mapping[str, Any]] = []

    def elicit(ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    handlers = {"elicitation/create": elicit}
    with serving(probe) as listener, connect(listener, versions, handlers=handlers) as client:
        assert client.call_tool("ask")["content"][0]["text"] == "Hello, Ada!"
    assert [a["message"] for a in asked] == ["Your name?"]
    posts = [orjson.loads(r.body) for r in made if r.method == "POST"]
    calls = [p for p in posts if p.get("method") == "tools/call"]
    if versions:
        # The server asked on the call's event stream; the answer was POSTed back.
        assert len(calls) == 1
        assert any(p.get("result", {}).get("action") == "accept" for p in posts)
    else:
        # 2026-07-28: the call ended with input_required and was retried with the answer.
        assert len(calls) == 2
        assert "inputResponses" in calls[1]["params"]


def test_a_stream_cut_short_is_resumed_after_its_retry(
    probe: Probe, made: list[HttpRequest]
) -> None:
    with serving(probe, retry=200) as listener, connect(listener, [V2025]) as client:
        start = time.monotonic()
        assert client.call_tool("reconnect")["content"][0]["text"] == "after"
        assert time.monotonic() - start >= 0.19
    (get,) = [r for r in made if r.method == "GET"]
    assert get.delay == pytest.approx(0.2)
    assert "Last-Event-ID" in dict(get.headers)


@pytest.mark.parametrize("versions", [[V2025], [V2026]], ids=["initialize", "2026"])
def test_a_timed_out_call_is_cancelled(probe: Probe, versions: list[str]) -> None:
    with serving(probe) as listener, connect(listener, versions) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("wait", timeout=0.3)
        # Initialize era: notifications/cancelled; 2026-07-28: the stream was closed.
        assert probe.cancelled.wait(LIMIT)
        stream = stream_of(client)
        until(lambda: not stream.transport.open_streams and not stream._jobs, "the exchanges")
        assert client.call_tool("echo", {"m": "on"})["content"][0]["text"] == "Echo: on"


# ---------------------------------------------------------------------- failures, closing


@ERAS
def test_a_server_that_is_down(probe: Probe, versions: list[str] | None) -> None:
    with serving(probe) as listener:
        url = listener.url
    start = time.monotonic()
    with pytest.raises(McpError, match="cannot connect"):
        Client.connect_http(url, versions=versions, timeout=5)
    assert time.monotonic() - start < 5
    until(lambda: not workers(), "the worker threads to end")


def test_a_server_that_goes_away_mid_session(probe: Probe) -> None:
    with serving(probe) as listener:
        client = connect(listener, [V2026], timeout=5)
    with client, pytest.raises(McpError, match=r"cannot connect|closed|broke|failed"):
        client.call_tool("echo", {"m": "gone"})


def test_a_server_that_stops_during_a_call(probe: Probe) -> None:
    with serving(probe) as listener:
        client = connect(listener, [V2025], timeout=5)
        stopper = threading.Timer(0.3, listener.stop)
        stopper.start()
        try:
            with client, pytest.raises(McpError, match=r"closed|broke|failed"):
                client.call_tool("wait")
        finally:
            stopper.join(LIMIT)


def test_stale_kept_alive_connections_are_retried(probe: Probe) -> None:
    with serving(probe) as first:
        port = first.port
        client = connect(first, [V2026])
        client.call_tool("echo", {"m": "before"})
    assert len(stream_of(client)._pool) > 0  # kept alive, now closed by the server
    with serving(probe, port=port), client:
        answer = client.call_tool("echo", {"m": "after"})
        assert answer["content"][0]["text"] == "Echo: after"


@pytest.mark.parametrize("listen", [False, True], ids=["post-only", "listen"])
def test_a_restarted_server_gets_a_new_session(probe: Probe, listen: bool) -> None:
    """The server restarts and answers 404 to the old session id: the client starts a new
    session (a new initialize) and sends the call again; the caller sees only its answer."""
    with serving(probe) as first:
        port = first.port
        if listen:  # its GET stream stays open: no settling
            client = Client.connect_http(first.url, versions=[V2025], listen=True, timeout=LIMIT)
        else:
            client = connect(first, [V2025])
        assert client.call_tool("echo", {"m": "before"})["content"][0]["text"] == "Echo: before"
        old = stream_of(client).transport.session_id
        assert old is not None
    with serving(probe, port=port), client:
        answer = client.call_tool("echo", {"m": "after"})
        assert answer["content"][0]["text"] == "Echo: after"
        transport = stream_of(client).transport
        assert transport.reopened == 1
        assert transport.session_id not in (None, old)
        assert client.call_tool("echo", {"m": "again"})["content"][0]["text"] == "Echo: again"
        assert transport.reopened == 1


def test_a_reopened_session_keeps_its_subscriptions_and_logging_level(probe: Probe) -> None:
    """What the session set on the server before it restarted (a resource subscription, the
    logging level) holds in the new session: the transport restores it before the call."""
    seen: list[tuple[str, Any]] = []

    def on_notification(note: Notification) -> None:
        params = note.params or {}
        seen.append((note.method, params.get("uri") or params.get("data")))

    def touched() -> list[tuple[str, Any]]:
        seen.clear()
        assert client.call_tool("touch")["content"][0]["text"] == "touched"
        return sorted(seen)

    expected = [
        ("notifications/message", "touched (error)"),
        ("notifications/resources/updated", WATCHED),
    ]
    with serving(probe) as first:
        port = first.port
        client = connect(first, [V2025], on_notification=on_notification)
        client.subscribe("test://other")
        client.subscribe(WATCHED)
        client.unsubscribe("test://other")
        client.set_logging_level("error")
        assert touched() == expected
    with serving(probe, port=port), client:
        assert touched() == expected
        assert stream_of(client).transport.reopened == 1


def test_reopen_off_fails_the_call_of_a_restarted_server(probe: Probe) -> None:
    with serving(probe) as first:
        port = first.port
        client = connect(first, [V2025], reopen=False)
        client.call_tool("echo", {"m": "before"})
    with serving(probe, port=port), client, pytest.raises(McpError, match="expired"):
        client.call_tool("echo", {"m": "after"})


def test_a_delayed_resumption_is_dropped_with_its_call(probe: Probe) -> None:
    with serving(probe, retry=5000) as listener, connect(listener, [V2025]) as client:
        start = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("reconnect", timeout=0.5)  # resumed only after 5 s
        stream = stream_of(client)
        until(lambda: not stream._jobs, "the delayed request to be dropped")
        assert time.monotonic() - start < 3
        assert client.call_tool("echo", {"m": "on"})["content"][0]["text"] == "Echo: on"


def test_close_waits_no_longer_than_close_timeout(probe: Probe) -> None:
    with serving(probe) as listener:
        client = connect(listener, [V2025], close_timeout=0)
        client.call_tool("echo", {"m": 1})
        start = time.monotonic()
        client.close()  # the DELETE is dropped at once
        assert time.monotonic() - start < 1
        assert not stream_of(client)._jobs
    until(lambda: not workers(), "the worker threads to end")


def test_close_ends_the_session_with_delete(probe: Probe, made: list[HttpRequest]) -> None:
    with serving(probe) as listener:
        with connect(listener, [V2025]) as client:
            client.call_tool("echo", {"m": 1})
            session_id = stream_of(client).transport.session_id
            assert session_id in listener.core.sessions
        assert made[-1].method == "DELETE"
        assert dict(made[-1].headers)["Mcp-Session-Id"] == session_id
        assert session_id not in listener.core.sessions  # the server ended it
        # 2026-07-28 has no session to end.
        made.clear()
        with connect(listener, [V2026]) as client:
            client.call_tool("echo", {"m": 2})
        assert "DELETE" not in {r.method for r in made}
    until(lambda: not workers(), "the worker threads to end")


def test_the_stream_on_its_own(probe: Probe) -> None:
    with pytest.raises(ValueError, match="max_workers"):
        HttpStream("http://127.0.0.1:9/mcp", max_workers=0)
    with pytest.raises(ValueError, match="not an http"):
        Client.connect_http("ftp://example.org/mcp")
    with serving(probe) as listener:
        stream = HttpStream(listener.url)
        assert stream.read_some(0.01) is None  # nothing yet
        assert stream.read_some(-1) is None
        stream.close()
        assert stream.read_some(None) == b""
        stream.write(b'{"jsonrpc": "2.0", "method": "ignored"}\n')
        stream.close()  # idempotent
        assert stream.read_some(0) == b""


# ---------------------------------------------------------------------- https


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key (with the openssl tool)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
    extension = ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*command.split(), *extension, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@contextlib.contextmanager
def tls_proxy(backend: int, context: ssl.SSLContext) -> Iterator[int]:
    """A TLS-terminating proxy to ``backend`` on loopback, in threads; yields its port."""
    listening = socket.create_server(("127.0.0.1", 0))
    listening.settimeout(0.05)
    stopping = threading.Event()
    threads: list[threading.Thread] = []

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while not stopping.is_set():
            try:
                raw, _ = listening.accept()
            except TimeoutError:
                continue
            raw.settimeout(LIMIT)
            try:
                tls = context.wrap_socket(raw, server_side=True)
            except OSError:
                raw.close()
                continue
            tls.settimeout(None)
            plain = socket.create_connection(("127.0.0.1", backend))
            for source, sink in ((tls, plain), (plain, tls)):
                thread = threading.Thread(target=pipe, args=(source, sink), daemon=True)
                threads.append(thread)
                thread.start()
            sockets.extend((tls, plain))

    sockets: list[socket.socket] = []
    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield listening.getsockname()[1]
    finally:
        stopping.set()
        acceptor.join(LIMIT)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(LIMIT)
        for sock in [*sockets, listening]:
            sock.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl tool")
def test_https(probe: Probe, tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))
    with serving(probe) as listener, tls_proxy(listener.port, server_context) as port:
        secure = f"https://127.0.0.1:{port}/mcp"
        with Client.connect_http(secure, ssl=client_context, timeout=LIMIT) as client:
            assert client.protocol_version == V2026
            assert client.call_tool("echo", {"m": "tls"})["content"][0]["text"] == "Echo: tls"
        # Without trusting the certificate, the connection is refused.
        with pytest.raises(McpError, match=r"certificate|SSL|failed"):
            Client.connect_http(secure, versions=[V2026], timeout=5)
