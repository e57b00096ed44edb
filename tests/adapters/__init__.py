"""The adapter contract suite: the same scenarios through the blocking, asyncio and trio
runtimes, asserting the outcomes ``/tmp/coord/POLICY.md`` decides (issue 18, item 7)."""
