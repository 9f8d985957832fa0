"""End-of-turn probability from pipecat's smart-turn v3.2 ONNX model (BSD-2-Clause).

The model file is read from the installed `pipecat-ai` wheel; pipecat itself is never imported.
Input: Whisper log-mel features (80 x 800) of the last 8 s of 16 kHz audio, zero-padded in front.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path

import numpy as np
import onnxruntime
from faster_whisper.feature_extractor import FeatureExtractor

from lab.audio.bundled import wheel_file
from lab.audio.frames import SAMPLE_RATE

MODEL_NAME = "smart-turn-v3.2-cpu"
LICENSE = "BSD-2-Clause"
PACKAGE = "pipecat-ai"
_MODEL_FILE = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
_SECONDS = 8
_SAMPLES = SAMPLE_RATE * _SECONDS
_PCM16_SCALE = 32768.0
_load_lock = threading.Lock()


class TurnModelMissing(RuntimeError):
    """The wheel that ships the model is not installed."""


def model_path() -> Path:
    """The ONNX file inside the installed pipecat-ai distribution."""
    return wheel_file(PACKAGE, _MODEL_FILE, TurnModelMissing)


def available() -> bool:
    try:
        model_path()
    except TurnModelMissing:
        return False
    return True


@functools.cache
def model_sha256() -> str:
    with model_path().open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


@functools.cache
def _session() -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # One thread: recognition runs beside it on the other core.
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    return onnxruntime.InferenceSession(str(model_path()), sess_options=options)


@functools.cache
def _features() -> FeatureExtractor:
    return FeatureExtractor(feature_size=80, chunk_length=_SECONDS)


def load() -> None:
    """Load the model once (the lock stops two first callers loading it twice)."""
    with _load_lock:
        _session()
        _features()


def features(pcm: bytes) -> np.ndarray:
    """The model's input, shape (1, 80, 800), for 16 kHz mono PCM16."""
    audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32)[-_SAMPLES:] / _PCM16_SCALE
    audio = np.pad(audio, (_SAMPLES - audio.size, 0))
    # Zero-mean unit-variance over the padded window, as the model was trained.
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    log_mel = _features()(audio, padding=0)
    return np.asarray(log_mel, dtype=np.float32)[np.newaxis, :, :]


def probability(pcm: bytes) -> float:
    """P(the speaker has finished their turn) for the audio up to now; blocks, run off the loop."""
    load()
    outputs = _session().run(None, {"input_features": features(pcm)})
    return float(np.asarray(outputs[0]).reshape(-1)[0])
