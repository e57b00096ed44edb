"""Callback policy shared by every runtime (docs/policy.rst, "Callback errors"): what happens
when the application's own callback raises is decided here, once."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

__all__ = ["notify_application", "notify_application_async", "log_handler_error"]

_log: Final = logging.getLogger("mcp_sansio.session")


def notify_application(callback: Callable[[Any], Any], note: Any) -> Any:
    """Call ``on_notification(note)``: what it raises (an :class:`Exception`) is logged once
    at ERROR with its traceback, and the session goes on; nothing is sent to the peer.
    Returns what the callback returned (a coroutine, for an async runtime to run)."""
    try:
        return callback(note)
    except Exception:
        _log.exception("on_notification raised for %s", getattr(note, "method", note))
        return None


async def notify_application_async(callback: Callable[[Any], Awaitable[Any]], note: Any) -> None:
    """:func:`notify_application` for a coroutine function: awaited, with the same policy."""
    try:
        await callback(note)
    except Exception:
        _log.exception("on_notification raised for %s", getattr(note, "method", note))


def log_handler_error(method: str, error: BaseException) -> None:
    """A handler of the peer's request raised ``error`` (not an ``McpError``, ``ToolError``
    or ``NeedInput``): logged at ERROR with its traceback; the peer gets an error without it."""
    _log.error("the handler of %s raised %s", method, type(error).__name__, exc_info=error)
