"""What a pipecat bot sends on the eval wire, read off the socket as it comes: parsed RTVI
messages in a bounded inbox, the bytes counted against a turn's limit, a close or garbage
kept as the error every later read raises."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from lab.connectors.bounded import MAX_FRAME_BYTES, Oversize, size
from lab.connectors.rtvi import LABEL

# Messages read off the socket and not yet taken: past it the reader waits, so a bot that
# floods is held back by TCP instead of filling the lab's memory.
_INBOX = 256
_MAX_SETTLES = 10


class Closed(Exception):
    """The bot closed the connection (or it broke)."""


class Garbage(Exception):
    """The bot sent something that is not an RTVI JSON message."""


class BotInbox:
    """The reading half of one connection to a bot."""

    def __init__(self, *, timeout_s: float, max_turn_bytes: int) -> None:
        self.timeout_s = timeout_s
        self.max_turn_bytes = max_turn_bytes
        self.received = 0  # bytes the bot has sent, all told
        self.last_heard = 0.0
        self._queue: asyncio.Queue[dict[str, Any] | Exception] = asyncio.Queue(_INBOX)
        self._reader: asyncio.Task[None] | None = None

    def start(self, ws: ClientConnection) -> None:
        self._reader = asyncio.create_task(self._read(ws))

    def cancel(self) -> None:
        """Stop reading at once (the connection is being dropped)."""
        if self._reader is not None:
            self._reader.cancel()

    async def stop(self) -> None:
        """Stop reading and wait until the reader has stopped."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _read(self, ws: ClientConnection) -> None:
        """Every message the bot sends, parsed, into the inbox; a close or garbage ends it."""
        try:
            async for frame in ws:
                self.received += len(frame)
                if isinstance(frame, bytes):
                    continue  # the eval wire is JSON text; binary frames carry nothing for us
                try:
                    parsed = json.loads(frame)
                except ValueError:
                    await self._queue.put(Garbage(f"the bot sent non-JSON: {frame[:120]!r}"))
                    return
                if not isinstance(parsed, dict) or parsed.get("label") != LABEL:
                    await self._queue.put(
                        Garbage(f"the bot sent a non-RTVI message: {frame[:120]!r}")
                    )
                    return
                self.last_heard = asyncio.get_running_loop().time()
                await self._queue.put(parsed)
            await self._queue.put(Closed(f"code {ws.close_code} {ws.close_reason or ''}".strip()))
        except websockets.ConnectionClosed as error:
            if error.sent is not None and error.sent.code == 1009:
                too_big = f"one message from the bot passed {size(MAX_FRAME_BYTES)}"
                await self._queue.put(Oversize(f"{too_big}; the lab closed the connection"))
            else:
                await self._queue.put(Closed(str(error)))
        except websockets.WebSocketException as error:
            await self._queue.put(Closed(str(error)))

    async def next(self, timeout_s: float | None = None) -> dict[str, Any]:
        item = await asyncio.wait_for(self._queue.get(), timeout=timeout_s or self.timeout_s)
        if isinstance(item, Exception):
            # Seen once is seen for good: a broken connection stays broken for the next turn.
            self._queue.put_nowait(item)
            raise item
        return item

    async def settle(self, settle_s: float) -> None:
        """Wait until the bot has been quiet for settle_s (see pipecat_eval's docstring)."""
        loop = asyncio.get_running_loop()
        # Bounded: a bot that never falls quiet gets the turn anyway, after a few settles.
        for _ in range(_MAX_SETTLES):
            quiet = loop.time() - self.last_heard
            if quiet >= settle_s:
                return
            await asyncio.sleep(settle_s - quiet)

    def drop_stale(self) -> None:
        """What the bot said between turns (a late greeting) is not this turn's reply."""
        kept: list[dict[str, Any] | Exception] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, Exception):
                kept.append(item)
        for item in kept:
            self._queue.put_nowait(item)

    def cap(self) -> int:
        """The byte count at which what the bot sends from now on passes a turn's limit."""
        return self.received + self.max_turn_bytes

    def within(self, cap: int, what: str) -> None:
        if self.received > cap:
            raise Oversize(f"{what} passed {size(self.max_turn_bytes)}; the lab stopped reading")
