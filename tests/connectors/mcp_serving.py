"""The whole lab served on a loopback port in the test's own event loop, and the SDK's own MCP
client pointed at a run's URL.

In-process, because a run's ToolBox is a live object of the session driving it: the session and
the server must share a process for calls to reach it (lab/connectors/mcp_runs.py). uvicorn serves
the same ASGI application daphne serves (daphne's Twisted reactor cannot share the test's loop);
tests/connectors/test_mcp_daphne.py checks the endpoint under daphne itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
import uvicorn
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from lab.asgi import application
from lab.web.mcp_http import MCP_ENDPOINT, McpEndpoint


@contextlib.asynccontextmanager
async def lab_served(
    app: Any = application, endpoint: McpEndpoint = MCP_ENDPOINT
) -> AsyncIterator[str]:
    """The lab's ASGI app (or another with its own MCP endpoint) on a free loopback port; its
    base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # Listening before serving: connections wait in the backlog until uvicorn accepts them.
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await endpoint.aclose()
        server.should_exit = True
        await serving
        sock.close()


def mcp_url(base: str, run_id: str) -> str:
    return f"{base}/mcp/runs/{run_id}/"


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result's one content block (the lab sends only text)."""
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@contextlib.asynccontextmanager
async def mcp_session(
    url: str, token: str, *, era: str = "handshake"
) -> AsyncIterator[ClientSession]:
    """An SDK client session on the run's URL with the run's bearer token: opened with the
    initialize handshake (2025-11-25, what today's framework clients speak) or with the
    stateless era's server/discover (2026-07-28)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        if era == "handshake":
            await session.initialize()
        else:
            await session.discover()
        yield session
