from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from lab.speech import asr
from lab.speech.tts import synthesize


def test_the_bundled_model_is_named_and_its_files_digested() -> None:
    assert asr.model_name() == "tiny.en"
    assert len(asr.model_files_digest()) == 64
    assert asr.model_files_digest() == asr.model_files_digest.__wrapped__()


@pytest.mark.models
def test_silence_transcribes_to_nothing_despite_the_vocabulary_prompt() -> None:
    transcript = asr.transcribe(b"\0" * 32_000)

    assert transcript.text == ""
    assert transcript.audio_ms == 1_000


@pytest.mark.models
def test_background_noise_transcribes_to_nothing() -> None:
    rng = np.random.default_rng(3)
    noise = (rng.standard_normal(32_000) * 328).astype("<i2").tobytes()

    assert asr.transcribe(noise).text == ""


@pytest.mark.models
def test_the_model_is_loaded_once_per_process() -> None:
    assert asr.load_model() is asr.load_model()


@pytest.mark.models
def test_two_threads_can_share_the_one_model_at_once() -> None:
    clips = [synthesize("Yes, confirm."), synthesize("Actually, make that Thursday afternoon.")]
    alone = [asr.transcribe(clip).text for clip in clips]

    with ThreadPoolExecutor(max_workers=2) as pool:
        together = [t.text for t in pool.map(asr.transcribe, clips)]

    assert together == alone


@pytest.mark.models
def test_a_short_caller_line_is_heard_on_the_short_window_with_the_full_windows_words(
    settings: Any,
) -> None:
    settings.LAB_ASR_WINDOW_MS = 15_000  # another window than the default 10 s
    # Every word of this line leads its runner-up by more than 3 logits on either window.
    pcm = synthesize("Can I get my money back if I cancel?")
    short = asr.transcribe(pcm)
    settings.LAB_ASR_WINDOW_MS = 0
    full = asr.transcribe(pcm)

    assert (short.window_ms, full.window_ms) == (15_000, 30_000)
    assert short.text == full.text == "Can I get my money back if I cancel?"


@pytest.mark.models
@pytest.mark.parametrize("window_ms", [20_000, 15_000])
def test_a_day_that_is_a_near_tie_on_the_short_window_keeps_the_full_windows_words(
    settings: Any, window_ms: int
) -> None:
    # On this machine's int8 encoder the 20 s and 15 s windows heard "to stay" for "Tuesday",
    # with " to" 0.1-0.3 logits ahead; the full window heard "Tuesday", 0.65 ahead.
    pcm = synthesize("I'd like Tuesday morning, please.")
    settings.LAB_ASR_WINDOW_MS = window_ms
    short = asr.transcribe(pcm)
    settings.LAB_ASR_WINDOW_MS = 0

    assert short.text == asr.transcribe(pcm).text


@pytest.mark.models
def test_words_that_loop_on_a_too_short_window_are_heard_again_on_the_full_one(
    settings: Any,
) -> None:
    # Three seconds of window for a one-second line: tiny.en repeats "Yes, book it." to its limit.
    settings.LAB_ASR_WINDOW_MS = 3_000
    transcript = asr.transcribe(synthesize("Yes, book it."))

    assert transcript.window_ms == 30_000
    assert transcript.text == "Yes, book it."


@pytest.mark.models
def test_segments_decoded_in_one_batch_keep_the_words_each_gets_alone(settings) -> None:
    settings.LAB_ASR_WINDOW_MS = 10_000
    clips = [synthesize(text) for text in ("Yes, book it.", "Refund order number 4512.")]
    alone = [asr.transcribe(pcm) for pcm in clips]
    together = asr.transcribe_many(clips)
    assert [t.text for t in together] == [t.text for t in alone]
    assert [t.window_ms for t in together] == [t.window_ms for t in alone]
