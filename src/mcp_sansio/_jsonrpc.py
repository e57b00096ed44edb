"""The JSON-RPC 2.0 envelope: decode one line into message events, encode events.

Decoding checks exactly what JSON-RPC 2.0 and MCP require of the envelope and nothing of
the MCP layer (methods, params, state): that is the connection's job.

- ``"jsonrpc"`` is the string ``"2.0"``;
- a request has a string ``method`` and an ``id`` that is a string or an integer (not
  null, a bool or a float); a notification has a ``method`` and no ``id``;
- ``params``, when present, is an object;
- a response has exactly one of ``result`` (an object) and ``error`` (an object with an
  integer ``code`` and a string ``message``), and an ``id``; an error response's ``id``
  may be null or absent where the request's id could not be read.

Faults come back as :class:`InvalidMessage` events, never as exceptions: invalid JSON is
-32700 and a bad envelope -32600, each with a specific message. The reply is addressed to
the id when it could be read, else to ``null``; malformed responses get no reply (the
peer expects none, and an error under its own request's id would be mistaken for one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import attrs
import orjson

from ._errors import ErrorCode, LocalProtocolError
from ._events import (
    ErrorResponse,
    InvalidMessage,
    Message,
    Notification,
    Request,
    Response,
    make_notification,
    make_request,
    make_response,
)
from ._names import INITIALIZE
from ._sentinels import OMITTED

__all__ = [
    "batch_shape_fault",
    "as_object",
    "Decoded",
    "decode",
    "encode",
    "encode_batch",
    "invalid",
    "message_to_dict",
    "sniff",
]

_RAW_LIMIT: Final = 1024
_MISSING: Final[Any] = object()

# What every message uses, bound to Final names: a compiled build (mypyc) keeps these in C
# statics, where an imported name or a module's attribute is a dict lookup at each use.
REQUEST: Final = Request
NOTIFICATION: Final = Notification
RESPONSE: Final = Response
ERROR_RESPONSE: Final = ErrorResponse
_LOADS: Final = orjson.loads
_DUMPS: Final = orjson.dumps
_MAKE_REQUEST: Final = make_request
_MAKE_NOTIFICATION: Final = make_notification
_MAKE_RESPONSE: Final = make_response

#: What :func:`decode` returns for one line.
Decoded = Message | InvalidMessage | list[Message | InvalidMessage]


def _kind(value: object) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        # orjson reads integers beyond the 64-bit range as floats.
        if value.is_integer() and abs(value) >= 2**63:
            return "a number beyond the 64-bit integer range"
        return "a number with a fraction or exponent"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _preview(value: object) -> str:
    """A short rendering of a decoded value for error messages; never raises.

    Arrays and objects are named by kind only: they may be nested deeper than orjson
    will encode (255 levels, against 1024 for decoding).
    """
    if isinstance(value, (dict, list)):
        return _kind(value)
    return orjson.dumps(value).decode()[:40]


def _reencode(value: object) -> bytes:
    """A batch member as JSON, for :attr:`InvalidMessage.raw`; empty if it is nested too
    deeply to encode."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return b""


def invalid(
    code: int,
    message: str,
    raw: bytes,
    *,
    reply: bool,
    id: Any = None,
) -> InvalidMessage:
    """Build an :class:`InvalidMessage`, with its reply addressed to ``id`` when asked."""
    return InvalidMessage(
        code=code,
        message=message,
        reply=ErrorResponse(id=id, code=code, message=message) if reply else None,
        id=id,
        raw=raw[:_RAW_LIMIT],
    )


def _valid_id(value: object) -> bool:
    cls = type(value)
    return cls is str or cls is int


def classify(obj: Any, raw: bytes) -> Message | InvalidMessage:
    """Turn one decoded JSON value into a message event, or an :class:`InvalidMessage`."""
    # Fast path: a plainly valid request, notification or result. Anything else, valid or
    # not, takes the full diagnosis below.
    if type(obj) is dict and obj.get("jsonrpc") == "2.0":
        method = obj.get("method")
        if type(method) is str:
            params = obj.get("params", _MISSING)
            if params is _MISSING:
                params, size = None, len(obj)
            elif type(params) is dict:
                size = len(obj) - 1
            else:
                size = 0  # not an object: the full check names the fault
            if size:
                if size == 3 and "id" in obj:
                    msg_id = obj["id"]
                    cls = type(msg_id)
                    if cls is int or cls is str:
                        return _MAKE_REQUEST(msg_id, method, params)
                elif size == 2:
                    return _MAKE_NOTIFICATION(method, params)
        elif method is None and len(obj) == 3 and "result" in obj:
            msg_id = obj.get("id")
            cls = type(msg_id)
            result = obj["result"]
            if (cls is int or cls is str) and type(result) is dict:
                return _MAKE_RESPONSE(msg_id, result)  # type: ignore[arg-type]
    return _classify(obj, raw)


