"""Times the voice path's models: ASR of every scripted caller line, TTS of a readback.

Run: .venv/bin/python -m benchmarks.bench_asr
"""

from __future__ import annotations

import os
import platform
import resource
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

from lab.audio.frames import BYTES_PER_MS
from lab.scenarios.catalog import all_contracts
from lab.speech import asr, tts

ROUNDS = 3
READBACK = "I have Tuesday at nine thirty in the morning. Shall I book it?"


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "n/a"


def _peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _ms(seconds: float) -> float:
    return seconds * 1000


def main() -> None:
    # lab.speech.asr reads its model directory and thread count from the settings.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
    from django.conf import settings

    print(
        f"machine: {platform.platform()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs ({_cpu_model()})"
    )
    print(
        f"engines: faster-whisper {version('faster-whisper')}, ctranslate2 "
        f"{version('ctranslate2')}, piper-tts {version('piper-tts')}, onnxruntime "
        f"{version('onnxruntime')}; ASR {asr.model_name()} int8 on {settings.LAB_ASR_THREADS} "
        f"threads, voice {tts.VOICE_NAME}"
    )

    started = time.perf_counter()
    asr.load_model()
    asr_load = time.perf_counter() - started
    started = time.perf_counter()
    tts.load_voice()
    tts_load = time.perf_counter() - started
    print(f"load: ASR {_ms(asr_load):.0f} ms, TTS {_ms(tts_load):.0f} ms")

    lines = sorted({line.say for c in all_contracts().values() for line in c.caller})
    clips = [tts.synthesize(line) for line in lines]
    started = time.perf_counter()
    asr.transcribe(clips[0])
    print(f"first transcription (cold): {_ms(time.perf_counter() - started):.0f} ms")

    latencies: list[float] = []
    factors: list[float] = []
    print(f"\nASR, {len(lines)} caller lines x {ROUNDS} rounds:")
    for line, clip in zip(lines, clips, strict=True):
        runs = [asr.transcribe(clip) for _ in range(ROUNDS)]
        audio_ms = len(clip) / BYTES_PER_MS
        latencies += [r.elapsed_ms for r in runs]
        factors += [r.elapsed_ms / audio_ms for r in runs]
        p50 = float(np.median([r.elapsed_ms for r in runs]))
        print(f"  {audio_ms:6.0f} ms audio  {p50:5.0f} ms  {line!r} -> {runs[0].text!r}")
    print(
        f"latency p50 {np.percentile(latencies, 50):.0f} ms, p95 {np.percentile(latencies, 95):.0f}"
        f" ms, max {max(latencies):.0f} ms; real-time factor p50 "
        f"{np.percentile(factors, 50):.3f}, p95 {np.percentile(factors, 95):.3f}"
    )

    first: list[float] = []
    total: list[float] = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        clips_out = tts.synthesize_sentences(READBACK)
        pcm = next(clips_out)
        first.append(time.perf_counter() - started)
        pcm += b"".join(clips_out)
        total.append(time.perf_counter() - started)
    audio_ms = len(pcm) / BYTES_PER_MS
    print(
        f"\nTTS {READBACK!r} ({audio_ms:.0f} ms audio): first sentence p50 "
        f"{_ms(float(np.median(first))):.0f} ms, whole reply p50 "
        f"{_ms(float(np.median(total))):.0f} ms, real-time factor "
        f"{_ms(float(np.median(total))) / audio_ms:.3f}"
    )
    print(f"peak RSS: {_peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
