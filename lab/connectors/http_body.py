"""An HTTP response's body read under the caps of lab.connectors.bounded, and the deadline one
request spends only while it waits on the server (the Chat Completions connector's reading)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx

from lab.connectors.bounded import MAX_ERROR_BYTES, MAX_REPLY_BYTES, Budget, LineSplitter


class RequestBudget:
    """Seconds left for one request, spent only while waiting on the server."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    @contextlib.asynccontextmanager
    async def wait(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout(max(self.left, 0.0)):
                yield
        finally:
            self.left -= loop.time() - started


class BoundedBody:
    """One response's body, read under the caps of lab.connectors.bounded."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.received = 0

    async def _chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self.response.aiter_bytes():
            self.received += len(chunk)
            yield chunk

    async def whole(self) -> bytes:
        body, cap = bytearray(), Budget(MAX_REPLY_BYTES, "the reply's body")
        async for chunk in self._chunks():
            cap.take(len(chunk))
            body += chunk
        return bytes(body)

    async def excerpt(self) -> bytes:
        """The start of an error body; the rest is not read (it says nothing more)."""
        body = bytearray()
        async for chunk in self._chunks():
            body += chunk
            if len(body) >= MAX_ERROR_BYTES:
                break
        return bytes(body[:MAX_ERROR_BYTES])

    async def lines(self) -> AsyncIterator[str]:
        splitter = LineSplitter()
        async for chunk in self._chunks():
            for line in splitter.feed(chunk):
                yield line
        for line in splitter.finish():
            yield line
