"""The pipecat connector's audio mode: the caller's audio paced to the bot, the bot's voice back.

As pipecat's own harness does (`pipecat/evals/client_transport.py`), the caller's side is a live
stream: one 40 ms `raw-audio` frame a tick, the caller's turn when there is one and silence in
between, which the bot's VAD and turn strategy need to hear a turn end. The bot's speech comes
back as `eval-bot-audio` chunks (base64 PCM16 at its output rate) ahead of the `bot-tts-text` of
the sentence they voice, so each sentence reaches the lab with its own audio, at 16 kHz.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from lab.speech.resample import resample

RATE = 16000
FRAME_S = 0.04
FRAME_BYTES = int(RATE * FRAME_S) * 2
BYTES_PER_SECOND = RATE * 2
_PCM16_MAX = 32767

Send = Callable[[str], Awaitable[None]]
Message = Callable[[str, dict[str, Any], str], str]


class AudioFeed:
    """The caller's side of a live call: queued turns, else silence, one frame a tick."""

    def __init__(self, send: Send, message: Message) -> None:
        self.send = send
        self.message = message
        self.pending = bytearray()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self._run())

    def queue(self, pcm: bytes) -> None:
        """A caller turn (16 kHz PCM16 mono), sent after whatever is still queued."""
        self.pending.extend(pcm)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        silence = bytes(FRAME_BYTES)
        next_send, sent = loop.time(), 0
        # A closed socket ends the stream; the connector's reader reports the close.
        with contextlib.suppress(Exception):
            while True:
                pcm = bytes(self.pending[:FRAME_BYTES])
                del self.pending[:FRAME_BYTES]
                frame = pcm + silence[len(pcm) :]
                data = {
                    "base64Audio": base64.b64encode(frame).decode("ascii"),
                    "sampleRate": RATE,
                    "numChannels": 1,
                }
                # RTVI requires every client message to carry an id.
                sent += 1
                await self.send(self.message("raw-audio", data, f"audio-{sent}"))
                # Behind schedule (a busy machine), the next tick counts from now: a burst of
                # catch-up frames would compress the caller's speech.
                sleep_s = max(0.0, next_send - loop.time())
                await asyncio.sleep(sleep_s)
                next_send = loop.time() + FRAME_S if sleep_s == 0 else next_send + FRAME_S


class BotVoice:
    """The bot's audio since its last spoken sentence, kept at the rate it came in."""

    def __init__(self) -> None:
        self.rate = RATE
        self.pcm = bytearray()
        self.received_ms = 0

    def take(self, data: dict[str, Any]) -> str | None:
        """Keep one `eval-bot-audio` chunk; what is wrong with it, if anything."""
        rate = data.get("sampleRate")
        if not isinstance(rate, int) or not 8000 <= rate <= 48000:
            return f"eval-bot-audio with sample rate {rate!r}"
        try:
            chunk = base64.b64decode(str(data.get("audio", "")), validate=True)
        except (binascii.Error, ValueError):
            return "eval-bot-audio that is not base64"
        if rate != self.rate and self.pcm:
            return f"eval-bot-audio changed its sample rate from {self.rate} to {rate}"
        self.rate = rate
        self.pcm.extend(chunk[: len(chunk) - len(chunk) % 2])
        self.received_ms += len(chunk) * 1000 // (2 * rate)
        return None

    def sentence(self) -> bytes | None:
        """The audio kept so far, at 16 kHz, for the sentence it voiced; None if there is none."""
        pcm, self.pcm = bytes(self.pcm), bytearray()
        if not pcm:
            return None
        if self.rate == RATE:
            return pcm
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        resampled = resample(samples, self.rate, RATE)
        return np.clip(np.round(resampled), -_PCM16_MAX - 1, _PCM16_MAX).astype("<i2").tobytes()
