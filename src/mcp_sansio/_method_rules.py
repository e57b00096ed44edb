"""The per-method rules the state machine applies, as tables (after h11's readers and writers
keyed by state): for the methods whose content the session reads, a *check* (what makes the
message wrong, as a :data:`~mcp_sansio._checks.Fault`) and an *effect* (what it changes once
it is sent or received). Both directions go through the same rows: ``sender`` says who sent
the message, and what the peer sends against only a SHOULD of its own is refused only under
``Config.strict`` (``strict`` below); what we send is always checked strictly.

Rows: request checks (:data:`REQUEST_CHECKS`: ``initialize``, elicitation, sampling, a server's
bound on subscriptions, ``subscriptions/listen``; and every request whose params some version
requires), notification checks and effects (:data:`NOTIFICATION_CHECKS`,
:data:`NOTIFICATION_EFFECTS`: progress, log messages, resource updates, list changes, the
listen acknowledgement, ``notifications/initialized``), and the effects of a successful answer
(:data:`ANSWER_EFFECTS`: subscriptions and the log level, in the eras where they are state).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ._checks import (
    LOG_RANK,
    Fault,
    elicitation_fault,
    initialize_params_fault,
    listen_params_fault,
    progress_params_fault,
    required_params_fault,
    sampling_fault,
)
from ._errors import ErrorCode, LocalProtocolError
from ._events import Notification, RequestId
from ._gates import transition
from ._names import (
    CANCELLED,
    ELICITATION_CREATE,
    INITIALIZE,
    INITIALIZED,
    LISTEN,
    LISTEN_FLAGS,
    LISTEN_RESOURCES,
    LOG_MESSAGE,
    LOGGING_SET_LEVEL,
    META_SUBSCRIPTION,
    PROGRESS,
    PROMPTS_LIST_CHANGED,
    RESOURCES_LIST_CHANGED,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    RESOURCES_UPDATED,
    SAMPLING_CREATE_MESSAGE,
    SUBSCRIPTIONS_ACKNOWLEDGED,
    TOOLS_LIST_CHANGED,
)
from ._negotiation import answered_initialize, decide_legacy
from ._requests import Listen, Pending, Session
from ._state import Role, Trigger
from ._versions import VERSIONS

__all__ = [
    "ANSWER_EFFECTS",
    "CANCEL_CHECKS",
    "answered",
    "CHECKED_NOTIFICATIONS",
    "CHECKED_REQUESTS",
    "NOTIFICATION_CHECKS",
    "NOTIFICATION_EFFECTS",
    "REQUEST_CHECKS",
    "cancel_target",
    "commit_cancel",
    "late_for_cancelled",
    "meta_fault",
    "peer_cancelled",
    "release_subscription",
    "request_fault",
]

_INVALID: Final = ErrorCode.INVALID_REQUEST
_PARAMS: Final = ErrorCode.INVALID_PARAMS
_ROLE_SERVER: Final = Role.SERVER
_ROLE_CLIENT: Final = Role.CLIENT

RequestCheck = Callable[[Session, Any, bool], "Fault | None"]
NotificationCheck = Callable[[Session, Role, Notification], "Fault | None"]
NotificationEffect = Callable[[Session, Role, Any], "Trigger | None"]
AnswerEffect = Callable[[Session, Any], None]


# ---------------------------------------------------------------- requests


def _initialize(s: Session, params: Any, strict: bool) -> Fault | None:
    fault = initialize_params_fault(params)
    if fault is not None:
        return fault
    # (A side with no initialize-era version never gets here: a stateless client refuses
    # to send initialize, a stateless server answers it by itself.)
    version = params["protocolVersion"]
    if s.role is Role.CLIENT and version not in s.legacy:
        return _PARAMS, f"Invalid params: protocolVersion {version!r} is not one we speak"
    return None


def _elicitation(s: Session, params: Any, strict: bool) -> Fault | None:
    assert s.spec is not None
    return elicitation_fault(s.spec, params, s.client_caps or {})


def _sampling(s: Session, params: Any, strict: bool) -> Fault | None:
    assert s.spec is not None
    return sampling_fault(s.spec, params, s.client_caps or {}, strict=strict)


def _subscribe(s: Session, params: Any, strict: bool) -> Fault | None:
    """A server's bounds on its peer's subscriptions (``max_subscriptions``,
    ``max_subscription_bytes``), counting those not answered yet; an accepted request
    reserves its place until it is answered."""
    if s.role is not _ROLE_SERVER:
        return None
    uri = params.get("uri") if params else None
    if type(uri) is not str:
        return None  # (the required params were checked before)
    cfg = s.config
    subscriptions = s.subscriptions
    why = subscriptions.full(uri, cfg.max_subscriptions, cfg.max_subscription_bytes)
    if why is not None:
        return _INVALID, f"Invalid request: {why}"
    subscriptions.reserve(uri)
    return None


def _listen(s: Session, params: Any, strict: bool) -> Fault | None:
    return listen_params_fault(params)


#: The requests whose params the state machine reads: method → check.
REQUEST_CHECKS: Final[Mapping[str, RequestCheck]] = {
    INITIALIZE: _initialize,
    ELICITATION_CREATE: _elicitation,
    SAMPLING_CREATE_MESSAGE: _sampling,
    RESOURCES_SUBSCRIBE: _subscribe,  # (a server bounds its peer's subscriptions)
    LISTEN: _listen,
}
#: Requests whose params are checked: those the schema of some version requires params
#: of, and those whose params the state machine reads.
CHECKED_REQUESTS: Final = frozenset(REQUEST_CHECKS).union(
    *(spec.required_params for spec in VERSIONS.values())
)


def request_fault(s: Session, method: str, params: Any, strict: bool = True) -> Fault | None:
    """Params-level rules of the requests in :data:`CHECKED_REQUESTS`: first the params the
    version's schema requires, then the method's row of :data:`REQUEST_CHECKS`. ``strict``
    (what we send; what we receive under ``Config.strict``) adds the rules the text states
    only as the sender's SHOULD (see ``_checks.sampling_fault``)."""
    spec = s.spec
    rows = spec.required_params.get(method) if spec is not None else None
    if rows is not None:
        fault = required_params_fault(method, rows, params)
        if fault is not None:
            return fault
    if method in REQUEST_CHECKS:
        return REQUEST_CHECKS[method](s, params, strict)
    return None