def _classify(obj: Any, raw: bytes) -> Message | InvalidMessage:
    """The full envelope check, with a specific message for each fault."""
    if type(obj) is not dict:
        return invalid(
            ErrorCode.INVALID_REQUEST,
            f"Invalid request: a JSON-RPC message must be an object, not {_kind(obj)}",
            raw,
            reply=True,
        )
    version = obj.get("jsonrpc", _MISSING)
    method = obj.get("method", _MISSING)
    msg_id = obj.get("id", _MISSING)
    id_ok = _valid_id(msg_id)
    if method is not _MISSING or ("result" not in obj and "error" not in obj):
        # A request or a notification (or an envelope too broken to be anything else).
        reply_id = msg_id if id_ok else None
        problem = None
        if version != "2.0":
            problem = (
                "'jsonrpc' is missing"
                if version is _MISSING
                else f"'jsonrpc' must be \"2.0\", not {_preview(version)}"
            )
        elif method is _MISSING:
            problem = "'method' is missing (and there is no 'result' or 'error')"
        elif type(method) is not str:
            problem = f"'method' must be a string, not {_kind(method)}"
        elif msg_id is not _MISSING and not id_ok:
            problem = f"'id' must be a string or an integer, not {_kind(msg_id)}"
        elif "result" in obj or "error" in obj:
            problem = "a request or notification cannot carry 'result' or 'error'"
        else:
            params = obj.get("params", _MISSING)
            if params is _MISSING:
                params = None
            elif type(params) is not dict:
                problem = f"'params' must be an object, not {_kind(params)}"
            if problem is None:
                if msg_id is _MISSING:
                    return Notification(method=method, params=params)
                return Request(id=msg_id, method=method, params=params)
        return invalid(
            ErrorCode.INVALID_REQUEST, f"Invalid request: {problem}", raw, reply=True, id=reply_id
        )
    # A response: malformed ones get no reply.
    has_result = "result" in obj
    problem = None
    if version != "2.0":
        problem = (
            "'jsonrpc' is missing"
            if version is _MISSING
            else f"'jsonrpc' must be \"2.0\", not {_preview(version)}"
        )
    elif has_result and "error" in obj:
        problem = "a response cannot carry both 'result' and 'error'"
    elif has_result:
        if not id_ok:
            problem = (
                "'id' is missing"
                if msg_id is _MISSING
                else f"'id' must be a string or an integer, not {_kind(msg_id)}"
            )
        elif type(obj["result"]) is not dict:
            problem = f"'result' must be an object, not {_kind(obj['result'])}"
        else:
            return Response(id=msg_id, result=obj["result"])
    else:
        error = obj["error"]
        if msg_id is not _MISSING and msg_id is not None and not id_ok:
            problem = f"'id' must be a string, an integer or null, not {_kind(msg_id)}"
        elif type(error) is not dict:
            problem = f"'error' must be an object, not {_kind(error)}"
        elif type(error.get("code")) is not int:
            problem = (
                "'error.code' is missing"
                if "code" not in error
                else f"'error.code' must be an integer, not {_kind(error['code'])}"
            )
        elif type(error.get("message")) is not str:
            problem = (
                "'error.message' is missing"
                if "message" not in error
                else f"'error.message' must be a string, not {_kind(error['message'])}"
            )
        else:
            return ErrorResponse(
                id=msg_id if id_ok else None,
                code=error["code"],
                message=error["message"],
                data=error.get("data", OMITTED),
            )
    return invalid(
        ErrorCode.INVALID_REQUEST,
        f"Invalid response: {problem}",
        raw,
        reply=False,
        id=msg_id if id_ok else None,
    )


