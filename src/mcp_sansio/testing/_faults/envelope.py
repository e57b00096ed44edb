"""The envelope family: ``envelope.*`` (what JSON-RPC 2.0 makes of a line, before any
method is looked at)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

import attrs
import orjson
from hypothesis import strategies as st

from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import RequestId
from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._wire import Demand, dumps, refusal

#: Lines that are not JSON (the first is the canonical one).
BROKEN_JSON: Final = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
    b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}",
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
    b"\xff\xfe{}",
    b"nul",
    b'{"jsonrpc": "2.0", "id": 01, "method": "ping"}',
)

#: Ways to break a valid line so that it is not JSON.
_MANGLINGS: Final = (
    "cut short",
    "a trailing comma",
    "single quotes",
    "garbage before it",
    "invalid UTF-8",
    "an unquoted key",
)


def _mangle(text: bytes, how: str, draw: Draw) -> bytes:
    if how == "cut short":
        return text[: draw(st.integers(1, len(text) - 1), len(text) // 2)]
    if how == "a trailing comma":
        return text[:-1] + b"," + text[-1:]
    if how == "single quotes":
        return text.replace(b'"jsonrpc"', b"'jsonrpc'", 1)
    if how == "garbage before it":
        return draw(st.sampled_from([b"x", b"//", b")]}'", b"\x00", b"NaN"]), b"x") + text
    if how == "invalid UTF-8":
        return text.replace(b'"2.0"', b'"2.0\xff"', 1)
    return text.replace(b'"jsonrpc"', b"jsonrpc", 1)


def parse_error(g: Ground, draw: Draw) -> Fault | str:
    base = g.valid(("request", "notification", "response"))
    valid = dumps(base)
    how = draw(st.sampled_from(("a broken line", *_MANGLINGS)), "a broken line")
    if how == "a broken line":
        cut = st.integers(1, len(valid) - 1).map(lambda n: valid[:n])
        data = draw(st.sampled_from(BROKEN_JSON) | cut, BROKEN_JSON[0])
        why = "a line that is not JSON"
    else:
        data = _mangle(valid, how, draw)
        why = f"a line that is not JSON ({how})"
    return Fault(
        "envelope.parse-error",
        data,
        refusal("envelope.parse-error", (None,)),
        why,
        base if g.repairs else None,
    )


#: The envelope faults of a request (the first is the canonical one), and whether the
#: receiver can still read its id.
_REQUEST_FAULTS: Final = (
    ("no jsonrpc", True),
    ('jsonrpc "1.0"', True),
    ("jsonrpc another value", True),
    ("method 42", True),
    ("method another non-string", True),
    ("method missing", True),
    ("params an array", True),
    ("params another non-object", True),
    ("result on a request", True),
    ("error on a request", True),
    ("id null", False),
    ("id 1.5", False),
    ("id true", False),
    ("id an object", False),
    ("id another non-id", False),
    ("not an object", False),
)
_BAD_JSONRPC: Final[list[Any]] = ["2", "2.0 ", "", 2.0, 2, None, ["2.0"]]
_BAD_IDS: Final[list[Any]] = [False, -0.25, 1e300, [], [1]]
_BAD_METHODS: Final[list[Any]] = [None, True, [], {}, ["tools/list"], 0.5]
_BAD_PARAMS: Final[list[Any]] = [[1, 2], "params", 1, True, None]


def invalid_request(g: Ground, draw: Draw) -> Fault | str:
    fault, readable = draw(st.sampled_from(_REQUEST_FAULTS), _REQUEST_FAULTS[0])
    base = g.valid(("request",) if g.requests_possible() else ("notification",))
    rid = base.get("id")
    message: Any = copy.deepcopy(base)
    if fault == "no jsonrpc":
        del message["jsonrpc"]
    elif fault == 'jsonrpc "1.0"':
        message["jsonrpc"] = "1.0"
    elif fault == "jsonrpc another value":
        message["jsonrpc"] = draw(st.sampled_from(_BAD_JSONRPC), "2")
    elif fault == "method 42":
        message["method"] = 42
    elif fault == "method another non-string":
        message["method"] = draw(st.sampled_from(_BAD_METHODS), None)
    elif fault == "method missing":
        del message["method"]
    elif fault == "params an array":
        message["params"] = [message.get("params")]
    elif fault == "params another non-object":
        message["params"] = draw(st.sampled_from(_BAD_PARAMS), 1)
    elif fault == "result on a request":
        message["result"] = {}
    elif fault == "error on a request":
        message["error"] = {"code": -32603, "message": "x"}
    elif fault == "id null":
        message["id"] = None
    elif fault == "id 1.5":
        message["id"] = 1.5
    elif fault == "id true":
        message["id"] = True
    elif fault == "id an object":
        message["id"] = {"id": rid}
    elif fault == "id another non-id":
        message["id"] = draw(st.sampled_from(_BAD_IDS), False)
    else:
        message = draw(
            st.sampled_from([42, "ping", None, True, 1.5, orjson.dumps(base).decode()]), 42
        )
    ids: tuple[RequestId | None, ...] = (rid, None) if readable and rid is not None else (None,)
    due = refusal("envelope.invalid-request", ids)
    if fault == "params an array":
        # JSON-RPC 2.0 allows params by position; MCP's schema has an object: the request
        # is refused, with a code neither text names (-32600 or -32602 are both fair).
        due = attrs.evolve(due, codes=())
    return Fault(
        "envelope.invalid-request", message, due, f"a bad envelope ({fault})", repaired=base
    )


def _invalid_responses(rid: RequestId, answer: dict[str, Any]) -> list[tuple[str, Any]]:
    """Malformed twins of ``answer`` (a response to ``rid``), each with what is wrong."""
    result = answer.get("result", {})
    out: list[tuple[str, Any]] = [
        (
            "both result and error",
            {**answer, "result": result, "error": {"code": -1, "message": "x"}},
        ),
        ("a result that is not an object", {"jsonrpc": "2.0", "id": rid, "result": 42}),
        ("an error without a code", {"jsonrpc": "2.0", "id": rid, "error": {"message": "no code"}}),
        ("no id", {"jsonrpc": "2.0", "result": result}),
        ("no jsonrpc", {k: v for k, v in answer.items() if k != "jsonrpc"}),
        ('jsonrpc "1.0"', {**answer, "jsonrpc": "1.0"}),
        ("an id 1.5", {**answer, "id": 1.5}),
        ("an error that is not an object", {"jsonrpc": "2.0", "id": rid, "error": "failed"}),
        (
            "an error message that is not a string",
            {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": 1}},
        ),
    ]
    return out


def invalid_response(g: Ground, draw: Draw) -> Fault | str:
    answer = g.valid(("response",)) if g.answers_possible() else None
    rid = g.fresh_id() if answer is None else answer["id"]
    options = _invalid_responses(rid, answer or {"jsonrpc": "2.0", "id": rid, "result": {}})
    what, message = draw(st.sampled_from(options), options[0])
    return Fault(
        "envelope.invalid-response",
        message,
        Demand("none"),
        "a malformed response" if what == options[0][0] else f"a malformed response ({what})",
        repaired=answer,
    )


def batch_not_allowed(g: Ground, draw: Draw) -> Fault | str:
    if g.spec.batches:
        return f"{g.version} has batches"
    kinds = draw(
        st.sampled_from([("request",), ("request", "notification"), ("response",)]), ("request",)
    )
    if kinds == ("response",) and not g.answers_possible():
        kinds = ("request",)
    members = [g.valid(kinds) for _ in range(draw(st.integers(1, 3), 1))]
    return Fault(
        "envelope.batch-not-allowed",
        members,
        refusal("envelope.batch-not-allowed", (None,)),
        "a JSON array (a batch) where the version has none",
        repaired=members[0],
    )


def empty_batch(g: Ground, draw: Draw) -> Fault | str:
    if not g.spec.batches:
        return f"{g.version} has no batches"
    return Fault(
        "envelope.empty-batch",
        [],
        refusal("envelope.empty-batch", (None,)),
        "an empty batch",
        repaired=[g.valid(("request", "notification", "response"))] if g.repairs else None,
    )


def batch_mixed(g: Ground, draw: Draw) -> Fault | str:
    if not g.spec.batches:
        return f"{g.version} has no batches"
    first = g.valid(("request",))
    if g.answers_possible():
        answer = g.valid(("response",))
    else:
        answer = {"jsonrpc": "2.0", "id": g.fresh_id(), "result": {}}
    members = [first, answer]
    return Fault(
        "envelope.batch-mixed",
        draw(st.permutations(members), members),
        refusal("envelope.batch-mixed", (None,)),
        "a batch mixing a request and a response",
        repaired=[first],
    )


#: The size of the probe's oversized line when the receiver's limit is not known: past 4 MiB,
#: the largest limit in common use.
OVERSIZE: Final = 4 * 1024 * 1024 + 1024


def oversized(g: Ground, draw: Draw) -> Fault | str:
    rid = g.fresh_id()
    method = g.barrier_method
    # A request (the rule applies where the receiver gets requests): its id is read from
    # the two ends of the line that the receiver keeps, and the refusal goes to it. (An
    # oversized response is never answered: tests/test_connection_closing.py.)
    message = g.request(rid, method, {"_meta": g.meta() if g.stateless else {}})
    plain = copy.deepcopy(message)
    holder = message["params"]["_meta"]
    limit = g.max_message_size
    if limit is None:
        # The receiver's limit is not known: a line past the common ones. Our rule is
        # -32600 (the framer's); a receiver with a larger limit answers normally.
        holder["x-probe-padding"] = "a" * max(0, OVERSIZE - len(dumps(message)) - 20)
        due = Demand("answer", (int(ErrorCode.INVALID_REQUEST),), (rid, None))
        why = f"a {OVERSIZE}-byte {method}"
    else:
        holder["x-pad"] = ""
        size = len(dumps(message))
        holder["x-pad"] = "a" * (limit - size + 1 + draw(st.integers(0, 64), 0))
        due = refusal("envelope.oversized-message", (rid,))
        why = f"a line of {len(dumps(message))} bytes (limit {limit})"
    return Fault(
        "envelope.oversized-message", message, due, why, repaired=plain if g.repairs else None
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "envelope.parse-error": parse_error,
    "envelope.invalid-request": invalid_request,
    "envelope.invalid-response": invalid_response,
    "envelope.batch-not-allowed": batch_not_allowed,
    "envelope.empty-batch": empty_batch,
    "envelope.batch-mixed": batch_mixed,
    "envelope.oversized-message": oversized,
}
