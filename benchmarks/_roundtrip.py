"""Round trip: bytes -> event -> bytes through a client and a server ``Connection``.

One iteration is a ``tools/call`` round trip, four messages' worth of work:

1. the client sends a ``tools/call`` request (a fresh integer id each time): bytes;
2. the server receives those bytes and ``next_event()`` gives the ``Request``;
3. the server sends the ``Response`` (a 200-byte text result): bytes;
4. the client receives them and ``next_event()`` gives the ``Response``.

Compared with the floor (orjson ``dumps`` + ``loads`` of the same request and response:
four calls) and with the official SDK's per-message work for the same four messages
(encode request, decode request, encode response, decode response, as in
:mod:`_columns`).

When ``mcp_sansio.types`` is built, a second mcp-sansio row also types the payloads on
the way: the server structures the params, answers with a typed result object, and the
client structures the result.

``mcp_sansio.Connection`` is being written; until it exists the mcp-sansio rows are n/a.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import count, repeat
from typing import Any, Final

import orjson
from _columns import NotAvailable, sdk_decode_once, sdk_encode_once, sdk_module, types_module
from _messages import PROTOCOL_VERSION, Sample, tool_call_request, tool_call_result

__all__ = ["ROUND_TRIP_ROWS", "Row", "connection_pair", "round_trip_samples"]

Loop = Callable[[int], object]

_REQUEST: Final = tool_call_request(0)
_RESULT: Final = tool_call_result(0)
PARAMS: Final[dict[str, Any]] = _REQUEST["params"]
RESULT: Final[dict[str, Any]] = _RESULT["result"]


def round_trip_samples() -> tuple[Sample, Sample]:
    """The request and the response of one round trip, as samples."""
    return (
        Sample("rt_request", "tools/call request", "request", "tools/call", tool_call_request(7)),
        Sample("rt_response", "tools/call result", "response", "tools/call", tool_call_result(7)),
    )


def _sansio() -> Any:
    import mcp_sansio

    if not hasattr(mcp_sansio, "Connection"):
        raise NotAvailable("n/a (mcp_sansio.Connection not built yet)")
    return mcp_sansio


def connection_pair() -> tuple[Any, Any]:
    """A client and a server ``Connection``, past the ``initialize`` handshake."""
    m = _sansio()
    client = m.Connection(m.Role.CLIENT, versions=[PROTOCOL_VERSION])
    server = m.Connection(m.Role.SERVER, versions=[PROTOCOL_VERSION], capabilities={"tools": {}})

    def expect(conn: Any, cls: type) -> Any:
        event = conn.next_event()
        if type(event) is not cls:
            raise AssertionError(f"expected {cls.__name__}, got {event!r:.300}")
        return event

    server.receive_data(
        client.send(
            m.Request(
                id=0,
                method="initialize",
                params={
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "b", "version": "1"},
                },
            )
        )
    )
    expect(server, m.Request)
    client.receive_data(
        server.send(
            m.Response(
                id=0,
                result={
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        )
    )
    expect(client, m.Response)
    server.receive_data(client.send(m.Notification(method="notifications/initialized")))
    expect(server, m.Notification)
    if server.next_event() is not m.NEED_DATA or client.next_event() is not m.NEED_DATA:
        raise AssertionError("events left over after the handshake")
    return client, server


def _check_sansio(typed: bool) -> None:
    """Run a few round trips with every check on, before timing the lean loop."""
    m = _sansio()
    types = types_module() if typed else None
    client, server = connection_pair()
    for i in range(1, 4):
        server.receive_data(client.send(m.Request(id=i, method="tools/call", params=PARAMS)))
        req = server.next_event()
        assert type(req) is m.Request, req
        assert (req.id, req.params) == (i, PARAMS), req
        result: Any = RESULT
        if types is not None:
            types.structure_params(PROTOCOL_VERSION, "tools/call", req.params)
            result = types.structure_result(PROTOCOL_VERSION, "tools/call", RESULT)
        data = server.send(m.Response(id=i, result=result))
        assert orjson.loads(data) == {"jsonrpc": "2.0", "id": i, "result": RESULT}, data
        client.receive_data(data)
        res = client.next_event()
        assert type(res) is m.Response, res
        assert (res.id, res.result) == (i, RESULT), res
        if types is not None:
            types.structure_result(PROTOCOL_VERSION, "tools/call", res.result)
        assert server.next_event() is m.NEED_DATA
        assert client.next_event() is m.NEED_DATA


def sansio_loop() -> Loop:
    """mcp-sansio: envelope and state machine, params and result as dicts."""
    m = _sansio()
    _check_sansio(typed=False)
    client, server = connection_pair()
    request, response = m.Request, m.Response
    c_send, c_recv, c_next = client.send, client.receive_data, client.next_event
    s_send, s_recv, s_next = server.send, server.receive_data, server.next_event
    ids = count(1)
    params, result = PARAMS, RESULT

    def run(n: int) -> None:
        for _ in repeat(None, n):
            s_recv(c_send(request(id=next(ids), method="tools/call", params=params)))
            req = s_next()
            c_recv(s_send(response(id=req.id, result=result)))
            c_next()

    return run


def sansio_typed_loop() -> Loop:
    """mcp-sansio: as :func:`sansio_loop`, with params and result typed on both sides."""
    m = _sansio()
    types = types_module()
    _check_sansio(typed=True)
    client, server = connection_pair()
    request, response = m.Request, m.Response
    c_send, c_recv, c_next = client.send, client.receive_data, client.next_event
    s_send, s_recv, s_next = server.send, server.receive_data, server.next_event
    structure_params, structure_result = types.structure_params, types.structure_result
    ids = count(1)
    version = PROTOCOL_VERSION
    params = PARAMS
    typed_result = structure_result(version, "tools/call", RESULT)

    def run(n: int) -> None:
        for _ in repeat(None, n):
            s_recv(c_send(request(id=next(ids), method="tools/call", params=params)))
            req = s_next()
            structure_params(version, "tools/call", req.params)
            c_recv(s_send(response(id=req.id, result=typed_result)))
            structure_result(version, "tools/call", c_next().result)

    return run


def floor_loop() -> Loop:
    """orjson alone: dumps and loads of the same request and response."""
    req_sample, res_sample = round_trip_samples()
    dumps, loads = orjson.dumps, orjson.loads
    req_obj, res_obj = req_sample.message, res_sample.message
    req_line, res_line = req_sample.line, res_sample.line

    def run(n: int) -> None:
        for _ in repeat(None, n):
            dumps(req_obj)
            loads(req_line)
            dumps(res_obj)
            loads(res_line)

    return run


def sdk_loop() -> Loop:
    """The official SDK's per-message work for the same four messages."""
    mt = sdk_module()
    req_sample, res_sample = round_trip_samples()
    enc_req, dec_req = sdk_encode_once(mt, req_sample), sdk_decode_once(mt, req_sample)
    enc_res, dec_res = sdk_encode_once(mt, res_sample), sdk_decode_once(mt, res_sample)

    def run(n: int) -> None:
        for _ in repeat(None, n):
            enc_req()
            dec_req()
            enc_res()
            dec_res()

    return run


@dataclass(frozen=True)
class Row:
    key: str
    title: str
    build: Callable[[], Loop]


ROUND_TRIP_ROWS: Final[tuple[Row, ...]] = (
    Row("floor", "orjson loads+dumps, 4 messages (floor)", floor_loop),
    Row("sansio", "mcp-sansio Connection pair, dict payloads", sansio_loop),
    Row("sansio_typed", "mcp-sansio Connection pair, typed payloads", sansio_typed_loop),
    Row("sdk", "official SDK per-message work, 4 messages", sdk_loop),
)