def decode(line: bytes, allow_batch: bool = False) -> Decoded:
    """Decode one line (one JSON text) into a message event, an :class:`InvalidMessage`,
    or, for a JSON array when ``allow_batch`` is true, a list of them in order.

    Never raises on any input.
    """
    try:
        obj = _LOADS(line)
    except orjson.JSONDecodeError as exc:
        return invalid(ErrorCode.PARSE_ERROR, f"Parse error: {exc}", line, reply=True)
    if type(obj) is list and allow_batch:
        if not obj:
            return invalid(
                ErrorCode.INVALID_REQUEST, "Invalid request: empty batch", line, reply=True
            )
        return [classify(item, _reencode(item)) for item in obj]
    if type(obj) is list:
        return invalid(
            ErrorCode.INVALID_REQUEST,
            "Invalid request: JSON-RPC batches (arrays) are not allowed in this protocol version",
            line,
            reply=True,
        )
    return classify(obj, line)


def message_to_dict(event: Message) -> dict[str, Any]:
    """The JSON-RPC object for a message event (``params``/``result`` left as they are)."""
    d: dict[str, Any]
    if type(event) is REQUEST:
        d = {"jsonrpc": "2.0", "id": event.id, "method": event.method}
        if event.params is not None:
            d["params"] = event.params
        return d
    if type(event) is NOTIFICATION:
        d = {"jsonrpc": "2.0", "method": event.method}
        if event.params is not None:
            d["params"] = event.params
        return d
    if type(event) is RESPONSE:
        return {"jsonrpc": "2.0", "id": event.id, "result": event.result}
    assert type(event) is ERROR_RESPONSE
    error: dict[str, Any] = {"code": event.code, "message": event.message}
    if event.data is not OMITTED:
        error["data"] = event.data
    return {"jsonrpc": "2.0", "id": event.id, "error": error}


def _default(obj: Any) -> Any:
    """orjson's fallback: typed MCP objects (attrs classes) become their wire dicts;
    anything else is not JSON."""
    if not attrs.has(type(obj)):
        raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")
    from . import types

    return types.unstructure(obj)


_OPTS: Final = orjson.OPT_APPEND_NEWLINE
_DEFAULT: Final = _default  # (Final, as above)


def encode(event: Message) -> bytes:
    """One compact JSON line, newline-terminated. Raises ``TypeError`` for values that
    are not JSON, NaN and the infinities included (the connection turns it into
    :class:`LocalProtocolError`)."""
    obj = message_to_dict(event)
    out = _DUMPS(obj, _DEFAULT, _OPTS)
    # The common case, a small message with no null in it, is settled by these two tests.
    # (partition() takes its argument without parsing an argument tuple: it measured about
    # 90 ns cheaper than find(), and ``in`` is slower still; when nothing is found it
    # returns ``out`` itself, uncopied.)
    if len(out) > _SCAN_LIMIT or out.partition(b"null")[1]:
        _refuse_non_finite(obj, out)
    return out


def encode_batch(events: list[Message]) -> bytes:
    """A JSON array of messages on one line (JSON-RPC batch, 2025-03-26 only)."""
    obj = [message_to_dict(e) for e in events]
    out = _DUMPS(obj, _DEFAULT, _OPTS)
    if len(out) > _SCAN_LIMIT or out.partition(b"null")[1]:
        _refuse_non_finite(obj, out)
    return out


#: Outputs up to this size are scanned for ``null`` before the value is walked; larger ones
#: are walked first, for at most :data:`_WALK_BUDGET` values (a large message is mostly a
#: few large strings: resource contents, a blob), and scanned only when that was not enough.
_SCAN_LIMIT: Final = 4096
_WALK_BUDGET: Final = 64
_SCALARS: Final = frozenset({str, int, bool, type(None)})


def _refuse_non_finite(obj: Any, out: bytes) -> None:
    """Raise ``TypeError`` if ``obj``, written as ``out``, held NaN or an infinity: orjson
    writes them as null, which must not pass unnoticed. Called for every large output and
    for a small one with a null in it."""
    if len(out) <= _SCAN_LIMIT:
        bad = _non_finite(obj)
    else:
        found = _non_finite(obj, _WALK_BUDGET)
        bad = (out.find(b"null") >= 0 and bool(_non_finite(obj))) if found is None else found
    if bad:
        raise TypeError("NaN and Infinity are not JSON numbers")


