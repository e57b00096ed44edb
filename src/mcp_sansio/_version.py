"""The version of mcp-sansio."""

__version__ = "0.1.0.dev0"