def meta_fault(meta: Any, tokens: Mapping[Any, Pending]) -> tuple[Fault | None, Any]:
    """A request's ``_meta`` object and its progress token (unique among the requests in
    flight of the same sender): the fault, and the token or ``None``."""
    if type(meta) is not dict:
        return (_PARAMS, "Invalid params: _meta must be an object"), None
    if "progressToken" not in meta:
        return None, None
    # "Progress tokens MUST be a string or integer value": a null one too is refused.
    token = meta["progressToken"]
    cls = type(token)
    if cls is not str and cls is not int:  # is_id(), inline: every request, both ways
        return (_PARAMS, "Invalid params: progressToken must be a string or an integer"), None
    if token in tokens:
        return (
            _INVALID,
            f"Invalid request: progressToken {token!r} is in use by another request",
        ), None
    return None, token


# ---------------------------------------------------------------- cancellation
# What a cancel means is the era's (EraPolicy.cancel_ends_listen): a request of its sender,
# or, from a 2026-07-28 server, the client's listen stream that it ends.


def cancel_target(s: Session, params: Any) -> tuple[bool, RequestId]:
    """Check a cancel we send: ``(ends_listen, request id)``; raises
    :class:`LocalProtocolError` when it names nothing we may cancel."""
    rid: Any = params.get("requestId") if params else None
    cls = type(rid)
    if cls is not str and cls is not int:
        raise LocalProtocolError(
            "notifications/cancelled needs params.requestId (a string or an integer)"
        )
    if s.role is _ROLE_SERVER and s.policy.cancel_ends_listen:
        entry = s.theirs.pending.get(rid)
        if entry is None or entry.method != LISTEN:
            raise LocalProtocolError(
                "a 2026-07-28 server sends notifications/cancelled only to end a listen stream"
            )
        return True, rid
    entry = s.ours.pending.get(rid)
    if entry is None:
        raise LocalProtocolError(
            f"cannot cancel {rid!r}: no request of ours with this id is in flight"
        )
    if entry.method == INITIALIZE:
        raise LocalProtocolError("initialize must not be cancelled")
    return False, rid


