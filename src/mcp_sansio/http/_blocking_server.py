"""Transitional alias of ``mcp_sansio.blocking._http_server`` (issue 18 moved each runtime's
HTTP binding under its runtime); removed once nothing imports this path."""

from ..blocking._http_server import DEFAULT_MAX_CONNECTIONS as DEFAULT_MAX_CONNECTIONS
