"""The official SDK's side of the HTTP benchmark (``http_bench.py``).

``_adapters_sdk_server``'s ``MCPServer`` (one ``echo`` tool) served over Streamable HTTP
the way ``MCPServer.run("streamable-http", host=..., port=...)`` does it: its
``streamable_http_app()`` (defaults: SSE answers in the legacy era, sessions, DNS-rebinding
protection for 127.0.0.1) under ``uvicorn.Server``, except that the port is a free one
picked by the kernel and that uvicorn and the root logger log only warnings (no line per
request).

- :func:`running` serves it on the running asyncio loop (the in-process columns);
- ``python _http_sdk_server.py`` serves it until terminated, after printing the port on
  stdout once it listens (the subprocess columns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Final

import uvicorn
from _adapters_sdk_server import server

# ``MCPServer()`` configures the root logger at INFO: httpx would then log a line for every
# request of the SDK's client in this process, and the server one per session.
logging.getLogger().setLevel(logging.WARNING)

__all__ = ["HOST", "running"]

HOST: Final = "127.0.0.1"
PATH: Final = "/mcp"


@contextlib.asynccontextmanager
async def running(startup_timeout: float = 30.0) -> AsyncIterator[tuple[str, asyncio.Task[None]]]:
    """Serve on the running loop at a free port; yields the endpoint's URL and the task
    serving it (done once uvicorn stops: on SIGTERM, or when the context exits)."""
    app = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
    config = uvicorn.Config(app, host=HOST, port=0, log_level="warning", access_log=False)
    uv = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    task = loop.create_task(uv.serve())
    try:
        deadline = loop.time() + startup_timeout
        while not uv.started:
            if task.done():
                task.result()  # it failed: raise why
                raise RuntimeError("uvicorn stopped before it started")
            if loop.time() > deadline:
                raise TimeoutError(f"uvicorn did not start in {startup_timeout:g} s")
            await asyncio.sleep(0.01)
        port = uv.servers[0].sockets[0].getsockname()[1]
        yield f"http://{HOST}:{port}{PATH}", task
    finally:
        uv.should_exit = True
        done, _ = await asyncio.wait([task], timeout=5.0)
        if not done:
            uv.force_exit = True
            done, _ = await asyncio.wait([task], timeout=5.0)
        if not done:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _main() -> None:
    async with running() as (url, task):
        print(url.rsplit(":", 1)[1].split("/", 1)[0], flush=True)
        await asyncio.wait([task])  # uvicorn stops on SIGTERM (then re-raises it)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main())
