"""A Chat Completions server on loopback for any reference agent, in plain asyncio HTTP/1.1.

It serves POST /v1/chat/completions (whole or streamed) and GET /v1/models, keep-alive; the
agent answers each request from its own body (`ChatAgent.reply`), so nothing is kept between
requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import json
import signal
import time
from typing import Any, Protocol

from pydantic import ValidationError

from lab.reference_agents.messages import Reply
from lab.reference_agents.wire import ChatRequest, chunks, completion, error, models

MAX_BODY = 1 << 20
MAX_HEADERS = 100
READ_TIMEOUT_S = 30.0
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
_REASONS |= {408: "Request Timeout", 413: "Payload Too Large", 431: "Headers Too Large"}


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ChatAgent(Protocol):
    """What the server answers with: a model name and the next assistant message."""

    @property
    def model(self) -> str: ...

    def reply(self, request: ChatRequest) -> Reply: ...


class Server:
    """Chat Completions over HTTP/1.1 for one agent; every request is answered from its body."""

    def __init__(self, agent: ChatAgent) -> None:
        self.agent = agent
        self.ids = itertools.count(1)
        # Each open connection's handler and its writer, so stopping can end them itself.
        self.open: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.open[task] = writer
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if task is not None:
                self.open.pop(task, None)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def aclose(self) -> None:
        """End every open connection and wait for its handler: a handler left for asyncio.run
        to cancel makes Python 3.11's stream callback print a CancelledError traceback."""
        for writer in self.open.values():
            writer.transport.abort()  # a waiting read sees the end; a write, a reset
        await asyncio.gather(*self.open, return_exceptions=True)

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection should close."""
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                request = await _read_request(reader)
        except TimeoutError:
            await _send_json(writer, 408, error("the request was not sent in time"), close=True)
            return False
        except _BadRequest as bad:
            await _send_json(writer, bad.status, error(str(bad)), close=True)
            return False
        if request is None:
            return False
        method, path, body = request
        path = path.split("?", 1)[0].rstrip("/")
        if path == "/v1/models":
            if method != "GET":
                await _send_json(writer, 405, error("use GET"))
            else:
                await _send_json(writer, 200, models(self.agent.model, int(time.time())))
        elif path == "/v1/chat/completions":
            if method != "POST":
                await _send_json(writer, 405, error("use POST"))
            else:
                await self._chat(writer, body)
        else:
            await _send_json(writer, 404, error(f"no route {path}", "not_found_error"))
        return True

    async def _chat(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        try:
            request = ChatRequest.model_validate_json(body)
        except ValidationError as invalid:
            first = invalid.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            await _send_json(writer, 400, error(f"{where}: {first['msg']}"))
            return
        reply = self.agent.reply(request)
        ident, created, model = f"chatcmpl-{next(self.ids)}", int(time.time()), self.agent.model
        if not request.stream:
            answer = completion(reply, model=model, completion_id=ident, created=created)
            await _send_json(writer, 200, answer)
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        for chunk in chunks(reply, model=model, completion_id=ident, created=created):
            _write_chunk(writer, f"data: {json.dumps(chunk)}\n\n".encode())
            await writer.drain()
        _write_chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(400, "not an HTTP/1.1 request line")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _BadRequest(431, "too many headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest(400, "send the body with a Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError as bad:
        raise _BadRequest(400, "Content-Length is not a number") from bad
    if not 0 <= length <= MAX_BODY:
        raise _BadRequest(413, f"bodies are limited to {MAX_BODY} bytes")
    body = await reader.readexactly(length) if length else b""
    return parts[0].upper(), parts[1], body


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: dict[str, Any], *, close: bool = False
) -> None:
    data = json.dumps(body).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()


def _write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def loopback(host: str) -> str:
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise SystemExit(f"--host {host}: the reference agent listens on loopback addresses only")


async def serve(agent: ChatAgent, host: str, port: int) -> None:
    """Listen on host:port, say where, and serve until SIGINT or SIGTERM."""
    server = Server(agent)
    listener = await asyncio.start_server(server.connection, host, port)
    bound = listener.sockets[0].getsockname()
    print(f"listening on http://{host}:{bound[1]}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with listener:
        await stop.wait()
        listener.close()
        await server.aclose()