def commit_cancel(s: Session, rid: RequestId) -> None:
    """Our request ``rid`` is cancelled: its late answer and progress will be dropped; a
    cancelled probe decides the initialize era."""
    ours = s.ours
    token = ours.retire(rid).token
    if token is not None:
        ours.cancelled_tokens.put(token)
    ours.cancelled.put(rid)
    if rid == s.probe_id:
        s.probe_id = None
        decide_legacy(s)


def peer_cancelled(s: Session, params: Any) -> bool:
    """The peer's cancel: whether it is delivered. Malformed or unknown cancels, and
    cancels of ``initialize``, are ignored, as the specification says."""
    rid: Any = params.get("requestId") if params else None
    cls = type(rid)
    if cls is not str and cls is not int:
        return False
    theirs = s.theirs
    pending = theirs.pending.get(rid)
    if pending is not None:
        if pending.method == INITIALIZE:
            return False
        theirs.retire(rid)
        if pending.method == RESOURCES_SUBSCRIBE:
            release_subscription(s, pending.params)
        theirs.cancelled.put(rid)
        return True
    if s.role is _ROLE_CLIENT and s.policy.cancel_ends_listen:
        # 2026: a stdio server ends a listen stream with notifications/cancelled.
        ours = s.ours.pending.get(rid)
        if ours is not None and ours.method == LISTEN:
            s.ours.retire(rid)
            return True
    return False


def late_for_cancelled(s: Session, note: Notification) -> bool:
    """Whether a refused notification belongs to a request we cancelled (progress on its
    token, a 2026 stream notification of its listen): it crossed our cancel on the wire,
    and is dropped like a late answer."""
    params = note.params or {}
    ours = s.ours
    if note.method == PROGRESS:
        token = params.get("progressToken")
        cls = type(token)
        return (cls is str or cls is int) and token in ours.cancelled_tokens
    meta = params.get("_meta")
    sid = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
    cls = type(sid)
    return (cls is str or cls is int) and sid in ours.cancelled


#: (For the rule tables' readers: the cancel is handled before the method tables.)
CANCEL_CHECKS: Final = frozenset({CANCELLED})


# ---------------------------------------------------------------- notifications


def _progress(s: Session, sender: Role, note: Notification) -> Fault | None:
    params = note.params
    strict = sender is s.role or s.config.strict
    fault = progress_params_fault(s.spec, params, strict=strict)
    if fault is not None:
        return fault
    token = params["progressToken"]
    # The token belongs to a request sent by the *receiver* of the progress.
    entry = (s.ours if sender is s.peer else s.theirs).tokens.get(token)
    if entry is None:
        return _INVALID, f"Invalid request: progressToken {token!r} names no request in flight"
    if entry.method == LISTEN:
        return _INVALID, "Invalid request: notifications/progress never goes on a listen stream"
    last = entry.progress
    progress = params["progress"]
    if last is not None and progress <= last:
        return (
            _INVALID,
            f"Invalid request: progress must increase ({progress!r} after {last!r})",
        )
    return None