def _non_finite(value: Any, budget: int = -1) -> bool | None:
    """Whether ``value`` holds a float that is NaN or infinite, at any depth; ``None`` when
    ``budget`` values were looked at without an answer (a negative budget: no limit)."""
    stack = [value]
    while stack:
        budget -= 1
        if budget == -1:
            return None
        v = stack.pop()
        cls = type(v)
        if cls in _SCALARS:
            continue
        if cls is dict:
            stack.extend(v.values())
        elif cls is list or cls is tuple:
            stack.extend(v)
        elif cls is float:
            if not math.isfinite(v):
                return True
        elif attrs.has(cls):
            stack.append(_default(v))
    return False


# ---------------------------------------------------------------------- oversized messages

#: The ids :func:`decode` reads exactly: -2**63 to 2**64 - 1.
_ID_MIN: Final = -(1 << 63)
_ID_END: Final = 1 << 64
_SCALAR: Final = frozenset("0123456789+-.eEtruefalsn")


def sniff(head: bytes, tail: bytes) -> tuple[str | None, Any]:
    """What a message too large to read seems to be, from its first and last bytes (see
    :attr:`LineFramer.dropped <mcp_sansio._framing.LineFramer.dropped>`): ``("request",
    id)``, ``("response", id or None)``, or ``(None, None)`` when the members of the object
    that were kept do not tell. Only members of the top-level object count, read forward
    from the head and backward from the tail (a message's big member, ``params`` or
    ``result``, lies between): a ``method`` with an ``id`` is a request; a ``result`` or an
    ``error`` without a ``method`` is a response. The id is kept where it is a string or an
    integer :func:`decode` would read (``-2**63`` to ``2**64 - 1``). Never raises."""
    members = dict(_forward(head.decode("latin-1")))
    members.update(_backward(tail.decode("latin-1")))
    raw_id = members.get('"id"')
    rid: Any = None
    if raw_id:
        try:
            value = _LOADS(raw_id.encode("latin-1"))
        except orjson.JSONDecodeError:
            value = None
        if type(value) is str or (type(value) is int and _ID_MIN <= value < _ID_END):
            rid = value
    if '"method"' in members:
        return ("request", rid) if rid is not None else (None, None)
    if '"result"' in members or '"error"' in members:
        return "response", rid
    return None, None


def _string_end(text: str, start: int) -> int:
    """The index after the string whose opening quote is at ``start``, or -1."""
    at = start + 1
    while True:
        quote = text.find('"', at)
        if quote < 0:
            return -1
        before = quote - 1
        while text[before] == "\\":
            before -= 1
        if (quote - 1 - before) % 2 == 0:  # not escaped
            return quote + 1
        at = quote + 1


def _string_start(text: str, end: int) -> int:
    """The index of the opening quote of the string whose closing quote is at ``end``, or
    -1 (read from the end, quotes pair up as they do from the start)."""
    at = end
    while True:
        quote = text.rfind('"', 0, at)
        if quote < 0:
            return -1
        before = quote - 1
        while before >= 0 and text[before] == "\\":
            before -= 1
        if (quote - 1 - before) % 2 == 0:
            return quote
        at = quote


def _container_end(text: str, start: int) -> int:
    """The index after the array or object opening at ``start``, or -1."""
    depth = 0
    at = start
    size = len(text)
    while at < size:
        char = text[at]
        if char == '"':
            at = _string_end(text, at)
            if at < 0:
                return -1
            continue
        if char == "{" or char == "[":
            depth += 1
        elif char == "}" or char == "]":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return -1


def _container_start(text: str, end: int) -> int:
    """The index of the bracket opening the array or object that closes at ``end``, or -1."""
    depth = 0
    at = end
    while at >= 0:
        char = text[at]
        if char == '"':
            at = _string_start(text, at)
            if at < 0:
                return -1
        elif char == "}" or char == "]":
            depth += 1
        elif char == "{" or char == "[":
            depth -= 1
            if depth == 0:
                return at
        at -= 1
    return -1


def _skip(text: str, at: int) -> int:
    size = len(text)
    while at < size and text[at] in " \t\r\n":
        at += 1
    return at


def _skip_back(text: str, at: int) -> int:
    while at >= 0 and text[at] in " \t\r\n":
        at -= 1
    return at


