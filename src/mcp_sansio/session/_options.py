"""What every runtime's ``Client.connect_http`` does with its keywords before any I/O: the
transport's keywords taken out of the rest (which go to the ``Client``), and the one error
for a missing ``h11``. Sans-IO: no runtime imports here."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["h11_missing", "take_options"]


def h11_missing() -> ImportError:
    """The error of ``connect_http`` when ``h11`` (the ``http`` extra) is not installed."""
    return ImportError(
        "connect_http needs h11, the http extra: pip install 'mcp-sansio[http]'"
        " (from a checkout: pip install '.[http]')"
    )


def take_options(options: MutableMapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """Take the keywords ``names`` out of ``options`` (those given), leaving the others."""
    return {name: options.pop(name) for name in names if name in options}
