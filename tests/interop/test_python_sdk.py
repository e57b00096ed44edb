"""The official Python SDK (``mcp==2.3.0``, in its own venv, see ``peers.py``) against us,
both ways, over stdio:

- its client (``sdk_client.py``) against our example server (``python -m mcp_sansio
  serve``), in each of its modes: ``legacy`` (``initialize``), ``2026-07-28`` (stateless, no
  discovery) and ``auto`` (``server/discover``, falling back to ``initialize``);
- our clients (asyncio, trio, blocking) against its ``MCPServer`` (``sdk_server.py``), in
  the initialize era (``versions=["2025-11-25"]``), with the default dual-era probe (which
  lands in 2026-07-28) and as a 2026-only client.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import pytest

from mcp_sansio import Era, Notification
from mcp_sansio._errors import LocalProtocolError
from mcp_sansio.example import IMAGE_PNG

from .conftest import HERE, Wire, free_port, serve_on_port, stop_process
from .styles import ALL_STYLES, Runtime, adapter, texts

#: The bound of one exchange, in seconds. The SDK imports slowly (seconds of pydantic
#: model building before its first answer), and CI runs several test environments at once.
EXCHANGE = 150.0
TIMEOUT = 60.0
LOG_LEVEL = "io.modelcontextprotocol/logLevel"

ROOTS = [{"uri": "file:///tmp/interop-root", "name": "interop-root"}]


# ---------------------------------------------------------------------- the SDK's client


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
def test_sdk_client_against_our_server(
    mode: str, sdk_python: Path, example_command: list[str]
) -> None:
    """Every feature of our example server, through the SDK's ``Client``: each step of
    ``sdk_client.py`` succeeds and returns what our server says."""
    script = [str(sdk_python), str(HERE / "sdk_client.py"), mode, "--", *example_command]
    try:
        done = subprocess.run(
            script, capture_output=True, text=True, timeout=EXCHANGE, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the SDK client ran for more than {EXCHANGE:g} s:\n{exc.stderr!r}")
    print(f"--- the SDK client's stderr ---\n{done.stderr[-20000:]}")
    assert done.returncode == 0, done.stderr[-5000:]
    out: dict[str, Any] = json.loads(done.stdout)

    failed = {k: v for k, v in out.items() if isinstance(v, dict) and "error" in v}
    assert set(failed) == {"unknown_tool"}, failed
    assert out["unknown_tool"]["code"] == -32602  # an unknown tool is invalid params

    era_2026 = mode != "legacy"
    assert out["protocol_version"] == ("2026-07-28" if era_2026 else "2025-11-25")
    # With mode="2026-07-28" the SDK does not discover, so it never learns the server's name.
    assert out["server_name"] == (None if mode == "2026-07-28" else "mcp-sansio-example")

    assert {"echo", "add", "test_sampling", "test_elicitation", "list-roots"} <= set(out["tools"])
    assert out["echo"] == {"text": ["Echo: hello from the SDK"], "isError": False}
    assert out["add"] == {"text": ["The sum of 2 and 3.5 is 5.5"], "isError": False}
    assert out["tool_error"]["isError"] is True

    (text,) = out["resource"]
    assert text["text"] == "This is the content of the static text resource."
    assert text["mimeType"] == "text/plain"
    (blob,) = out["blob"]
    assert base64.b64decode(blob["blob"]) == IMAGE_PNG
    (item,) = out["template"]
    assert json.loads(item["text"]) == {"id": "7", "templateTest": True, "data": "Data for ID: 7"}

    assert out["prompt"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Prompt with arguments: arg1='alpha', arg2='red'"},
        }
    ]
    assert out["completion"] == ["apple", "apricot"]

    steps = out["progress"]["progress"]
    assert [(p[0], p[1]) for p in steps] == [(0, 100), (50, 100), (100, 100)]
    assert steps[1][2] == "Completed step 50 of 100"

    logging = out["logging"]
    assert logging["text"] == ["Tool with logging executed successfully"]
    assert [log["data"] for log in logging["logs"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]

    # Server→client requests in the initialize era; input_required rounds in 2026-07-28.
    assert out["sampling"]["text"] == ["LLM response: sampled: a haiku"]
    assert out["elicitation"]["text"] == [
        'User response: action=accept, content={"response":"from the SDK client"}'
    ]
    assert out["roots"]["text"] == ["The client's roots:\n- interop-root: file:///tmp/interop-root"]


# ---------------------------------------------------------------------- the SDK's server


class Peer:
    """Our client's handlers for the SDK server's questions, and what reached them."""

    def __init__(self) -> None:
        self.notes: list[Notification] = []
        self.asked: list[str] = []

    def on_notification(self, note: Notification) -> None:
        self.notes.append(note)

    def sampling(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append("sampling")
        prompt = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"sampled: {prompt}"},
            "model": "interop-model",
        }

    def elicitation(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append("elicitation")
        assert params["requestedSchema"]["properties"]["name"]["type"] == "string"
        return {"action": "accept", "content": {"name": "Ada"}}

    def roots(self, ctx: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        self.asked.append("roots")
        return {"roots": ROOTS}

    def options(self, stderr: IO[bytes], versions: list[str] | None) -> dict[str, Any]:
        options: dict[str, Any] = {
            "stderr": stderr,
            "on_notification": self.on_notification,
            "handlers": {
                "sampling/createMessage": self.sampling,
                "elicitation/create": self.elicitation,
                "roots/list": self.roots,
            },
            "timeout": TIMEOUT,
            # The probe's clock starts when the SDK server is spawned, and its imports take
            # seconds (tens of them on a loaded machine): a probe that times out falls back
            # to initialize, which this server then refuses, as the spec allows.
            "probe_timeout": TIMEOUT,
        }
        if versions is not None:
            options["versions"] = versions
        return options

    def logs(self) -> list[Mapping[str, Any]]:
        return [n.params or {} for n in self.notes if n.method == "notifications/message"]


#: Our client's versions: the initialize era, both eras (a probe), the stateless era.
VERSIONS = {"2025-11-25": ["2025-11-25"], "dual": None, "2026-07-28": ["2026-07-28"]}


def _calls(era_2026: bool) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, method, params) of the exchange with the SDK server."""
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("tools", "tools/list", {}),
        ("echo", "tools/call", {"name": "echo", "arguments": {"message": "hi, SDK"}}),
        ("add", "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3.5}}),
        ("greet", "tools/call", {"name": "greet", "arguments": {}}),
        ("write", "tools/call", {"name": "write", "arguments": {"topic": "tea"}}),
        ("where", "tools/call", {"name": "where", "arguments": {}}),
        ("greeting", "resources/read", {"uri": "note://greeting"}),
        ("item", "resources/read", {"uri": "note://items/3"}),
        ("templates", "resources/templates/list", {}),
        ("review", "prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}),
    ]
    if era_2026:
        # The 2026 opt-in to log messages: a level in the request's _meta.
        chatty = {"name": "chatty", "arguments": {}, "_meta": {LOG_LEVEL: "info"}}
        calls.append(("chatty", "tools/call", chatty))
    else:
        calls.append(("ping", "ping", {}))
    return calls


@pytest.mark.parametrize("versions", list(VERSIONS))
def test_our_client_against_sdk_server(
    style: str,
    versions: str,
    sdk_server_command: list[str],
    wire: Wire,
    server_stderr: IO[bytes],
) -> None:
    """Tools (with progress, and with elicitation, sampling and roots asked of us), a
    resource, a template, a prompt, logging: through each of our clients, in each era."""
    peer = Peer()
    options = peer.options(server_stderr, VERSIONS[versions])
    command = wire.wrap(sdk_server_command)
    era_2026 = versions != "2025-11-25"
    calls = _calls(era_2026)
    progress: list[Mapping[str, Any]] = []
    count = {"name": "count", "arguments": {"steps": 3}}
    out: dict[str, Any] = {}

    if style == "blocking":
        with adapter("blocking").Client.connect_stdio(command, **options) as client:
            out["era"], out["version"] = client.era, client.protocol_version
            out["info"] = dict(client.server_info or {})
            for name, method, params in calls:
                out[name] = client.request(method, params)
            out["count"] = client.request("tools/call", count, on_progress=progress.append)
    else:
        rt = Runtime(style)

        async def exchange() -> None:
            async with rt.Client.connect_stdio(command, **options) as client:
                out["era"], out["version"] = client.era, client.protocol_version
                out["info"] = dict(client.server_info or {})
                for name, method, params in calls:
                    out[name] = await client.request(method, params)
                out["count"] = await client.request(
                    "tools/call", count, on_progress=progress.append
                )

        rt.run(exchange, EXCHANGE)

    assert out["era"] is (Era.STATELESS if era_2026 else Era.INITIALIZE)
    assert out["version"] == ("2026-07-28" if era_2026 else "2025-11-25")
    assert out["info"]["name"] == "sdk-interop-server"

    names = {t["name"] for t in out["tools"]["tools"]}
    assert {"echo", "add", "count", "greet", "write", "where", "chatty"} <= names
    assert texts(out["echo"]) == ["Echo: hi, SDK"]
    assert out["add"]["structuredContent"] == {"result": 5.5}
    assert texts(out["greet"]) == ["Hello, Ada!"]
    assert texts(out["write"]) == ["The model says: sampled: Write about tea"]
    assert texts(out["where"]) == ["file:///tmp/interop-root"]
    assert peer.asked == ["elicitation", "sampling", "roots"]
    assert out["greeting"]["contents"] == [
        {"uri": "note://greeting", "mimeType": "text/plain", "text": "Hello from the SDK server"}
    ]
    assert out["item"]["contents"][0]["text"] == "item 3"
    assert [t["uriTemplate"] for t in out["templates"]["resourceTemplates"]] == [
        "note://items/{item}"
    ]
    assert out["review"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please review this code: x = 1"}}
    ]
    assert texts(out["count"]) == ["counted to 3"]
    assert [(p["progress"], p["total"], p.get("message")) for p in progress] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    if era_2026:
        assert texts(out["chatty"]) == ["logged"]
        # The server honours the level in _meta: no debug message. (They do not reach the
        # application without the strictness switch: see test_undeclared_log_messages.)
        assert [m["params"]["level"] for m in wire.received("notifications/message")] == [
            "info",
            "warning",
        ]
    else:
        assert out["ping"] == {}

    sent = [m for d, m in wire.messages() if d == ">"]
    if versions == "dual":
        assert sent[0]["method"] == "server/discover"
        assert "result" in wire.answer_to(sent[0]["id"])
    if versions == "2025-11-25":
        assert sent[0]["method"] == "initialize"
        # In this era the server asked through server→client requests.
        asked = [
            m["method"] for d, m in wire.messages() if d == "<" and "method" in m and "id" in m
        ]
        assert asked == ["elicitation/create", "sampling/createMessage", "roots/list"]
    else:
        # In 2026-07-28 through input_required results, retried with the answers.
        retries = [m for m in wire.sent("tools/call") if "inputResponses" in m["params"]]
        assert len(retries) == 3


@pytest.fixture(params=ALL_STYLES)
def style(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    adapter(name)
    return name


#: The strictness switch that lets the SDK server's log messages through.
LENIENT = {"accept_undeclared": {"notifications/message"}}


@pytest.mark.parametrize("switch", ["strict", "accept_undeclared"])
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_undeclared_log_messages(
    version: str, switch: str, sdk_server_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """The SDK's ``MCPServer`` never declares the ``logging`` capability (in either era),
    yet its tools' ``ctx.info()`` send ``notifications/message``: in the initialize era
    unasked (every level), in 2026-07-28 at the level the request asked for in ``_meta``.
    By default our core refuses a notification of a capability the server did not declare,
    so the application never sees them; ``accept_undeclared={"notifications/message"}``
    lets them through. Either way ``set_logging_level`` is refused locally in the
    initialize era (the switch waives what the peer sends, never what we send)."""
    peer = Peer()
    rt = Runtime("asyncio")
    options = peer.options(server_stderr, [version])
    if switch == "accept_undeclared":
        options.update(LENIENT)
    meta = {"_meta": {LOG_LEVEL: "info"}} if version == "2026-07-28" else {}

    async def exchange() -> tuple[Any, Any, BaseException | None]:
        async with rt.Client.connect_stdio(wire.wrap(sdk_server_command), **options) as client:
            result = await client.request("tools/call", {"name": "chatty", **meta})
            await rt.sleep(0.2)
            refused: BaseException | None = None
            if version == "2025-11-25":
                try:
                    await client.set_logging_level("info")
                except LocalProtocolError as exc:
                    refused = exc
            return client.server_capabilities, result, refused

    caps, result, refused = rt.run(exchange, EXCHANGE)
    assert "logging" not in caps
    assert texts(result) == ["logged"]
    sent = [m["params"] for m in wire.received("notifications/message")]
    if version == "2025-11-25":
        assert [log["level"] for log in sent] == ["debug", "info", "warning"]
        assert isinstance(refused, LocalProtocolError)
    else:
        assert [log["level"] for log in sent] == ["info", "warning"]
    assert peer.logs() == ([] if switch == "strict" else sent)


@pytest.mark.parametrize("style_name", ["asyncio", "trio", "blocking"])
def test_set_logging_level_in_2026(
    style_name: str, sdk_server_command: list[str], wire: Wire, server_stderr: IO[bytes]
) -> None:
    """``set_logging_level`` in 2026-07-28 (no ``logging/setLevel`` there): the level
    rides each later request's ``_meta``, the server filters by it, and (with the
    strictness switch) the messages reach ``on_notification``."""
    peer = Peer()
    options = {**peer.options(server_stderr, ["2026-07-28"]), **LENIENT}
    command = wire.wrap(sdk_server_command)
    if style_name == "blocking":
        with adapter("blocking").Client.connect_stdio(command, **options) as client:
            client.set_logging_level("warning")
            result = client.call_tool("chatty", {})
    else:
        rt = Runtime(style_name)

        async def exchange() -> Any:
            async with rt.Client.connect_stdio(command, **options) as client:
                await client.set_logging_level("warning")
                result = await client.call_tool("chatty", {})
                await rt.until(lambda: bool(peer.logs()), 5.0, "log message")
                return result

        result = rt.run(exchange, EXCHANGE)
    assert texts(result) == ["logged"]
    (call,) = wire.sent("tools/call")
    assert call["params"]["_meta"][LOG_LEVEL] == "warning"
    assert [m["params"]["level"] for m in wire.received("notifications/message")] == ["warning"]
    assert peer.logs() == [{"level": "warning", "data": "a warning message"}]


# ---------------------------------------------------------------------- over HTTP


def _serve_sdk_over_http(
    sdk_python: Path, port: int, stderr: IO[bytes], *flags: str
) -> subprocess.Popen[bytes]:
    """``sdk_server.py`` on Streamable HTTP at ``port``, once it accepts connections."""
    command = [str(sdk_python), str(HERE / "sdk_server.py"), *flags, "http", str(port)]
    return serve_on_port(command, port, stderr, timeout=EXCHANGE)


def test_our_http_client_reopens_the_session_of_a_restarted_sdk_server(
    sdk_python: Path, server_stderr: IO[bytes]
) -> None:
    """The SDK's HTTP server restarts: it answers 404 to the session id of the first
    process, and our client starts a new session and sends the call again, as the
    specification says it MUST; the caller sees only the answer."""
    from mcp_sansio.blocking import Client
    from mcp_sansio.blocking._http_client import HttpStream

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = _serve_sdk_over_http(sdk_python, port, server_stderr)
    try:
        client = Client.connect_http(url, versions=["2025-11-25"], timeout=TIMEOUT)
        with client:
            stream = client.stream
            assert isinstance(stream, HttpStream)
            assert texts(client.call_tool("echo", {"message": "before"})) == ["Echo: before"]
            first = stream.transport.session_id
            assert first is not None
            stop_process(server)
            server = _serve_sdk_over_http(sdk_python, port, server_stderr)
            assert texts(client.call_tool("echo", {"message": "after"})) == ["Echo: after"]
            assert stream.transport.reopened == 1
            assert stream.transport.session_id not in (None, first)
    finally:
        stop_process(server)


def test_a_restarted_sdk_server_gets_the_logging_level_and_subscriptions_back(
    sdk_python: Path, server_stderr: IO[bytes]
) -> None:
    """The SDK's HTTP server (with its initialize-era session state: ``--stateful``)
    restarts; our client reopens the session and, before the next call, sends the last
    logging level and the live subscriptions again. The new server process reports what it
    was told."""
    from mcp_sansio.blocking import Client
    from mcp_sansio.blocking._http_client import HttpStream

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = _serve_sdk_over_http(sdk_python, port, server_stderr, "--stateful")

    def told() -> Any:
        return json.loads(texts(client.call_tool("session_state", {}))[0])

    try:
        client = Client.connect_http(url, versions=["2025-11-25"], timeout=TIMEOUT)
        with client:
            stream = client.stream
            assert isinstance(stream, HttpStream)
            assert client.server_capabilities is not None
            assert client.server_capabilities["resources"]["subscribe"] is True
            client.set_logging_level("error")
            client.subscribe("note://greeting")
            client.subscribe("note://items/1")
            client.unsubscribe("note://greeting")
            assert told() == {"level": "error", "subscribed": ["note://items/1"]}
            stop_process(server)
            server = _serve_sdk_over_http(sdk_python, port, server_stderr, "--stateful")
            assert told() == {"level": "error", "subscribed": ["note://items/1"]}
            assert stream.transport.reopened == 1
    finally:
        stop_process(server)
