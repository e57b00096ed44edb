"""The HTTP headers of Streamable HTTP: names, and the 2026-07-28 standard headers.

In 2026-07-28 every POST mirrors parts of its JSON-RPC body into headers, so that proxies
and load balancers can route without reading the body: ``Mcp-Method`` (the method),
``Mcp-Name`` (``params.name`` or ``params.uri`` of ``tools/call``, ``prompts/get`` and
``resources/read``) and ``Mcp-Param-<X>`` for each tool argument whose input-schema
property is annotated ``"x-mcp-header": "<X>"``. A value that is not plain printable
ASCII, or has leading or trailing whitespace, or looks like the sentinel itself, travels as
``=?base64?<base64 of its UTF-8>?=``. The server checks each header against the body and
answers a mismatch with HTTP 400 and JSON-RPC error -32020.

Everything here is pure: header lists in, header lists or an error message out.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "ACCEPT",
    "CONTENT_TYPE",
    "LAST_EVENT_ID",
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PARAM_PREFIX",
    "NAMED_METHODS",
    "PROTOCOL_VERSION",
    "SESSION_ID",
    "check_standard_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "render_value",
    "standard_headers",
]

ACCEPT: Final = "accept"
CONTENT_TYPE: Final = "content-type"
PROTOCOL_VERSION: Final = "mcp-protocol-version"
SESSION_ID: Final = "mcp-session-id"
LAST_EVENT_ID: Final = "last-event-id"
MCP_METHOD: Final = "mcp-method"
MCP_NAME: Final = "mcp-name"
MCP_PARAM_PREFIX: Final = "mcp-param-"

#: The methods whose ``Mcp-Name`` header mirrors a param, and which param.
NAMED_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}

_PREFIX: Final = "=?base64?"
_SUFFIX: Final = "?="
# An HTTP token (RFC 9110 §5.6.2): what a header-name suffix may hold.
_TOKEN: Final = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


def _needs_base64(value: str) -> bool:
    if value != value.strip(" \t"):
        return True
    if value.startswith(_PREFIX) and value.endswith(_SUFFIX):
        return True  # would be read back as the sentinel
    return any(not (0x20 <= ord(c) <= 0x7E) for c in value)


def encode_value(value: str) -> str:
    """A header value for ``value``: itself when it is safe, else the base64 sentinel."""
    if _needs_base64(value):
        return _PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SUFFIX
    return value


def decode_value(raw: str) -> str:
    """The value a header carries: trimmed of optional whitespace, and decoded when it is
    the base64 sentinel (``=?base64?...?=``). Anything else is literal.

    Raises :class:`ValueError` for a sentinel whose base64 is malformed (bad padding or
    characters) or whose bytes are not UTF-8."""
    raw = raw.strip(" \t")
    if (
        len(raw) >= len(_PREFIX) + len(_SUFFIX)
        and raw.startswith(_PREFIX)
        and raw.endswith(_SUFFIX)
    ):
        body = raw[len(_PREFIX) : -len(_SUFFIX)]
        try:
            return base64.b64decode(body, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed base64 header value {raw!r}: {exc}") from None
    return raw


def render_value(value: Any) -> str | None:
    """How a tool argument is written into its ``Mcp-Param-*`` header: strings as they
    are, booleans as ``true``/``false``, numbers as JSON writes them (an integral float
    without ``.0``); ``None`` for null or anything else (no header is sent)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    return None


def header_params(input_schema: Any) -> dict[str, str] | None:
    """The ``x-mcp-header`` annotations of a tool's input schema: ``{argument: header
    suffix}``. ``None`` when an annotation is invalid (empty, not an HTTP token,
    duplicated ignoring case, or on a property that is not a string, integer or boolean,
    as SEP-2243 says; the conformance suite refuses ``number``): a client must not call
    such a tool."""
    found: dict[str, str] = {}
    if not isinstance(input_schema, Mapping):
        return found
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return found
    seen: set[str] = set()
    for argument, schema in properties.items():
        if not isinstance(schema, Mapping) or "x-mcp-header" not in schema:
            continue
        suffix = schema["x-mcp-header"]
        if not isinstance(suffix, str) or not _TOKEN.match(suffix):
            return None
        if schema.get("type") not in ("string", "integer", "boolean"):
            return None
        if suffix.lower() in seen:
            return None
        seen.add(suffix.lower())
        found[argument] = suffix
    return found


def _name_of(message: Mapping[str, Any]) -> str | None:
    key = NAMED_METHODS.get(message.get("method"))  # type: ignore[arg-type]
    params = message.get("params")
    if key is None or not isinstance(params, Mapping):
        return None
    value = params.get(key)
    return value if isinstance(value, str) else None


