"""The adapter contract suite: the same scenarios through the blocking, asyncio and trio
runtimes, asserting the outcomes the one runtime policy decides (issue 18, items 1 and 7;
docs/policy.rst: the tests' docstrings name its sections)."""
