"""Silero VAD v6 speech probability per 32 ms window, one recurrent state per stream.

The ONNX file ships inside the faster-whisper wheel the lab already installs; nothing is
downloaded. Time is counted in samples of the stream, never a clock.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime

from lab.audio.bundled import wheel_file
from lab.audio.frames import SAMPLE_RATE
from lab.audio.loudness import VOICED_DBFS

MODEL_NAME = "silero-vad-v6"
PACKAGE = "faster-whisper"
_MODEL_FILE = "faster_whisper/assets/silero_vad_v6.onnx"
WINDOW_SAMPLES = 512
WINDOW_MS = WINDOW_SAMPLES * 1000 // SAMPLE_RATE
# The model reads each window with the 64 samples before it, as it was exported.
_CONTEXT = 64
_PCM16_SCALE = 32768.0
# Speech from SPEECH_AT on, silence again below SILENCE_BELOW (Silero's own 0.5 / 0.35).
SPEECH_AT = 0.5
SILENCE_BELOW = 0.35
# How far before the end of Silero's last speech window the last loud sample is looked for:
# on piper's lines its speech windows ran on 30-95 ms past the last voiced sample.
_LOOK_BACK_SAMPLES = 8 * WINDOW_SAMPLES
_load_lock = threading.Lock()


class VadModelMissing(RuntimeError):
    """The wheel that ships the model is not installed."""


def model_path() -> Path:
    """The ONNX file inside the installed faster-whisper distribution."""
    return wheel_file(PACKAGE, _MODEL_FILE, VadModelMissing)


@functools.cache
def _session() -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # One thread: recognition and the turn model share the other cores.
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    return onnxruntime.InferenceSession(
        str(model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )


def load() -> None:
    """Load the model once (the lock stops two first callers loading it twice)."""
    with _load_lock:
        _session()


class SileroStream:
    """One stream's classifier: 20 ms frames in, a verdict per frame from the latest window."""

    def __init__(self) -> None:
        load()
        self._session = _session()
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(_CONTEXT, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)
        self.samples = 0
        self.probability = 0.0
        self.speech = False
        # Stream sample just after the last window judged speech (0: none yet), and the audio
        # just before it, where the speech's last loud sample is looked for.
        self.speech_end_sample = 0
        self._recent = np.zeros(0, dtype=np.float32)
        self._speech_tail = np.zeros(0, dtype=np.float32)

    def push(self, pcm: bytes) -> bool:
        """Add one frame of PCM16; True while the latest window is speech (with hysteresis)."""
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / _PCM16_SCALE
        self._pending = np.concatenate([self._pending, audio])
        self.samples += audio.size
        while self._pending.size >= WINDOW_SAMPLES:
            window, self._pending = (
                self._pending[:WINDOW_SAMPLES],
                self._pending[WINDOW_SAMPLES:],
            )
            self._judge(window)
        return self.speech

    def _judge(self, window: npt.NDArray[np.float32]) -> None:
        batch = np.concatenate([self._context, window])[np.newaxis, :]
        probs, self._h, self._c = self._session.run(
            None, {"input": batch, "h": self._h, "c": self._c}
        )
        self._context = window[-_CONTEXT:]
        self._recent = np.concatenate([self._recent, window])[-_LOOK_BACK_SAMPLES:]
        self.probability = float(np.asarray(probs).reshape(-1)[0])
        threshold = SILENCE_BELOW if self.speech else SPEECH_AT
        self.speech = self.probability >= threshold
        # Windows are judged as they fill; the one judged now ends where the pending rest starts.
        window_end = self.samples - self._pending.size
        if self.speech:
            self.speech_end_sample = window_end
            self._speech_tail = self._recent

    def speech_end_ms(self, dbfs: float = VOICED_DBFS) -> float:
        """Stream ms after the last sample above `dbfs` up to the end of the last speech window
        (noise that loud leaves that window's end)."""
        tail = self._speech_tail
        loud = np.flatnonzero(np.abs(tail) > 10 ** (dbfs / 20))
        quiet_after = tail.size - 1 - int(loud[-1]) if loud.size else 0
        return (self.speech_end_sample - quiet_after) * 1000 / SAMPLE_RATE
