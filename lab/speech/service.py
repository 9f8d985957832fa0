"""Recognition and synthesis for the voice channel, run in this process or on speech workers.

The backend is chosen once per process: in-process (one-thread executors, the default and
always with the in-memory channel layer) or the workers of lab/speech/worker.py.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from lab.speech import asr, tts
from lab.speech.protocol import AsrOptions

ASR_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asr")
TTS_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tts")


@functools.lru_cache(maxsize=512)
def sentence_pcm(text: str) -> bytes:
    """Synthesized speech of `text`; cached, since the agent repeats its fixed phrases."""
    return tts.synthesize(text)


class SpeechBackend(Protocol):
    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript: ...

    async def synthesize(self, text: str) -> bytes: ...

    async def warm(self) -> None: ...


class InProcess:
    """The models of this process, each behind its own one-thread executor."""

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        call = functools.partial(asr.transcribe, pcm, **options.keywords())
        return await asyncio.get_running_loop().run_in_executor(ASR_EXECUTOR, call)

    async def synthesize(self, text: str) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(TTS_EXECUTOR, sentence_pcm, text)

    async def warm(self) -> None:
        """Load both models (about a second each) before the first caller waits on them."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(ASR_EXECUTOR, asr.load_model)
        await loop.run_in_executor(TTS_EXECUTOR, tts.load_voice)


@functools.cache
def backend() -> SpeechBackend:
    """This process's backend, chosen at its first use."""
    return InProcess()


async def recognize(pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
    """Transcribe one endpointed segment of 16 kHz mono PCM16."""
    return await backend().recognize(pcm, AsrOptions(prompt_free=prompt_free))


async def synthesize(text: str) -> bytes:
    """`text` as 16 kHz mono PCM16."""
    return await backend().synthesize(text)


async def warm() -> None:
    """Have the models ready before the first caller waits on them."""
    await backend().warm()
