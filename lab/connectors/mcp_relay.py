"""Scaled out, an MCP tool call may reach a web process that does not drive its run: it is
relayed over the channel layer to the one that does, and the answer comes back the same way.

The driving process joins the run's group `mcp.<run_id>` when its session opens the run's
ToolBox; a call the answering process cannot reach goes to that group with this process's
inbox as the reply channel. Only a process holding the ToolBox answers: one that no longer
does leaves the group quietly, and one whose call raised says nothing (a fenced-out session
must not out-answer the live one), so the asker may time out and is told so. A call that timed
out may still have been carried out; the log says what was, and an identical retry replays
the same receipt. On the in-memory layer every run lives in this one process, so nothing is
relayed.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer

from lab.connectors.interface import ToolResult
from lab.connectors.mcp_runs import LIVE, McpRuns

logger = logging.getLogger(__name__)


def run_group(run_id: str) -> str:
    return f"mcp.{run_id}"


class _Inbox:
    """This process's channel on one event loop: calls to answer and replies awaited."""

    def __init__(self, relay: McpRelay) -> None:
        self.relay = relay
        self.loop = asyncio.get_running_loop()
        self.pending: dict[str, asyncio.Future[ToolResult]] = {}
        self.answering: set[asyncio.Task[None]] = set()
        self.opened: asyncio.Future[str] = asyncio.ensure_future(relay.layer.new_channel())
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        channel = await self.opened
        while True:
            try:
                message = await self.relay.layer.receive(channel)
            except Exception:
                # A lost layer connection must not end the inbox: its askers time out.
                logger.exception("MCP relay: receive failed")
                await asyncio.sleep(1)
                continue
            if message.get("type") == "mcp.reply":
                self._resolve(message)
            elif message.get("type") == "mcp.call":
                task = asyncio.ensure_future(self.relay.answer(channel, message))
                self.answering.add(task)
                task.add_done_callback(self.answering.discard)

    def _resolve(self, message: dict[str, Any]) -> None:
        waiting = self.pending.get(str(message.get("request_id")))
        # A late answer to a call already answered or given up on is dropped.
        if waiting is not None and not waiting.done():
            waiting.set_result(
                ToolResult(
                    call_id=str(message["call_id"]),
                    kind=message["kind"],
                    content=dict(message.get("content") or {}),
                    reason=str(message.get("reason") or ""),
                    wire=message["wire"] if isinstance(message.get("wire"), dict) else None,
                )
            )


class McpRelay:
    def __init__(self, runs: McpRuns = LIVE, *, layer: Any = None, shared: bool | None = None):
        """shared: relay even on the in-memory layer (tests stand two processes in one)."""
        self.runs = runs
        self._layer = layer
        self._shared = shared
        self._inbox_now: _Inbox | None = None

    @property
    def layer(self) -> Any:
        return self._layer if self._layer is not None else get_channel_layer()

    @property
    def shared(self) -> bool:
        if self._shared is not None:
            return self._shared
        return self.layer is not None and not isinstance(self.layer, InMemoryChannelLayer)

    def _inbox(self) -> _Inbox:
        inbox = self._inbox_now
        if inbox is None or inbox.loop is not asyncio.get_running_loop() or inbox.reader.done():
            inbox = self._inbox_now = _Inbox(self)
        return inbox

    async def join(self, run_id: str) -> None:
        """This process holds the run's ToolBox: calls landing elsewhere come here."""
        if not self.shared:
            return
        try:
            channel = await asyncio.shield(self._inbox().opened)
            await self.layer.group_add(run_group(run_id), channel)
        except Exception:
            # The run goes on; only its MCP calls landing on other processes go unanswered.
            logger.exception("MCP relay: could not join run %s's group", run_id)

    async def forward(
        self, run_id: str, name: str, arguments: dict[str, Any], *, timeout_s: float
    ) -> ToolResult | None:
        """The answer of the process holding the run's ToolBox, or None if none came in time."""
        if not self.shared:
            return None
        inbox = self._inbox()
        channel = await asyncio.shield(inbox.opened)
        request_id = uuid.uuid4().hex
        answered = inbox.pending[request_id] = asyncio.get_running_loop().create_future()
        call = {"run_id": run_id, "name": name, "arguments": arguments}
        try:
            await self.layer.group_send(
                run_group(run_id),
                {"type": "mcp.call", "request_id": request_id, "reply_to": channel, **call},
            )
            return await asyncio.wait_for(answered, timeout_s)
        except TimeoutError:
            return None
        finally:
            inbox.pending.pop(request_id, None)

    async def answer(self, channel: str, message: dict[str, Any]) -> None:
        """Carry out a relayed call if this process holds the run's ToolBox."""
        run_id = str(message.get("run_id"))
        arguments = message.get("arguments")
        try:
            result = await self.runs.call(
                run_id,
                str(message.get("name")),
                dict(arguments) if isinstance(arguments, dict) else {},
            )
        except Exception:
            logger.exception("MCP relay: a call on run %s failed", run_id)
            return
        if result is None:
            await self.layer.group_discard(run_group(run_id), channel)
            return
        await self.layer.send(
            str(message["reply_to"]),
            {
                "type": "mcp.reply",
                "request_id": message.get("request_id"),
                "call_id": result.call_id,
                "kind": result.kind,
                "content": result.content,
                "reason": result.reason,
                "wire": result.wire,
            },
        )

    async def aclose(self) -> None:
        inbox, self._inbox_now = self._inbox_now, None
        if inbox is not None and inbox.loop is asyncio.get_running_loop():
            tasks = [inbox.reader, *inbox.answering]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


RELAY = McpRelay()
