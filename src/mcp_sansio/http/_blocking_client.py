"""Transitional alias of ``mcp_sansio.blocking._http_client`` (issue 18 moved each runtime's
HTTP binding under its runtime); removed once nothing imports this path."""

from ..blocking._http_client import DEFAULT_MAX_WORKERS as DEFAULT_MAX_WORKERS
from ..blocking._http_client import HttpStream as HttpStream