def _log(s: Session, sender: Role, note: Notification) -> Fault | None:
    params = note.params
    level = params.get("level") if params else None
    if type(level) is not str or level not in LOG_RANK:
        return _PARAMS, "Invalid params: notifications/message needs a known level"
    rank = LOG_RANK[level]
    # Below the level set, the text is silent or says "should" (see below): the peer's log
    # message is refused only under strict.
    strict = sender is s.role or s.config.strict
    if s.policy.log_level_in_meta:
        # Sending (server side): the peer's requests' logLevels; receiving (client side):
        # ours. n/message never goes on a listen stream (those are not counted).
        lowest = (s.theirs if sender is s.role else s.ours).lowest_rank()
        if lowest < 0:
            # "The server MUST NOT emit notifications/message for a request that does not
            # include this field" (2026-07-28, Server > Utilities > Logging).
            return _INVALID, "Invalid request: notifications/message, but no request set logLevel"
        # "When the field is present, the server MAY send notifications/message
        # notifications at or above the requested level" (ibid.): no MUST NOT below.
        if strict and rank < lowest:
            return _INVALID, "Invalid request: log message below the requested logLevel"
    # "The server should send all logs at this level and higher" (Schema > SetLevelRequest,
    # lower case): nothing forbids a lower one.
    elif strict and s.log_level is not None and rank < LOG_RANK[s.log_level]:
        return _INVALID, (
            f"Invalid request: log message at {level!r} is below the level "
            f"{s.log_level!r} the client set"
        )
    return None


def listen_of(s: Session, sender: Role, params: Any) -> Listen | None:
    """The listen stream a server's notification names by its ``subscriptionId``."""
    meta = params.get("_meta") if params else None
    sid = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
    cls = type(sid)
    if cls is not str and cls is not int:
        return None
    # The stream is a request of the notification's receiver.
    entry = (s.ours if sender is s.peer else s.theirs).pending.get(sid)  # type: ignore[arg-type]
    return None if entry is None else entry.listen


def _stream(s: Session, sender: Role, note: Notification) -> Fault | None:
    """2026-07-28: server notifications that belong on a listen stream."""
    params = note.params
    method = note.method
    listen = listen_of(s, sender, params)
    if listen is None:
        return _INVALID, f"Invalid request: {method} needs the subscriptionId of a listen"
    wanted = listen.wanted
    if method == SUBSCRIPTIONS_ACKNOWLEDGED:
        if listen.granted is not None:
            return _INVALID, "Invalid request: the subscription was already acknowledged"
        granted = params.get("notifications")
        if type(granted) is not dict:
            return _PARAMS, "Invalid params: acknowledged needs notifications (an object)"
        for key, value in granted.items():
            if key == LISTEN_RESOURCES:
                asked = wanted.get(key) or ()
                if type(value) is not list or any(uri not in asked for uri in value):
                    return _INVALID, "Invalid request: acknowledged unrequested resources"
            elif value and not wanted.get(key):
                return _INVALID, f"Invalid request: acknowledged {key!r}, not requested"
        return None
    if listen.granted is None:
        return _INVALID, f"Invalid request: {method} before the subscription's acknowledgement"
    if method == RESOURCES_UPDATED:
        uri = params.get("uri")
        if type(uri) is not str or uri not in listen.granted:
            return _INVALID, f"Invalid request: resource {uri!r} is not on this stream"
    elif method not in listen.granted:
        return _INVALID, f"Invalid request: {method} was not opted into on this stream"
    return None


def _list_changed(s: Session, sender: Role, note: Notification) -> Fault | None:
    return _stream(s, sender, note) if s.policy.listen_streams else None


def _updated(s: Session, sender: Role, note: Notification) -> Fault | None:
    if s.policy.listen_streams:
        return _stream(s, sender, note)
    params = note.params
    uri = params.get("uri") if params else None
    if type(uri) is not str:
        return _PARAMS, "Invalid params: uri must be a string"
    # "This should only be sent if the client previously sent a resources/subscribe
    # request" (Schema > ResourceUpdatedNotification): a lower-case "should", the
    # server's; a client may read the resource again (refused under strict).
    if not s.subscriptions.covers(uri) and (sender is s.role or s.config.strict):
        return _INVALID, f"Invalid request: resource {uri!r} was not subscribed to"
    return None