def standard_headers(
    message: Mapping[str, Any], params_of_tool: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """The 2026-07-28 headers of a POST carrying ``message`` (a request or notification):
    ``MCP-Protocol-Version`` (from ``_meta``, when there), ``Mcp-Method``, ``Mcp-Name``
    and, for ``tools/call``, one ``Mcp-Param-<X>`` per annotated argument present and not
    null (``params_of_tool`` is :func:`header_params` of the tool's input schema)."""
    headers: list[tuple[str, str]] = []
    params = message.get("params")
    params = params if isinstance(params, Mapping) else {}
    meta = params.get("_meta")
    if isinstance(meta, Mapping) and isinstance(meta.get(_META_VERSION), str):
        headers.append(("MCP-Protocol-Version", meta[_META_VERSION]))
    method = message.get("method")
    if isinstance(method, str):
        headers.append(("Mcp-Method", encode_value(method)))
    name = _name_of(message)
    if name is not None:
        headers.append(("Mcp-Name", encode_value(name)))
    if params_of_tool and method == "tools/call":
        arguments = params.get("arguments")
        if isinstance(arguments, Mapping):
            for argument, suffix in params_of_tool.items():
                text = render_value(arguments.get(argument))
                if text is not None:
                    headers.append((f"Mcp-Param-{suffix}", encode_value(text)))
    return headers


def _same(header: str, body: Any) -> bool:
    if isinstance(body, (int, float)) and not isinstance(body, bool):
        try:
            number = float(header)
        except ValueError:
            return False
        return number == body if float(body).is_integer() else abs(number - body) <= 1e-9
    return header == render_value(body)


def check_standard_headers(
    headers: Mapping[str, str],
    message: Mapping[str, Any],
    params_of_tool: Mapping[str, str] | None = None,
) -> str | None:
    """Check a 2026-07-28 POST's headers against its body: ``None`` when they agree, else
    what is wrong (answer it with HTTP 400 and -32020). ``headers`` maps lower-case names
    to values. Header names are case-insensitive, values case-sensitive, and optional
    whitespace around a value is ignored."""
    method = message.get("method")
    raw = headers.get(MCP_METHOD)
    if raw is None:
        return "the Mcp-Method header is missing"
    try:
        if decode_value(raw) != method:
            return f"the Mcp-Method header {raw!r} does not match the method {method!r}"
        name = _name_of(message)
        raw = headers.get(MCP_NAME)
        if name is not None:
            if raw is None:
                return f"the Mcp-Name header is missing (the body names {name!r})"
            if decode_value(raw) != name:
                return f"the Mcp-Name header {raw!r} does not match {name!r}"
        if params_of_tool and method == "tools/call":
            params = message.get("params")
            arguments = params.get("arguments") if isinstance(params, Mapping) else None
            arguments = arguments if isinstance(arguments, Mapping) else {}
            for argument, suffix in params_of_tool.items():
                value = arguments.get(argument)
                raw = headers.get(MCP_PARAM_PREFIX + suffix.lower())
                if render_value(value) is None:
                    if raw is not None:
                        return f"the Mcp-Param-{suffix} header has no argument {argument!r}"
                    continue
                if raw is None:
                    return f"the Mcp-Param-{suffix} header is missing (argument {argument!r})"
                if not _same(decode_value(raw), value):
                    return (
                        f"the Mcp-Param-{suffix} header {raw!r} does not match the "
                        f"argument {argument!r}"
                    )
    except ValueError as exc:
        return str(exc)
    return None


#: The fields whose repeats :func:`lower_headers` joins with commas instead of keeping the last.
_JOINED: Final = frozenset({ACCEPT, "authorization", "dpop"})


def lower_headers(headers: Iterable[tuple[bytes | str, bytes | str]]) -> dict[str, str]:
    """Header pairs as a dict of lower-case names to values (latin-1; the last of a
    repeated header wins, except ``accept``, whose values are joined with commas, and
    ``authorization`` and ``dpop``, whose repeats are joined the same way so that the token
    and proof checks see them and refuse the request: RFC 9110 section 5.3 lets no sender
    repeat a field that is not a list, RFC 6750 section 3.1 answers a malformed request
    ``invalid_request``, and RFC 9449 section 4.3 takes "not more than one DPoP HTTP request
    header field")."""
    out: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}  # joined once: a join per repeat is quadratic
    for name, value in headers:
        key = (name.decode("latin-1") if isinstance(name, bytes) else name).lower()
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if key in _JOINED and key in out:
            values = repeats.get(key)
            if values is None:
                values = repeats[key] = [out[key]]
            values.append(text)
        else:
            out[key] = text
    for key, values in repeats.items():
        out[key] = ", ".join(values)
    return out
