"""The Streamable HTTP client transport under random interleavings (hypothesis).

A session writes requests (some of which change what the server holds: subscriptions, the
logging level), notifications and cancellations, while a random server answers the
transport's HTTP requests in any order: JSON or event-stream answers, errors, streams cut
short (and resumed), 404s that expire the session (and reopen it, restoring what it
held), 400s taken as expiry, 500s and broken connections. Then every exchange still open is
answered well, until none is left.

What must hold, whatever happened:

- nothing but the documented actions comes out, and nothing raises;
- the session gets answers only for ids it sent (never the transport's own: the replayed
  ``initialize``, the restoring requests), and at most one for each;
- once everything is answered, every request the session did not cancel got its answer,
  no exchange is left open, and nothing is held back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mcp_sansio._sse import encode_event
from mcp_sansio.http._client import (
    AbortRequest,
    ClientAction,
    HttpClientTransport,
    HttpRequest,
    ToSession,
    TransportProblem,
)

VERSION = "2025-11-25"
JSON = [(b"Content-Type", b"application/json")]
SSE = [(b"Content-Type", b"text/event-stream")]
REQUESTS = [
    ("tools/list", None),
    ("ping", None),
    ("resources/subscribe", {"uri": "a://1"}),
    ("resources/subscribe", {"uri": "a://2"}),
    ("resources/unsubscribe", {"uri": "a://1"}),
    ("logging/setLevel", {"level": "error"}),
]
#: How a request's POST is answered (a repeated way comes up more often).
POST_ANSWERS = ["json", "json", "json-error", "sse", "sse-cut", "expired", "expired", "400"]
POST_ANSWERS += ["500", "broken"]
#: How a resumed stream (GET) is answered.
GET_ANSWERS = ["sse", "sse", "sse-cut", "500", "broken"]
#: How a notification's POST is answered.
NOTE_ANSWERS = ["202", "202", "expired", "500", "broken"]
#: How the replayed initialize is answered.
REOPEN_ANSWERS = ["ok", "ok", "ok", "500", "other-version"]


def _line(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


class Harness:
    """The session's and the server's sides around one transport, and what they saw."""

    def __init__(self, transport: HttpClientTransport) -> None:
        self.t = transport
        self.pending: dict[int, HttpRequest] = {}
        self.owes: dict[int, list[Any]] = {}  # stream -> the session's ids it carries
        self.sent: set[Any] = set()
        self.cancelled: set[Any] = set()
        self.answers: Counter[Any] = Counter()
        self.next_id = 1
        self.sessions = 0
        self.events = 0

    # -------------------------------------------------------------- what comes out

    def take(self, actions: Iterable[ClientAction], inherit: list[Any] | None = None) -> None:
        for action in actions:
            if isinstance(action, HttpRequest):
                assert action.stream not in self.pending
                self.pending[action.stream] = action
                owed: list[Any] = []
                if action.method == "POST":
                    message = orjson.loads(action.body)
                    if "id" in message and "method" in message:
                        owed = [message["id"]]
                elif action.method == "GET":
                    owed = list(inherit or [])
                self.owes[action.stream] = owed
            elif isinstance(action, AbortRequest):
                self.pending.pop(action.stream, None)
                self.owes.pop(action.stream, None)
            elif isinstance(action, ToSession):
                assert action.data.endswith(b"\n")
                for raw in action.data[:-1].split(b"\n"):
                    message = orjson.loads(raw)
                    assert type(message) is dict, message
                    if "method" in message:
                        continue  # the server's own notification
                    request_id = message["id"]
                    assert request_id in self.sent, f"an answer to an id never sent: {message}"
                    self.answers[request_id] += 1
                    assert self.answers[request_id] == 1, f"answered twice: {message}"
            else:
                assert isinstance(action, TransportProblem)
                assert isinstance(action.message, str)
                assert action.message

    # -------------------------------------------------------------- the session

    def request(self, choice: int) -> None:
        method, params = REQUESTS[choice % len(REQUESTS)]
        request_id = self.next_id
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.sent.add(request_id)
        self.take(self.t.send(_line(message)))

    def notify(self) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        self.take(self.t.send(_line(note)))

    def cancel(self, choice: int) -> None:
        waiting = sorted(i for i in self.sent if not self.answers[i] and i not in self.cancelled)
        if not waiting:
            return
        request_id = waiting[choice % len(waiting)]
        self.cancelled.add(request_id)
        params = {"requestId": request_id, "reason": "fuzz"}
        self.take(
            self.t.send(
                _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
            )
        )

    # -------------------------------------------------------------- the server

    def respond(self, stream: int, how: str) -> None:
        """Answer the exchange ``stream`` as ``how`` says (what fits its kind)."""
        request = self.pending.pop(stream)
        owed = self.owes.pop(stream)
        t = self.t
        if request.method == "DELETE":
            self.take(t.response_started(stream, 200, []) + t.response_ended(stream))
            return
        body: dict[str, Any] | None = orjson.loads(request.body) if request.body else None
        answer_ids = owed
        if body is not None and body.get("method") == "initialize":
            answer_ids = [body["id"]]  # the transport's replayed initialize
        if how == "broken":
            self.take(t.request_failed(stream, "fuzz: connection reset"))
            return
        if how in ("500", "expired", "400") or (how == "202" and body is not None):
            status = {"500": 500, "expired": 404, "400": 400, "202": 202}[how]
            error = b""
            if how == "400":
                no_session = {"code": -32000, "message": "Bad Request: No valid session ID"}
                error = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": no_session})
            actions = t.response_started(stream, status, JSON if error else [])
            actions += t.response_data(stream, error) if error else []
            self.take(actions + t.response_ended(stream))
            return
        results = [self._answer(i, body, how) for i in answer_ids]
        if how in ("json", "json-error", "ok", "other-version") and results:
            headers = list(JSON)
            if body is not None and body.get("method") == "initialize":
                self.sessions += 1
                headers.append((b"Mcp-Session-Id", f"s-{self.sessions}".encode()))
            actions = t.response_started(stream, 200, headers)
            actions += t.response_data(stream, orjson.dumps(results[0]))
            self.take(actions + t.response_ended(stream))
            return
        # An event stream: a notification, then the answers (or, cut short, none of them).
        self.events += 1
        chunks = [encode_event(_note(self.events), id=f"e{self.events}")]
        if how != "sse-cut":
            chunks += [encode_event(orjson.dumps(r)) for r in results]
        actions = t.response_started(stream, 200, SSE)
        for chunk in chunks:
            actions += t.response_data(stream, chunk)
        self.take(actions)
        self.take(t.response_ended(stream), inherit=answer_ids if how == "sse-cut" else None)

    def _answer(self, request_id: Any, body: dict[str, Any] | None, how: str) -> dict[str, Any]:
        if how == "json-error":
            error = {"code": -32602, "message": "fuzz says no"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        result: dict[str, Any] = {}
        if body is not None and body.get("method") == "initialize":
            version = "2025-06-18" if how == "other-version" else VERSION
            result = {"protocolVersion": version, "capabilities": {}, "serverInfo": {}}
        elif body is not None and body.get("method") == "tools/list":
            result = {"tools": []}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def answer_well(self, stream: int) -> None:
        """Answer ``stream`` so that it succeeds."""
        request = self.pending[stream]
        if request.method == "POST":
            body = orjson.loads(request.body)
            if body.get("method") == "initialize":
                self.respond(stream, "ok")
            elif "id" in body:
                self.respond(stream, "json")
            else:
                self.respond(stream, "202")
        else:
            self.respond(stream, "sse")

    def kinds(self, stream: int) -> list[str]:
        """The ways ``stream`` may be answered."""
        request = self.pending[stream]
        if request.method != "POST":
            return GET_ANSWERS
        body = orjson.loads(request.body)
        if body.get("method") == "initialize":
            return REOPEN_ANSWERS
        return POST_ANSWERS if "id" in body else NOTE_ANSWERS


def _note(n: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}})


def opened(expired_statuses: tuple[int, ...], held: bool) -> Harness:
    """A harness whose transport has an initialized session (``s-1``); with ``held``, the
    server accepted a logging level and two subscriptions in it, one then undone."""
    h = Harness(HttpClientTransport(expired_statuses=expired_statuses))
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {}},
    }
    h.sent.add(0)
    h.take(h.t.send(_line(init)))
    (stream,) = h.pending
    h.respond(stream, "ok")
    assert h.answers[0] == 1
    assert h.t.session_id == "s-1"
    h.take(h.t.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'))
    (stream,) = h.pending
    h.respond(stream, "202")
    if held:
        for choice in (5, 2, 3, 4):
            h.request(choice)
            (stream,) = h.pending
            h.respond(stream, "json")
    return h


OPS = ["request", "request", "notify", "cancel", "respond", "respond", "respond", "respond"]
STEPS = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 99)), min_size=20, max_size=80)


# At least 300 examples; more under the ``long`` profile (tox's ``fuzz-long``).
@settings(max_examples=max(300, settings().max_examples))
@given(
    steps=STEPS, data=st.data(), statuses=st.sampled_from([(404,), (404, 400)]), held=st.booleans()
)
def test_every_request_gets_one_answer_whatever_the_server_does(
    steps: list[tuple[str, int]], data: st.DataObject, statuses: tuple[int, ...], held: bool
) -> None:
    h = opened(statuses, held)
    for op, choice in steps:
        if op == "request":
            h.request(choice)
        elif op == "notify":
            h.notify()
        elif op == "cancel":
            h.cancel(choice)
        elif h.pending:
            stream = sorted(h.pending)[choice % len(h.pending)]
            h.respond(stream, data.draw(st.sampled_from(h.kinds(stream)), label="answer"))
    event(f"reopened {min(h.t.reopened, 2)}; restores {min(h.t._restores, 3)}")
    # Now the server answers everything well, until nothing is left to answer.
    for _ in range(500):
        if not h.pending:
            break
        h.answer_well(min(h.pending))
    assert not h.pending, h.pending
    assert not h.t.open_streams
    assert not h.t._held
    assert not h.t._gates
    assert not h.t._restoring
    unanswered = sorted(i for i in h.sent - h.cancelled if h.answers[i] != 1)
    assert not unanswered, f"never answered: {unanswered}"
