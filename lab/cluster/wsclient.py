"""A minimal RFC 6455 client over asyncio streams, for tests and benchmarks against real servers."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct

TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class WebSocketClosed(Exception):
    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed with {code}")
        self.code = code


class WebSocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, port: int, path: str, *, headers: dict[str, str]) -> WebSocket:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        status = await reader.readuntil(b"\r\n\r\n")
        if not status.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(status.decode(errors="replace"))
        return cls(reader, writer)

    async def send_text(self, text: str) -> None:
        await self._send(TEXT, text.encode())

    async def send_bytes(self, data: bytes) -> None:
        await self._send(BINARY, data)

    async def _send(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        # One big-integer XOR: a byte loop would cost a voice client a core at 50 frames/s.
        key = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload) ^ int.from_bytes(key)).to_bytes(size)
        self.writer.write(head + mask + masked)
        await self.writer.drain()

    async def receive_text(self) -> str:
        """The next text message (binary ones skipped); raises WebSocketClosed on close."""
        while True:
            message = await self.receive()
            if isinstance(message, str):
                return message

    async def receive(self) -> str | bytes:
        """The next text or binary message; raises WebSocketClosed when the server closes."""
        while True:
            opcode, payload = await self._message()
            if opcode == TEXT:
                return payload.decode()
            if opcode == BINARY:
                return payload
            if opcode == CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise WebSocketClosed(code)
            if opcode == PING:
                await self._send(PONG, payload)

    async def _message(self) -> tuple[int, bytes]:
        opcode, payload, final = await self._frame()
        while not final:
            _, more, final = await self._frame()
            payload += more
        return opcode, payload

    async def _frame(self) -> tuple[int, bytes, bool]:
        first, second = await self.reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        return first & 0x0F, await self.reader.readexactly(size), bool(first & 0x80)

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._send(CLOSE, struct.pack("!H", 1000))
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()
