from __future__ import annotations

import numpy as np
import pytest

from lab.speech import smart_turn
from lab.speech.service import sentence_pcm

pytestmark = pytest.mark.models

PAUSE = bytes(32 * 200)  # the 200 ms candidate silence the model is asked after
LINE = "I want a refund on order number 4512 for twenty dollars."


def test_the_model_comes_from_the_pipecat_wheel_with_its_hash() -> None:
    assert smart_turn.model_path().name == "smart-turn-v3.2-cpu.onnx"
    assert len(smart_turn.model_sha256()) == 64
    assert smart_turn.LICENSE == "BSD-2-Clause"


def test_the_features_are_whisper_log_mels_of_the_last_eight_seconds() -> None:
    long = sentence_pcm(LINE) * 4
    features = smart_turn.features(long)
    assert features.shape == (1, 80, 800) and features.dtype == np.float32
    # Whisper's scaling keeps 80 dB of range: 2.0 after its (log10 + 4) / 4.
    assert features.max() - features.min() <= 2.0 + 1e-6
    eight_seconds = 16000 * 8 * 2
    assert np.array_equal(features, smart_turn.features(long[-eight_seconds:]))


def test_a_finished_sentence_scores_complete_and_one_cut_midway_does_not() -> None:
    pcm = sentence_pcm(LINE)
    cut = pcm[: len(pcm) // 4 * 2]
    finished = smart_turn.probability(pcm + PAUSE)
    midway = smart_turn.probability(cut + PAUSE)
    assert finished > 0.5 > midway
