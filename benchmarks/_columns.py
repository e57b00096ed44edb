"""The four ways of decoding and encoding a message that the benchmarks compare.

For each :class:`~_messages.Sample` a column builds a *decode* and an *encode* loop
function (``run(n)``, see :mod:`_timing`), or says why it cannot (``NotAvailable``):

``floor``
    orjson alone on the same bytes: ``orjson.loads(line)`` / ``orjson.dumps(obj)``.
``envelope``
    mcp-sansio's JSON-RPC envelope only: ``mcp_sansio._jsonrpc.decode(line)`` /
    ``encode(event)`` (params and results stay dicts).
``typed``
    mcp-sansio fully typed: envelope decode plus ``mcp_sansio.types.structure_params`` or
    ``structure_result`` on the params / result; encode from the typed object with
    ``mcp_sansio.types.unstructure`` plus the envelope encode.
``sdk``
    the official Python SDK doing what it does per message (read from its 2.3.0 source):
    decode = ``jsonrpc_message_adapter.validate_json(line, by_name=False)`` (the stdio
    readers' call) plus ``<Params>.model_validate(params, by_name=False)`` (the server
    runner's call for a request; the client's for a notification) or
    ``<Result>.model_validate(result, by_name=False)`` (the client session's call for a
    result); encode = ``typed.model_dump(by_alias=True, mode="json", exclude_none=True)``
    (session / runner), wrapped in ``JSONRPCRequest`` / ``JSONRPCNotification`` /
    ``JSONRPCResponse`` (dispatcher), then ``model_dump_json(by_alias=True,
    exclude_unset=True)`` plus the newline, as UTF-8 bytes (stdio writers).
    Left out, in the SDK's favour: the client's extra ``validate_server_result`` pass
    over each result, the runner's result shaping, and the stdio readers' bytes-to-str
    decoding (the SDK is handed bytes here).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from itertools import repeat
from typing import Any, Final

import orjson
from _messages import PROTOCOL_VERSION, Sample

__all__ = [
    "COLUMNS",
    "Column",
    "NotAvailable",
    "sdk_decode_once",
    "sdk_encode_once",
    "sdk_module",
    "types_module",
]

Loop = Callable[[int], object]


class NotAvailable(Exception):
    """This column cannot be measured in this environment (the message says why)."""


# --------------------------------------------------------------------------- probes

_TYPES_FUNCS: Final = ("structure_params", "structure_result", "unstructure")


def types_module() -> Any:
    """``mcp_sansio.types`` when it is built, else raise :class:`NotAvailable`."""
    try:
        mod = importlib.import_module("mcp_sansio.types")
    except Exception as exc:
        raise NotAvailable(f"n/a (types not built yet: {type(exc).__name__}: {exc})") from exc
    missing = [name for name in _TYPES_FUNCS if not callable(getattr(mod, name, None))]
    if missing:
        raise NotAvailable("n/a (types not built yet)")
    return mod


def sdk_module() -> Any:
    """``mcp.types`` (the official SDK) when installed, else raise :class:`NotAvailable`."""
    try:
        return importlib.import_module("mcp.types")
    except ImportError as exc:
        raise NotAvailable("n/a (SDK not installed: run without MCP_SANSIO_BENCH_NO_SDK)") from exc


# --------------------------------------------------------------------------- columns


class Column:
    """One way of decoding and encoding; subclasses fill in the two builders."""

    key: str = ""
    title: str = ""

    def decoder(self, sample: Sample) -> Loop:
        raise NotImplementedError

    def encoder(self, sample: Sample) -> Loop:
        raise NotImplementedError


class Floor(Column):
    key = "floor"
    title = "orjson (floor)"

    def decoder(self, sample: Sample) -> Loop:
        loads = orjson.loads
        line = sample.line
        assert loads(line) == sample.message

        def run(n: int) -> None:
            for _ in repeat(None, n):
                loads(line)

        return run

    def encoder(self, sample: Sample) -> Loop:
        dumps = orjson.dumps
        obj = orjson.loads(sample.line)
        assert dumps(obj) == sample.line

        def run(n: int) -> None:
            for _ in repeat(None, n):
                dumps(obj)

        return run


def _jsonrpc() -> Any:
    return importlib.import_module("mcp_sansio._jsonrpc")


def _check_event(event: Any, sample: Sample) -> None:
    import mcp_sansio

    expected = {
        "request": mcp_sansio.Request,
        "notification": mcp_sansio.Notification,
        "response": mcp_sansio.Response,
    }[sample.kind]
    if type(event) is not expected:
        raise AssertionError(f"envelope decode of {sample.key} gave {event!r:.200}")


def _check_encoded(data: bytes, sample: Sample, *, exact: bool = True) -> None:
    """The encoded line must be one line that decodes to the same message."""
    if not data.endswith(b"\n") or b"\n" in data[:-1]:
        raise AssertionError(f"encoding of {sample.key} is not one newline-terminated line")
    if exact and orjson.loads(data) != sample.message:
        raise AssertionError(f"encoding of {sample.key} does not round-trip")


class Envelope(Column):
    key = "envelope"
    title = "mcp-sansio envelope"

    def decoder(self, sample: Sample) -> Loop:
        decode = _jsonrpc().decode
        line = sample.line
        _check_event(decode(line), sample)

        def run(n: int) -> None:
            for _ in repeat(None, n):
                decode(line)

        return run

    def encoder(self, sample: Sample) -> Loop:
        jsonrpc = _jsonrpc()
        encode = jsonrpc.encode
        event = jsonrpc.decode(sample.line)
        _check_encoded(encode(event), sample)

        def run(n: int) -> None:
            for _ in repeat(None, n):
                encode(event)

        return run


class Typed(Column):
    key = "typed"
    title = "mcp-sansio typed"

    def _structure(self, types: Any, sample: Sample) -> tuple[Callable[..., Any], str]:
        if sample.kind == "response":
            return types.structure_result, "result"
        return types.structure_params, "params"

    def decoder(self, sample: Sample) -> Loop:
        types = types_module()
        decode = _jsonrpc().decode
        structure, attr = self._structure(types, sample)
        line, version, method = sample.line, PROTOCOL_VERSION, sample.method
        event = decode(line)
        _check_event(event, sample)
        structure(version, method, getattr(event, attr))

        if attr == "params":

            def run(n: int) -> None:
                for _ in repeat(None, n):
                    structure(version, method, decode(line).params)

        else:

            def run(n: int) -> None:
                for _ in repeat(None, n):
                    structure(version, method, decode(line).result)

        return run

    def encoder(self, sample: Sample) -> Loop:
        import mcp_sansio

        types = types_module()
        encode = _jsonrpc().encode
        unstructure = types.unstructure
        structure, _ = self._structure(types, sample)
        typed = structure(PROTOCOL_VERSION, sample.method, sample.payload)
        method = sample.method
        msg_id: Any = sample.message.get("id")
        run: Loop
        if sample.kind == "request":
            request = mcp_sansio.Request

            def run(n: int) -> None:
                for _ in repeat(None, n):
                    encode(request(id=msg_id, method=method, params=unstructure(typed)))

            _check_encoded(
                encode(request(id=msg_id, method=method, params=unstructure(typed))), sample
            )
        elif sample.kind == "notification":
            notification = mcp_sansio.Notification

            def run(n: int) -> None:
                for _ in repeat(None, n):
                    encode(notification(method=method, params=unstructure(typed)))

            _check_encoded(encode(notification(method=method, params=unstructure(typed))), sample)
        else:
            response = mcp_sansio.Response

            def run(n: int) -> None:
                for _ in repeat(None, n):
                    encode(response(id=msg_id, result=unstructure(typed)))

            _check_encoded(encode(response(id=msg_id, result=unstructure(typed))), sample)
        return run


# The SDK's typed classes for each sample: (params or result class, whole-message class).
_SDK_CLASSES: Final = {
    ("request", "tools/call"): ("CallToolRequestParams", "CallToolRequest"),
    ("response", "tools/call"): ("CallToolResult", "CallToolResult"),
    ("response", "tools/list"): ("ListToolsResult", "ListToolsResult"),
    ("response", "resources/read"): ("ReadResourceResult", "ReadResourceResult"),
    ("notification", "notifications/progress"): (
        "ProgressNotificationParams",
        "ProgressNotification",
    ),
}


def _loop(once: Callable[[], object]) -> Loop:
    """A loop over a one-shot callable (for the SDK, whose per-message work is far larger
    than the extra call this costs)."""

    def run(n: int) -> None:
        for _ in repeat(None, n):
            once()

    return run


def sdk_decode_once(mt: Any, sample: Sample) -> Callable[[], object]:
    """One SDK decode of the sample's line: envelope, then the typed params / result."""
    validate_json = mt.jsonrpc_message_adapter.validate_json
    model_validate = getattr(mt, _SDK_CLASSES[(sample.kind, sample.method)][0]).model_validate
    line = sample.line
    once: Callable[[], object]
    if sample.kind == "response":

        def once() -> object:
            return model_validate(validate_json(line, by_name=False).result, by_name=False)

        assert type(validate_json(line, by_name=False)) is mt.JSONRPCResponse
    else:

        def once() -> object:
            return model_validate(validate_json(line, by_name=False).params, by_name=False)

        expected = mt.JSONRPCRequest if sample.kind == "request" else mt.JSONRPCNotification
        assert type(validate_json(line, by_name=False)) is expected
    once()
    return once