def _no_check(s: Session, sender: Role, note: Notification) -> Fault | None:
    return None


#: The notifications whose content the state machine reads: method → check.
NOTIFICATION_CHECKS: Final[Mapping[str, NotificationCheck]] = {
    INITIALIZED: _no_check,
    PROGRESS: _progress,
    LOG_MESSAGE: _log,
    RESOURCES_UPDATED: _updated,
    SUBSCRIPTIONS_ACKNOWLEDGED: _stream,
    TOOLS_LIST_CHANGED: _list_changed,
    PROMPTS_LIST_CHANGED: _list_changed,
    RESOURCES_LIST_CHANGED: _list_changed,
}
CHECKED_NOTIFICATIONS: Final = frozenset(NOTIFICATION_CHECKS)


def _progress_effect(s: Session, sender: Role, params: Any) -> Trigger | None:
    table = s.ours if sender is s.peer else s.theirs
    table.tokens[params["progressToken"]].progress = params["progress"]
    return None


def _initialized_effect(s: Session, sender: Role, params: Any) -> Trigger | None:
    return Trigger.INITIALIZED


def _acknowledged_effect(s: Session, sender: Role, params: Any) -> Trigger | None:
    listen = listen_of(s, sender, params)
    assert listen is not None  # (checked)
    granted = params["notifications"]
    names = {LISTEN_FLAGS[k] for k, v in granted.items() if k in LISTEN_FLAGS and v}
    names.update(granted.get(LISTEN_RESOURCES) or ())
    listen.granted = frozenset(names)
    return None


#: What a notification changes once sent or received (a lifecycle trigger, or nothing).
NOTIFICATION_EFFECTS: Final[Mapping[str, NotificationEffect]] = {
    PROGRESS: _progress_effect,
    INITIALIZED: _initialized_effect,
    SUBSCRIPTIONS_ACKNOWLEDGED: _acknowledged_effect,
}


# ---------------------------------------------------------------- answers


def release_subscription(s: Session, params: Any) -> None:
    """A server answered (or its peer cancelled) a ``resources/subscribe``: the place its
    request reserved (see ``_subscribe``) is free again."""
    uri = params.get("uri") if params else None
    if s.role is _ROLE_SERVER and type(uri) is str:
        s.subscriptions.release(uri)


def _subscribed(s: Session, params: Any) -> None:
    s.subscriptions.add(params["uri"])


def _unsubscribed(s: Session, params: Any) -> None:
    s.subscriptions.discard(params["uri"])


def _level_set(s: Session, params: Any) -> None:
    s.log_level = params["level"]


#: What a successful answer changes, for the requests of the era's ``effectful`` set
#: (``initialize`` is the lifecycle's: the Connection applies it).
ANSWER_EFFECTS: Final[Mapping[str, AnswerEffect]] = {
    RESOURCES_SUBSCRIBE: _subscribed,
    RESOURCES_UNSUBSCRIBE: _unsubscribed,
    LOGGING_SET_LEVEL: _level_set,
}


def answered(s: Session, entry: Pending, result: Any, *, sent: bool) -> None:
    """The effects of an answer to ``entry``, the same whether we sent it (``sent``) or
    received it: an error (``result`` ``None``) undoes ``initialize`` and frees a
    subscription's reserved place; a result of the era's ``effectful`` set applies
    ``initialize`` or the row of :data:`ANSWER_EFFECTS`. (A server frees the reserved place
    either way; :func:`release_subscription` is nothing on a client.)"""
    method = entry.method
    if method == INITIALIZE:
        if result is None:
            transition(s, Trigger.INITIALIZE_ERROR)
        else:
            answered_initialize(s, result, sent=sent)
        return
    if method == RESOURCES_SUBSCRIBE:
        release_subscription(s, entry.params)
    if result is not None:
        ANSWER_EFFECTS[method](s, entry.params)
