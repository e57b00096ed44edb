"""Sans-IO sessions: everything the adapters share, above the :class:`Connection`.

A session owns a :class:`Connection` and does what every client or server has to do on top
of the bare protocol: open the session (``initialize`` or ``server/discover``, with the
fallback between eras), assign request ids and correlate answers, turn timeouts into
deadlines (the caller passes ``now``; the session never reads the clock), cancel what timed
out, route progress, answer ``ping``, dispatch the peer's requests to handlers, and run the
2026-07-28 ``input_required`` loop.

It still does no I/O: methods return the bytes to write, and
:meth:`SessionBase.receive_data` (like :meth:`~SessionBase.expire`,
:meth:`~SessionBase.complete` and :meth:`ClientSession.open`) returns a list of
:data:`Action`: one of seven classes (write these bytes, wake this call, run this handler,
cancel that job, give the application this notification, opened, closed). Every policy is
decided here, once; a runtime carries the actions out (:func:`carry_out` on a
:class:`Runtime`); see :mod:`mcp_sansio.blocking`, :mod:`mcp_sansio.asyncio` and
:mod:`mcp_sansio.trio`.

The modules: ``_errors`` (exceptions, defaults), ``_calls`` (:class:`Call`, :class:`Job`),
``_actions`` (the actions and the runtime protocol), ``_base`` (:class:`SessionBase`),
``_client`` and ``_server`` (the two sides), ``_context`` (what handlers get),
``_client_api`` (the convenience calls, one table for both faces), ``_policy`` (how
callback errors are logged).
"""

from __future__ import annotations

from typing import Final, TypeAlias

from . import _actions, _errors
from ._actions import (
    CallFinished,
    CancelJob,
    Closed,
    HandleJob,
    Opened,
    PeerNotification,
    Runtime,
    Send,
    carry_out,
)
from ._base import SessionBase
from ._calls import Call, Job
from ._client import ClientSession
from ._context import AsyncContext, AsyncContextBase, ClientView, ContextBase, SyncContextBase
from ._errors import ConnectionLost, DefaultType, McpError, NeedInput, RequestTimeout
from ._server import ServerSession

# The data names, documented here (they are defined in _errors and _actions).

#: Default time a request may take, in seconds, before it is cancelled.
DEFAULT_TIMEOUT: Final = _errors.DEFAULT_TIMEOUT
#: Default hard limit, in seconds, when progress keeps resetting a request's timeout.
DEFAULT_MAX_TIMEOUT: Final = _errors.DEFAULT_MAX_TIMEOUT
#: How long a client that speaks both eras waits for its ``server/discover`` probe.
DEFAULT_PROBE_TIMEOUT: Final = _errors.DEFAULT_PROBE_TIMEOUT
#: How many ``input_required`` rounds a client goes through for one call before giving up.
DEFAULT_MAX_INPUT_ROUNDS: Final = _errors.DEFAULT_MAX_INPUT_ROUNDS
#: How many unreadable messages in a row a session takes before it closes the connection as
#: broken: messages that are not JSON (-32700), or JSON that is no JSON-RPC message and has no
#: id to answer (-32600 to a null id). Each is answered as JSON-RPC says until then.
DEFAULT_MAX_UNREADABLE: Final = _errors.DEFAULT_MAX_UNREADABLE
#: "The session's default" (for ``timeout=``).
DEFAULT: Final = _errors.DEFAULT
#: Everything a session asks of its runtime: one of seven classes (:class:`Send`,
#: :class:`CallFinished`, :class:`HandleJob`, :class:`CancelJob`, :class:`PeerNotification`,
#: :class:`Opened`, :class:`Closed`), no other.
Action: TypeAlias = _actions.Action

__all__ = [
    "DEFAULT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "DEFAULT_MAX_TIMEOUT",
    "DEFAULT_MAX_UNREADABLE",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "Action",
    "AsyncContext",
    "AsyncContextBase",
    "Call",
    "CallFinished",
    "CancelJob",
    "ClientSession",
    "ClientView",
    "Closed",
    "ConnectionLost",
    "ContextBase",
    "DefaultType",
    "HandleJob",
    "Job",
    "McpError",
    "NeedInput",
    "Opened",
    "PeerNotification",
    "RequestTimeout",
    "Runtime",
    "Send",
    "ServerSession",
    "SessionBase",
    "SyncContextBase",
    "carry_out",
]

# Shown (and cross-referenced) as names of this package, where they are documented.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith(__name__ + "._") and hasattr(
        _obj, "__qualname__"
    ):
        _obj.__module__ = __name__
del _name, _obj
