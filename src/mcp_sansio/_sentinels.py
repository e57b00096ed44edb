"""Singleton markers: ``NEED_DATA`` (no event buffered yet) and ``OMITTED`` (absent on the wire)."""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = ["NEED_DATA", "OMITTED", "NeedData", "Omitted"]


class NeedData(enum.Enum):
    """The type of :data:`NEED_DATA`; a one-member enum so that ``is`` narrows under mypy."""

    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"


class Omitted(enum.Enum):
    """The type of :data:`OMITTED`: the value of an optional field that is absent on the wire.

    Absent and ``null`` are different things in MCP (``null`` is a legal JSON value for
    fields of type "any"), so absence gets its own marker. It is falsy, so ``if x.title:``
    reads naturally; test ``x.title is OMITTED`` where the difference matters.
    """

    OMITTED = "OMITTED"

    def __repr__(self) -> str:
        return "OMITTED"

    def __bool__(self) -> Literal[False]:
        return False


#: Returned by :meth:`Connection.next_event` when more bytes are needed.
NEED_DATA: Final = NeedData.NEED_DATA

#: The value of an optional field (or of ``ErrorResponse.data``) that is absent on the wire.
OMITTED: Final = Omitted.OMITTED
