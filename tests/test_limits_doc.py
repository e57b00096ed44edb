"""docs/limits.rst, the one page of every bound on what a peer controls, states the defaults
the code has: each row's default cell is checked against the constant or the keyword's
default, so that the page cannot drift from the code."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from mcp_sansio import Config, RequestStateSeal, blocking, session
from mcp_sansio import asyncio as mcp_asyncio
from mcp_sansio._framing import DEFAULT_CLIENT_MAX_MESSAGE_SIZE, DEFAULT_MAX_MESSAGE_SIZE
from mcp_sansio._request_state import MAX_SEALED_DEPTH, MAX_SEALED_LENGTH
from mcp_sansio.auth import DPoPProofs, VerdictCache
from mcp_sansio.blocking import _http_client as _blocking_client
from mcp_sansio.blocking import _http_server as _blocking_server
from mcp_sansio.http import _client, _client_tools, _h11client, _server
from mcp_sansio.http._h11server import _MAX_HEAD

PAGE = Path(__file__).resolve().parents[1] / "docs" / "limits.rst"


def _rows() -> dict[str, str]:
    """Each list-table row's first cell → its second (the default), whitespace collapsed."""
    rows: dict[str, str] = {}
    cells: list[str] = []
    for line in PAGE.read_text().splitlines():
        if line.startswith("   * - "):
            if len(cells) >= 2:
                rows[cells[0]] = cells[1]
            cells = [line[7:].strip()]
        elif line.startswith("     - "):
            cells.append(line[7:].strip())
        elif line.startswith("       ") and cells:
            cells[-1] += " " + line.strip()
    if len(cells) >= 2:
        rows[cells[0]] = cells[1]
    return rows


def _size(n: int) -> str:
    """How the page writes a size: in MiB or KiB when whole."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n:,}"


def _default(function: Callable[..., Any], name: str) -> Any:
    return inspect.signature(function).parameters[name].default


def _field(name: str) -> Any:
    return next(f for f in attrs.fields(Config) if f.name == name).default


EXPECTED: dict[str, list[str]] = {
    "``max_message_size``": [
        _size(DEFAULT_MAX_MESSAGE_SIZE),
        _size(DEFAULT_CLIENT_MAX_MESSAGE_SIZE),
    ],
    "``max_in_flight``": [f"{_field('max_in_flight'):,}"],
    "``max_in_flight_bytes``": [_size(_field("max_in_flight_bytes"))],
    "``id_memory``, ``id_memory_bytes``": [
        f"{_field('id_memory'):,}",
        _size(_field("id_memory_bytes")),
    ],
    "``cancelled_memory``": [f"{_field('cancelled_memory'):,}"],
    "``max_subscriptions``, ``max_subscription_bytes``": [
        f"{_field('max_subscriptions'):,}",
        _size(_field("max_subscription_bytes")),
    ],
    "``max_unreadable`` (sessions)": [str(session.DEFAULT_MAX_UNREADABLE)],
    "``max_input_rounds`` (a client session)": [str(session.DEFAULT_MAX_INPUT_ROUNDS)],
    "``RequestStateSeal(max_length=)``": [
        _size(MAX_SEALED_LENGTH),
        str(MAX_SEALED_DEPTH),
        _size(_default(RequestStateSeal, "max_length")),
    ],
    "``max_write_buffer``": [_size(blocking.DEFAULT_MAX_WRITE_BUFFER)],
    "``write_timeout``": [f"{blocking.DEFAULT_WRITE_TIMEOUT:g} s"],
    "``timeout`` (a call), ``max_timeout``": [
        f"{session.DEFAULT_TIMEOUT:g} s",
        f"{session.DEFAULT_MAX_TIMEOUT:g} s",
    ],
    "``shutdown_timeout``": [f"{mcp_asyncio.DEFAULT_SHUTDOWN_TIMEOUT:g} s"],
    "request head (server)": [_size(_MAX_HEAD), f"{_MAX_HEAD:,}"],
    "``max_body_size`` (server)": [_size(_default(_server.HttpServer, "max_body_size"))],
    "``max_sessions``": [f"{_server.DEFAULT_MAX_SESSIONS:,}"],
    "``replay_size``, ``replay_bytes``": [
        str(_server.DEFAULT_REPLAY_SIZE),
        _size(_server.DEFAULT_REPLAY_BYTES),
    ],
    "``idle_timeout``": [f"{_server.DEFAULT_IDLE_TIMEOUT:g} s"],
    "``max_connections`` (the blocking server)": [str(_blocking_server.DEFAULT_MAX_CONNECTIONS)],
    "``max_body_size`` (client)": [_size(_client.DEFAULT_MAX_BODY_SIZE)],
    "response head (client)": [_size(_h11client.MAX_HEAD_SIZE)],
    "``x-mcp-header`` annotations (client)": [
        f"{_client_tools._MAX_TOOLS:,}",
        _size(_client_tools._MAX_TOOL_BYTES),
    ],
    "``max_workers`` (the blocking client)": [str(_blocking_client.DEFAULT_MAX_WORKERS)],
    "``max_follow_ups``, ``max_write_buffer``, ``write_timeout`` (client)": [
        f"{_default(_h11client.ClientBinding, 'max_follow_ups')} follow-ups",
        _size(_default(_h11client.ClientBinding, "max_write_buffer")),
        f"{_default(_h11client.ClientBinding, 'write_timeout'):g} s",
    ],
    "``VerdictCache(max_entries=, max_bytes=)``": [
        f"{_default(VerdictCache, 'max_entries'):,}",
        _size(_default(VerdictCache, "max_bytes")),
    ],
    "``DPoPProofs(max_proofs=)``": [
        f"{_default(DPoPProofs, 'max_proofs'):,}",
        f"{_default(DPoPProofs, 'max_age'):g} s",
        f"{_default(DPoPProofs, 'leeway'):g} s",
    ],
}


def test_every_row_is_checked() -> None:
    rows = _rows()
    rows.pop("option")  # the header rows
    assert set(rows) - {"one JSON value per POST"} == set(EXPECTED)


@pytest.mark.parametrize("option", sorted(EXPECTED))
def test_the_default_is_the_code_s(option: str) -> None:
    cell = _rows()[option]
    for text in EXPECTED[option]:
        assert re.search(rf"(?<![\d,.]){re.escape(text)}(?!\d|,\d)", cell), (option, text, cell)
