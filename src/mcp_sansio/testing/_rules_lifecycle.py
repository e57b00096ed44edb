"""The rules of the lifecycle, the ids and the responses: ``lifecycle.*``, ``ids.*``,
``response.*``.
"""

from __future__ import annotations

from typing import Final

from mcp_sansio._state import Role
from mcp_sansio.testing._rule_parts import (
    CANCEL_RACE,
    CLIENT_WAITS,
    INIT_FIRST,
    INITIALIZATION,
    LEGACY,
    META_REQUIRED,
    NO_ANSWER_AFTER_CANCEL,
    NO_RESPONSE,
    REQUEST_ID,
    RESPECT_VERSION,
    RESPONSE_ID,
    RESPONSES_ANSWER_REQUESTS,
    RPC_CLIENT,
    RPC_ID,
    RPC_ONE_RESPONSE,
    RPC_REPLY,
    RPC_SAME_ID,
    SERVER_WAITS,
    always,
    legacy,
    make_rule,
    mcp,
    receives_requests,
    stateless,
)

#: The rules of this family, in the catalog's order.
CATALOG: Final = (
    make_rule(
        "lifecycle.request-before-initialize",
        code=None,
        reply="error",
        level="MUST",
        where=legacy(Role.SERVER),
        binds="sender",
        summary="""Initialize era: the initialization phase is the first interaction, and the
        client MUST begin it: a request other than ``ping`` before ``initialize`` breaks the
        client's duty, not the server's. A server may refuse it with any error (the text names
        no code; our Connection answers -32600) or serve it: a note, never charged to it.""",
        probed="a list request before ``initialize``; *sent*: the client's first request",
        citations=(
            INIT_FIRST,
            mcp(
                LEGACY,
                INITIALIZATION,
                "The client MUST initiate this phase by sending an `initialize` request "
                "containing:",
            ),
            CLIENT_WAITS,
        ),
    ),
    make_rule(
        "lifecycle.request-in-initialize-window",
        code=None,
        reply="result",
        level="implied",
        where=legacy(Role.SERVER),
        summary="""Initialize era: once the server has answered ``initialize``, the client may
        send any request, before its ``notifications/initialized`` too: the text restricts
        the client's requests only until that answer (it is the server that waits for
        ``notifications/initialized``), so such a request is valid and served. No sentence
        grants it in so many words: it follows from where the SHOULD NOT ends.""",
        probed="""a list request between the ``initialize`` result and
        ``notifications/initialized``: it must be answered with a result""",
        citations=(CLIENT_WAITS, SERVER_WAITS),
    ),
    make_rule(
        "lifecycle.server-request-before-initialized",
        code=None,
        reply="error",
        level="SHOULD NOT",
        where=legacy(Role.CLIENT),
        binds="sender",
        summary="""Initialize era: the server does not send requests other than ``ping`` (and
        logging) before it has received ``notifications/initialized``. The duty is the
        server's; a client may refuse such a request (with an error of any code; our
        Connection does under ``strict``) or serve it (our Connection does by default, once the
        initialize result is out).""",
        probed="""*sent*: the server's requests before the probe's
        ``notifications/initialized``""",
        citations=(SERVER_WAITS,),
    ),
    make_rule(
        "lifecycle.notification-before-initialized",
        code=None,
        reply="none",
        level="MUST NOT",
        where=legacy(Role.CLIENT, Role.SERVER),
        summary="""Initialize era: a notification sent before the handshake is over is never
        answered. The lifecycle's sentences restrict requests, not notifications: between
        the ``initialize`` result and ``notifications/initialized`` a notification the
        capabilities allow is valid; one the capabilities do not allow is dropped
        (``capability.undeclared-notification``); neither gets a reply.""",
        probed="""``notifications/roots/list_changed`` between the ``initialize`` result and
        ``notifications/initialized``: nothing may answer it""",
        citations=(*NO_RESPONSE, CLIENT_WAITS, SERVER_WAITS),
    ),
    make_rule(
        "lifecycle.second-initialize",
        code=None,
        reply="error",
        level="implied",
        where=legacy(Role.SERVER),
        summary="""Initialize era: a session is initialized once; a second ``initialize`` (while
        the first is in flight or after it) is refused with an error (no sentence says so,
        nor names a code: it follows from the one initialization phase and the negotiated
        version being kept).""",
        probed="``initialize`` in an initialized session; *sent*: the client's requests",
        citations=(INIT_FIRST, *RESPECT_VERSION),
    ),
    make_rule(
        "lifecycle.initialize-version",
        code=None,
        reply="result",
        level="MUST",
        where=legacy(Role.SERVER),
        summary="""Initialize era: ``initialize`` asking for a version the server does not
        support is not an error: the server answers with a version it supports (it echoes
        the requested one only when it supports it).""",
        probed="""``initialize`` for ``1999-01-01``: the result must name a version the server
        offers""",
        citations=(
            mcp(
                LEGACY,
                INITIALIZATION + " > Version Negotiation",
                "If the server supports the requested protocol version, it MUST respond with "
                "the same version. Otherwise, the server MUST respond with another protocol "
                "version it supports.",
            ),
            mcp(
                LEGACY,
                INITIALIZATION,
                "The server MUST respond with its own capabilities and information:",
            ),
        ),
    ),
    make_rule(
        "lifecycle.unsupported-version-result",
        code=None,
        reply="close",
        level="SHOULD",
        where=legacy(Role.CLIENT),
        summary="""Initialize era: an ``initialize`` result naming a version the client does not
        speak ends the session: the client disconnects.""",
        probed="""(``--client``) ``initialize`` answered with ``1999-01-01``: the client must
        close""",
        citations=(
            mcp(
                LEGACY,
                INITIALIZATION + " > Version Negotiation",
                "If the client does not support the version in the server's response, it "
                "SHOULD disconnect.",
            ),
        ),
    ),
    make_rule(
        "lifecycle.initialize-stateless",
        code=None,
        reply="error",
        level="MUST",
        where=stateless(Role.SERVER),
        summary="""A server that speaks only 2026-07-28 answers a legacy ``initialize`` with an
        error (the code is implementation-defined; it SHOULD name the versions it
        supports).""",
        probed="a legacy ``initialize`` to a server of 2026-07-28 only",
        citations=(
            META_REQUIRED[1],
            mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Backward Compatibility with "
                "Initialization-Based Versions > Compatibility Matrix",
                "Fails. stdio: the server rejects `initialize` with a JSON-RPC error; the "
                "exact code is implementation-defined (`initialize` is an unknown method and "
                "the request also lacks the required `_meta` fields).",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Versioning and Compatibility > Backward Compatibility with "
                "Initialization-Based Versions",
                "A server that supports only modern versions SHOULD name the protocol versions "
                "it supports in any error it returns to an `initialize` request, on any "
                "transport: legacy clients have no fall-forward mechanism, and this message "
                "may be the only diagnostic they can surface to users.",
            ),
        ),
    ),
    # ------------------------------------------------------------------ ids
    make_rule(
        "ids.duplicate-request-id",
        code=None,
        reply="error",
        level="MUST NOT",
        where=receives_requests,
        binds="sender",
        summary="""A request id is never reused by the same sender: in the initialize era for
        the whole session, in 2026-07-28 while a request with that id is in flight. The duty
        is the sender's; our Connection refuses the reuse with an error (-32600, in
        2026-07-28 to ``"id": null`` so that it cannot be taken for the other request's
        answer), but the text names no reply.""",
        probed="""``ping`` reusing the id of an answered request (initialize era); *sent*: the
        client's ids""",
        citations=(
            mcp(
                ("2025-11-25", "2025-06-18", "2025-03-26"),
                "Basic > Overview > Messages > Requests",
                "The request ID MUST NOT have been previously used by the requestor within the "
                "same session.",
            ),
            mcp(
                ("2024-11-05",),
                "Basic > Messages > Requests",
                "The request ID MUST NOT have been previously used by the requestor within the "
                "same session.",
            ),
            mcp(
                ("2026-07-28",),
                "Basic > Overview > Messages > Requests",
                "The request ID MUST NOT match the ID of any other request the sender has "
                "issued and not yet received a response for.",
            ),
        ),
    ),
    make_rule(
        "ids.string-and-int-are-different",
        code=None,
        reply="result",
        level="implied",
        where=receives_requests,
        summary="""``7`` and ``"7"`` are different ids: a request whose id equals another's only
        after conversion is a new request, answered normally under its own id (of its own
        JSON type).""",
        probed='``ping`` with id ``"0"`` after id ``0``',
        citations=(RPC_ID, RPC_SAME_ID, *REQUEST_ID, *RESPONSE_ID),
    ),
    make_rule(
        "response.unknown-id",
        code=None,
        reply="none",
        level="implied",
        where=always,
        summary="""A response whose id answers no request in flight (never sent, already
        answered, or the same digits of another JSON type) is dropped: no reply, no crash.
        Sending one breaks the sender's MUSTs: the id of a request never sent, that the id
        be the request's; a second answer to one request (one answered, then cancelled, the
        race of a late cancel), JSON-RPC's one Response per call and cancellation's
        "handle these race conditions gracefully".""",
        probed="a response to a request never sent; *sent*: every answer of the peer",
        citations=(RPC_CLIENT, RPC_REPLY, *RESPONSES_ANSWER_REQUESTS),
        sent=(RPC_ID, *RESPONSE_ID, RPC_ONE_RESPONSE, *CANCEL_RACE, *NO_ANSWER_AFTER_CANCEL),
    ),
    # ------------------------------------------------------------------ capabilities
)
