"""Each run's sandboxed tools over MCP at /mcp/runs/<run_id>/: the SDK's streamable HTTP
transport behind the lab's own bearer-token check.

Every request is checked anew (lab/connectors/mcp_access.py): no or an unknown token is 401,
another run's id is 404, an ended run is 403, each a JSON-RPC error whose message says why. A
request that passes carries its grant into the SDK's server (lab/connectors/mcp_server.py) in the
ASGI scope. The transport runs stateless with JSON replies: no MCP session outlives a request, so
nothing can go on serving a run after its token stops opening it, and no stream is left open.
Only POST is served: a GET would open the transport's standalone event stream, which in
stateless mode carries nothing (no session, so nothing can be sent on it) yet stays open with
pings after the run ends or its token is replaced; the SDK's client opens it only for a session
id, which a stateless server never gives, and takes the 405 the spec allows. The Host header
must be one the lab serves (ALLOWED_HOSTS); the SDK's own Host/Origin check is
off because a browser page cannot send the bearer token across origins without a CORS
preflight, which this endpoint never grants.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from lab.connectors.mcp_access import McpRefused, mcp_access
from lab.connectors.mcp_relay import RELAY
from lab.connectors.mcp_server import GRANT_SCOPE_KEY, McpGrant, mcp_server
from lab.web.security import Receive, Scope, Send, serving_origin

MOUNT = "/mcp/"
RUNS = "/mcp/runs/"
# A tool call is a few hundred bytes; anything near this is not one.
MAX_BODY_BYTES = 64 * 1024
# JSON-RPC's range for server-defined errors: the request was refused before MCP saw it.
REFUSED = -32001


@dataclass
class _Running:
    """The SDK's session manager, run (as its lifespan) by one task on one event loop."""

    manager: StreamableHTTPSessionManager
    loop: asyncio.AbstractEventLoop
    ready: asyncio.Event
    stop: asyncio.Event
    task: asyncio.Task[None]


class McpEndpoint:
    """The ASGI app under MOUNT. daphne sends no lifespan events, so the SDK's manager is
    started on the first request, on the loop that serves it."""

    def __init__(self, server: Server[Any] | None = None) -> None:
        # A relayed call waits as long as the tool may take, and a margin for the hops.
        relay_timeout_s = settings.LAB_TOOL_TIMEOUT_MS / 1000 + 10
        self.server = server or mcp_server(relay=RELAY, relay_timeout_s=relay_timeout_s)
        self._running: _Running | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        run_id = _run_id(scope["path"])
        if run_id is None:
            await _refuse(send, 404, "no_such_endpoint", f"MCP lives at {RUNS}<run id>/")
            return
        if serving_origin(scope) is None:
            await _refuse(send, 400, "bad_host", "this host is not one the lab serves")
            return
        if scope["method"] != "POST":
            await _refuse(
                send,
                405,
                "method_not_allowed",
                "this MCP endpoint is stateless: send each JSON-RPC message as a POST "
                "(it opens no event stream, so none outlives a run or its token)",
            )
            return
        decision = await database_sync_to_async(mcp_access)(token=_bearer(scope), run_id=run_id)
        if isinstance(decision, McpRefused):
            await _refuse(send, decision.status, decision.code, decision.reason)
            return
        grant = McpGrant(run_id=run_id, specs=decision.specs, outside_agent=decision.outside_agent)
        granted = {**scope, GRANT_SCOPE_KEY: grant}
        manager = await self._manager()
        await manager.handle_request(granted, receive, send)

    async def _manager(self) -> StreamableHTTPSessionManager:
        loop = asyncio.get_running_loop()
        running = self._running
        if running is None or running.loop is not loop or running.task.done():
            running = self._start(loop)
        await running.ready.wait()
        return running.manager

    def _start(self, loop: asyncio.AbstractEventLoop) -> _Running:
        manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=True,
            json_response=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=MAX_BODY_BYTES,
        )
        ready, stop = asyncio.Event(), asyncio.Event()

        async def serve() -> None:
            async with manager.run():
                ready.set()
                await stop.wait()

        task = loop.create_task(serve(), name="mcp-session-manager")
        self._running = _Running(manager, loop, ready, stop, task)
        return self._running

    async def aclose(self) -> None:
        """Stop the manager on this loop (tests, which start a loop per test, call it)."""
        running, self._running = self._running, None
        if running is not None and running.loop is asyncio.get_running_loop():
            running.stop.set()
            await running.task


class McpMount:
    """Sends MOUNT's paths to the MCP endpoint and everything else to the lab's app."""

    def __init__(self, app: Callable[..., Awaitable[None]], endpoint: McpEndpoint) -> None:
        self.app = app
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(MOUNT):
            await self.endpoint(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def _run_id(path: str) -> str | None:
    """The run id of /mcp/runs/<uuid>/ (the trailing slash optional), normalized; else None."""
    rest = path.removeprefix(RUNS)
    if rest == path:
        return None
    try:
        return str(uuid.UUID(rest.removesuffix("/")))
    except ValueError:
        return None


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return (token.strip() or None) if scheme.lower() == "bearer" else None
    return None


async def _refuse(send: Send, status: int, kind: str, reason: str) -> None:
    """A JSON-RPC error at the HTTP status: MCP clients show its message to whoever runs them."""
    error = {"code": REFUSED, "message": reason, "data": {"kind": kind, "status": status}}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="lab-mcp"'))
    if status == 405:
        headers.append((b"allow", b"POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


MCP_ENDPOINT = McpEndpoint()
