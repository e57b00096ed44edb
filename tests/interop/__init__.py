"""Interop tests: our clients and servers against real MCP peers (see ``conftest.py``)."""
