"""runscenarios --sandbox-port: the HTTP sandbox served on loopback while the runs play, so a
deployed bot's tools (pointed there once) reach the runs this process drives."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn

from lab.web.sandbox_http import sandbox_app

STARTED_WITHIN_S = 10.0


@asynccontextmanager
async def sandbox_served(port: int | None, host: str = "127.0.0.1") -> AsyncIterator[None]:
    """Serve /sandbox/ on host:port for the block (nothing when port is None)."""
    if port is None:
        yield
        return
    config = uvicorn.Config(
        sandbox_app, host=host, port=port, lifespan="off", ws="none", log_level="warning"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(STARTED_WITHIN_S):
            while not server.started:
                if task.done():
                    task.result()  # the bind failed: raise why
                    raise OSError(f"the sandbox did not start on {host}:{port}")
                await asyncio.sleep(0.05)
        yield
    finally:
        server.should_exit = True
        await task