def _sdk_typed(mt: Any, sample: Sample) -> Any:
    """The SDK's typed object for the sample (what an SDK application holds)."""
    cls = getattr(mt, _SDK_CLASSES[(sample.kind, sample.method)][1])
    if sample.kind == "response":
        return cls.model_validate(sample.payload, by_name=False)
    return cls.model_validate({"method": sample.method, "params": sample.payload}, by_name=False)


def sdk_encode_once(mt: Any, sample: Sample) -> Callable[[], bytes]:
    """One SDK encode of the sample's typed object into a newline-terminated line."""
    dump = _sdk_typed(mt, sample).model_dump
    msg_id = sample.message.get("id")
    once: Callable[[], bytes]
    if sample.kind == "request":
        request = mt.JSONRPCRequest

        def once() -> bytes:
            data = dump(by_alias=True, mode="json", exclude_none=True)
            msg = request(jsonrpc="2.0", id=msg_id, method=data["method"], params=data["params"])
            line: str = msg.model_dump_json(by_alias=True, exclude_unset=True)
            return (line + "\n").encode()

    elif sample.kind == "notification":
        notification = mt.JSONRPCNotification

        def once() -> bytes:
            data = dump(by_alias=True, mode="json", exclude_none=True)
            msg = notification(jsonrpc="2.0", method=data["method"], params=dict(data["params"]))
            line: str = msg.model_dump_json(by_alias=True, exclude_unset=True)
            return (line + "\n").encode()

    else:
        response = mt.JSONRPCResponse

        def once() -> bytes:
            data = dump(by_alias=True, mode="json", exclude_none=True)
            msg = response(jsonrpc="2.0", id=msg_id, result=data)
            line: str = msg.model_dump_json(by_alias=True, exclude_unset=True)
            return (line + "\n").encode()

    # The SDK adds fields of its own (e.g. ``resultType``); the rest must survive.
    out = once()
    _check_encoded(out, sample, exact=False)
    if not _contains(orjson.loads(out), sample.message):
        raise AssertionError(f"SDK encoding of {sample.key} lost data")
    return once


def _contains(big: Any, small: Any) -> bool:
    """Whether ``big`` has everything ``small`` has (dicts may have extra keys)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _contains(big[k], v) for k, v in small.items()
        )
    if isinstance(small, list):
        return (
            isinstance(big, list)
            and len(big) == len(small)
            and all(_contains(b, s) for b, s in zip(big, small, strict=True))
        )
    if isinstance(small, bool) or isinstance(big, bool):
        return big is small
    return bool(big == small)


class Sdk(Column):
    key = "sdk"
    title = "official SDK"

    def decoder(self, sample: Sample) -> Loop:
        return _loop(sdk_decode_once(sdk_module(), sample))

    def encoder(self, sample: Sample) -> Loop:
        return _loop(sdk_encode_once(sdk_module(), sample))


COLUMNS: Final[tuple[Column, ...]] = (Floor(), Envelope(), Typed(), Sdk())
