"""Stand-in phone bots on loopback, each speaking a phone wire's bot side (Twilio Media Streams'
or Telnyx media streaming's: their caller media share a shape) one way."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection, serve

from lab.audio.g711 import ulaw_decode, ulaw_encode

Behaviour = Callable[[ServerConnection, list[dict[str, Any]]], Awaitable[None]]


def tone_8k(seconds: float, level: int = 8000) -> np.ndarray:
    t = np.arange(int(8000 * seconds)) / 8000
    return (np.sin(2 * np.pi * 440 * t) * level).astype(np.int16)


def media(stream_sid: str, samples: np.ndarray) -> str:
    payload = base64.b64encode(ulaw_encode(samples).tobytes()).decode()
    return json.dumps({"event": "media", "streamSid": stream_sid, "media": {"payload": payload}})


async def opening(ws: ServerConnection, heard: list[dict[str, Any]]) -> str:
    """connected, then start; the stream's id (Twilio's streamSid, Telnyx's stream_id)."""
    for _ in range(2):
        heard.append(json.loads(await ws.recv()))
    start = heard[1]
    return str(start["streamSid"] if "streamSid" in start else start["stream_id"])


async def caller_turn(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Media until the caller has spoken and 200 ms of silence followed."""
    spoke, quiet = False, 0
    while not (spoke and quiet >= 10):
        message = json.loads(await ws.recv())
        heard.append(message)
        if message["event"] != "media":
            continue
        codes = np.frombuffer(base64.b64decode(message["media"]["payload"]), dtype=np.uint8)
        loud = int(np.abs(ulaw_decode(codes).astype(np.int32)).max()) > 1000
        spoke, quiet = spoke or loud, 0 if loud else quiet + 1


@asynccontextmanager
async def bot(behaviour: Behaviour) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """A bot serving behaviour on a free port: its ws URL and what it heard."""
    heard: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        await behaviour(ws, heard)
        # Hold the line until the lab hangs up, as a bot does.
        async for message in ws:
            heard.append(json.loads(message))

    async with serve(handler, "127.0.0.1", 0, max_size=1 << 22) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/media", heard
