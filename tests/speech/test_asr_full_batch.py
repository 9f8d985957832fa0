"""Full-window decodes of several segments in one model call, with decode_full's words."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from benchmarks import corpus
from lab.speech import asr
from lab.speech.tts import synthesize

LINES = (
    "I'd like Tuesday morning, please.",
    "Actually, make that Thursday afternoon.",
    "Refund order number 4512.",
    "Yes.",
    "Can I get my money back if I cancel?",
)


def audio(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


class Calls:
    """Stands in for the model: short decodes say what the test wants, full ones are recorded."""

    def __init__(self, monkeypatch: Any, short: list[str]) -> None:
        self.full: list[int] = []
        self.batches: list[int] = []
        features = type("Model", (), {"feature_extractor": staticmethod(self.features)})
        monkeypatch.setattr(asr, "load_model", lambda: None)
        monkeypatch.setattr(asr, "_model", features)
        monkeypatch.setattr(
            asr, "decode_short_batch", lambda audios, **_: [(t, [9.0]) for t in short]
        )
        monkeypatch.setattr(asr, "decode_full", self.decode_full)
        monkeypatch.setattr(asr, "_decode_full_batch", self.decode_batch)

    @staticmethod
    def features(audio: np.ndarray) -> np.ndarray:
        return np.zeros((80, audio.size // 160 + 1), dtype=np.float32)

    def decode_full(self, audio: np.ndarray, *, prompt_free: bool = False) -> str:
        self.full.append(audio.size)
        return "alone"

    def decode_batch(self, features: list[np.ndarray], *, prompt_free: bool) -> list[str]:
        self.batches.append(len(features))
        return ["batched"] * len(features)


def test_suspect_segments_are_heard_again_on_the_full_window_in_one_call(monkeypatch, settings):
    settings.LAB_ASR_WINDOW_MS = 10_000
    calls = Calls(monkeypatch, short=["Yes. Yes.", "Fine.", "No. No."])
    texts = [t.text for t in asr.transcribe_many([bytes(32_000)] * 3)]
    assert texts == ["batched", "Fine.", "batched"]
    assert (calls.batches, calls.full) == ([2], [])


def test_one_suspect_segment_is_decoded_as_decode_full_decodes_it(monkeypatch, settings):
    settings.LAB_ASR_WINDOW_MS = 10_000
    calls = Calls(monkeypatch, short=["Yes. Yes.", "Fine."])
    texts = [t.text for t in asr.transcribe_many([bytes(32_000)] * 2)]
    assert texts == ["alone", "Fine."]
    assert (calls.batches, calls.full) == ([], [16_000])


def test_a_segment_beyond_one_window_is_left_to_decode_full(monkeypatch, settings):
    settings.LAB_ASR_WINDOW_MS = 10_000
    calls = Calls(monkeypatch, short=[])
    # Both too long for the short window; the second is longer than Whisper's 30 s too.
    texts = [t.text for t in asr.transcribe_many([bytes(20 * 32_000), bytes(31 * 32_000)])]
    assert texts == ["alone", "alone"]
    assert (calls.batches, calls.full) == ([], [20 * 16_000, 31 * 16_000])


@pytest.mark.models
@pytest.mark.parametrize("prompt_free", [False, True])
def test_a_batch_of_full_window_decodes_hears_what_decode_full_hears_alone(prompt_free):
    clips = [synthesize(line) for line in LINES]
    clips += [corpus.clip(line, "noisy").pcm for line in LINES[:2]]
    clips += [bytes(32_000)]  # silence: transcribe() skips it, so must the batch
    audios = [audio(pcm) for pcm in clips]
    alone = [asr.decode_full(a, prompt_free=prompt_free) for a in audios]
    assert asr.decode_full_many(audios, prompt_free=prompt_free) == alone
    assert alone[-1] == "" and all(alone[:-1])
