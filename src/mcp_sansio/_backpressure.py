"""What the stdio and socket adapters (blocking, asyncio, trio) share about writing to a
peer: the bound on what is buffered for it and the deadline of what waits to be written.
``docs/errors.rst`` ("Writing to a peer that does not read") describes the behaviour.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping
from typing import Any, Final

from .session import ClientSession, SessionBase

#: The bound, in bytes, on what an adapter keeps buffered for writing to one peer (1 MiB).
#: Past it, the adapter stops reading from that peer (so that the peer's requests stop
#: producing answers) until what is buffered is down to half of it.
DEFAULT_MAX_WRITE_BUFFER: Final = 1 << 20

#: How long, in seconds, bytes may wait to be written while the peer takes none of them,
#: before the connection is closed as broken (:class:`~mcp_sansio.session.ConnectionLost`).
DEFAULT_WRITE_TIMEOUT: Final = 30.0


def write_options(options: MutableMapping[str, Any]) -> tuple[int, float | None]:
    """Take ``max_write_buffer`` and ``write_timeout`` out of an adapter's keywords (the
    rest go to the session), with their defaults; raise ``ValueError`` for bad values."""
    limit = options.pop("max_write_buffer", DEFAULT_MAX_WRITE_BUFFER)
    timeout = options.pop("write_timeout", DEFAULT_WRITE_TIMEOUT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_write_buffer must be a positive number of bytes, not {limit!r}")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise ValueError(f"write_timeout must be seconds or None, not {timeout!r}")
        if not timeout > 0 or math.isnan(timeout):
            raise ValueError(f"write_timeout must be more than 0 s, not {timeout!r}")
        timeout = float(timeout)
    return limit, timeout


def stalled(session: SessionBase, unwritten: int, seconds: float) -> str:
    """The message of the ``ConnectionLost`` of a connection closed because the peer took
    none of ``unwritten`` bytes for ``seconds``: every call in flight fails with it."""
    peer = "server" if isinstance(session, ClientSession) else "client"
    return (
        f"the {peer} stopped reading: {unwritten} bytes unwritten for {seconds:g} s"
        " (write_timeout); the connection is closed as broken"
    )
