"""A caller on loopback, as a browser is one: start a run over HTTP, then type or speak to it.

Shared by the multi-process tests and bench_scale; it speaks only HTTP and WebSocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

from lab.cluster.wsclient import WebSocket, WebSocketClosed
from lab.events.types import EVENT_LIST, Event

FRAME_MS = 20
FRAME_BYTES = 640  # 20 ms of PCM16 at 16 kHz, what the lab's microphone client sends
BYTES_PER_SECOND = 32000
AGENT_AUDIO = 1  # lab.runs.voice's server-to-browser frame kinds
HEADER_BYTES = 9
SILENCE = bytes(FRAME_BYTES)
HTTP_WAIT_S = 120


def _request(
    port: int, method: str, path: str, *, body: str = "", headers: dict[str, str] | None = None
) -> tuple[http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HTTP_WAIT_S)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response, response.read()
    finally:
        connection.close()


def start_run(port: int, scenario: str, channel: str, *, mode: str = "guarded") -> tuple[str, str]:
    """Start a run from the picker as a new browser would: its id and the owner's cookie."""
    response, _ = _request(port, "GET", "/")
    csrf = SimpleCookie(response.getheader("Set-Cookie"))["csrftoken"].value
    form = f"scenario={scenario}&channel={channel}&mode={mode}&csrfmiddlewaretoken={csrf}"
    response, body = _request(
        port,
        "POST",
        "/runs/",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={csrf}",
        },
    )
    if response.status != 302:
        raise RuntimeError(f"starting a run answered {response.status}: {body[:300]!r}")
    session = SimpleCookie(response.getheader("Set-Cookie"))["sessionid"].value
    return response.getheader("Location", "").split("/")[2], f"sessionid={session}"


def run_events(port: int, run_id: str, cookie: str) -> list[Event]:
    response, body = _request(
        port, "GET", f"/runs/{run_id}/events.json", headers={"Cookie": cookie}
    )
    if response.status != 200:
        raise RuntimeError(f"events.json answered {response.status}")
    return EVENT_LIST.validate_python(json.loads(body)["events"])


@dataclass
class Window:
    """One open run page: every fragment and agent audio frame it received, read as they come."""

    socket: WebSocket
    texts: list[str] = field(default_factory=list)
    agent_audio_s: float = 0.0
    # When the agent's audio so far has finished playing, on the loop's clock (real time).
    playback_ends_at: float = 0.0
    closed: int | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, port: int, run_id: str, cookie: str) -> Window:
        origin = f"http://127.0.0.1:{port}"
        socket = await WebSocket.connect(
            port, f"/ws/runs/{run_id}/", headers={"Origin": origin, "Cookie": cookie}
        )
        window = cls(socket)
        window._reader = asyncio.create_task(window._read())
        return window

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                message = await self.socket.receive()
                async with self._changed:
                    if isinstance(message, str):
                        self.texts.append(message)
                    elif message and message[0] == AGENT_AUDIO:
                        seconds = (len(message) - HEADER_BYTES) / BYTES_PER_SECOND
                        self.agent_audio_s += seconds
                        self.playback_ends_at = max(self.playback_ends_at, loop.time()) + seconds
                    self._changed.notify_all()
        except WebSocketClosed as closed:
            self.closed = closed.code
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed = 1006
        async with self._changed:
            self._changed.notify_all()

    async def until(self, needle: str, *, since: int = 0) -> int:
        """Wait for a fragment containing `needle` (from the `since`-th on); returns its index."""
        async with self._changed:
            while True:
                for index in range(since, len(self.texts)):
                    if needle in self.texts[index]:
                        return index
                if self.closed is not None:
                    raise WebSocketClosed(self.closed)
                await self._changed.wait()

    async def until_agent_speaks(self, beyond_s: float = 0.0) -> None:
        """Wait for agent audio past `beyond_s` seconds of it (the first: the voice is set up)."""
        async with self._changed:
            while self.agent_audio_s <= beyond_s:
                if self.closed is not None:
                    raise WebSocketClosed(self.closed)
                await self._changed.wait()

    async def say(self, text: str) -> None:
        await self.socket.send_text(json.dumps({"action": "say", "text": text}))

    async def send(self, message: dict[str, str]) -> None:
        await self.socket.send_text(json.dumps(message))

    async def close(self) -> None:
        await self.socket.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


class Microphone:
    """Streams 20 ms frames at a real microphone's pace: queued speech, silence in between.

    Open it once the agent speaks (Window.until_agent_speaks): frames sent while the server is
    still setting the run up arrive late in one burst, which its real-time guard refuses.
    """

    def __init__(self, window: Window) -> None:
        self.window = window
        self._queue: asyncio.Queue[tuple[bytes, asyncio.Future[float]]] = asyncio.Queue()
        self._task = asyncio.create_task(self._stream())

    async def _stream(self) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while True:
            pcm, done = self._queue.get_nowait() if not self._queue.empty() else (SILENCE, None)
            for start in range(0, len(pcm), FRAME_BYTES):
                frame = pcm[start : start + FRAME_BYTES].ljust(FRAME_BYTES, b"\0")
                await self.window.socket.send_bytes(frame)
                next_at += FRAME_MS / 1000
                await asyncio.sleep(max(0.0, next_at - loop.time()))
            if done is not None:
                done.set_result(loop.time())

    async def speak(self, pcm: bytes) -> float:
        """Send the speech after what is queued; returns when its last frame went out."""
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        await self._queue.put((pcm, done))
        return await done

    async def hear_out(self, quiet_s: float = 0.6) -> None:
        """Wait (sending silence) until the agent's audio so far has played and stayed quiet."""
        loop = asyncio.get_running_loop()
        while True:
            heard = self.window.agent_audio_s
            wait = max(self.window.playback_ends_at - loop.time(), 0.0) + quiet_s
            await asyncio.sleep(wait)
            if self.window.agent_audio_s == heard and loop.time() >= self.window.playback_ends_at:
                return

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await self._task
