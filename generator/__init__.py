"""The generator of ``mcp_sansio.types`` and ``mcp_sansio._required_params`` (see
``gen_types.py``, its command line)."""