def _forward(text: str) -> list[tuple[str, str]]:
    """The top-level members of the object ``text`` starts, read until it is cut off:
    ``(key, value)`` as written (``""`` for a container, or a value cut off)."""
    found: list[tuple[str, str]] = []
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        return found
    at += 1
    while True:
        at = _skip(text, at)
        if text[at : at + 1] != '"':
            return found
        end = _string_end(text, at)
        if end < 0:
            return found
        key = text[at:end]
        at = _skip(text, end)
        if text[at : at + 1] != ":":
            return found
        at = _skip(text, at + 1)
        first = text[at : at + 1]
        if first == '"':
            end = _string_end(text, at)
        elif first == "{" or first == "[":
            end = _container_end(text, at)
        else:
            end = at
            while end < len(text) and text[end] in _SCALAR:
                end += 1
            if end == len(text):  # a number may go on past the cut
                end = -1
        if end < 0:  # the value is cut off: the member's name is known, not its value
            found.append((key, ""))
            return found
        if end == at:
            return found
        found.append((key, "" if first in ("{", "[") else text[at:end]))
        at = _skip(text, end)
        if text[at : at + 1] != ",":
            return found
        at += 1


def _backward(text: str) -> list[tuple[str, str]]:
    """The top-level members of the object ``text`` ends, read backward until it is cut off."""
    found: list[tuple[str, str]] = []
    at = _skip_back(text, len(text) - 1)
    if at < 0 or text[at] != "}":
        return found
    at -= 1
    while True:
        end = _skip_back(text, at)
        if end < 0:
            return found
        last = text[end]
        if last == '"':
            start = _string_start(text, end)
        elif last == "}" or last == "]":
            start = _container_start(text, end)
        else:
            start = end
            while start >= 0 and text[start] in _SCALAR:
                start -= 1
            start += 1
            if start == 0 or start > end:  # cut off, or not a value
                return found
        if start < 0:
            return found
        value = "" if last in ("}", "]") else text[start : end + 1]
        at = _skip_back(text, start - 1)
        if at < 0 or text[at] != ":":
            return found
        key_end = _skip_back(text, at - 1)
        if key_end < 0 or text[key_end] != '"':
            return found
        key_start = _string_start(text, key_end)
        if key_start < 0:
            return found
        found.append((text[key_start : key_end + 1], value))
        at = _skip_back(text, key_start - 1)
        if at < 0 or text[at] != ",":
            return found
        at -= 1


def as_object(params: Any) -> Any:
    """Outgoing params or result as a JSON object (typed MCP objects are unstructured);
    ``None`` stays ``None``. Raises :class:`LocalProtocolError` for anything else."""
    if params is None or type(params) is dict:
        return params
    if isinstance(params, Mapping):
        return dict(params)
    from . import types  # typed objects: imported lazily, to keep `import mcp_sansio` light

    try:
        value = types.unstructure(params)
    except Exception as exc:  # any failure of a foreign object
        raise LocalProtocolError(f"expected a JSON object or a typed MCP object: {exc}") from None
    if type(value) is not dict:
        raise LocalProtocolError("params and results must be JSON objects")
    return value


def batch_shape_fault(events: Any) -> str | None:
    """What is wrong with the members of a batch we send, before any is checked against
    the session: not a non-empty sequence of messages of one direction, a repeated id, an
    ``initialize``."""
    if not isinstance(events, (tuple, list)):
        return "a batch's events must be a sequence of messages"
    if not events:
        return "a batch must not be empty"
    if any(type(e) not in (Request, Notification, Response, ErrorResponse) for e in events):
        return "a batch holds only requests, notifications and answers"
    if len({type(e) in (Request, Notification) for e in events}) > 1:
        return "a batch holds requests and notifications, or responses"
    ids = [(type(e.id), e.id) for e in events if type(e) is not Notification and _is_id(e.id)]
    if len(set(ids)) != len(ids):
        return "a batch must not repeat an id"
    for e in events:
        # (The method read untyped, before the member's class: a compiled build (mypyc) would
        # check a Request's field against its annotation and raise TypeError, not this.)
        method: Any = getattr(e, "method", None)
        if type(method) is str and method == INITIALIZE and type(e) is Request:
            return "initialize must not be batched"
    return None


def _is_id(value: object) -> bool:
    cls = type(value)
    return cls is str or cls is int
