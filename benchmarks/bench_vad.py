"""Silero VAD v6 against webrtcvad on every scripted caller line, clean and in pink noise.

Run: .venv/bin/python -m benchmarks.bench_vad [--call]
Each line is said as the scripted caller says it (300 ms before, then 2 s after the last word)
through lab/audio/vad.py's Endpointer on each rule: webrtcvad, Silero, and webrtcvad with
Silero confirming (VadConfig.silero_confirms); a fresh Endpointer per line, or with --call one
for every line in turn, as one long call hears them. Conditions: clean (digital silence
around the speech); noisy (benchmarks/corpus.py: pitch-lowered, pink noise at 15 dB SNR, the
noise running on through the lead and the 2 s tail); loud noise (the clean voice under pink
noise at 5 dB SNR, throughout). Errors are in ms against the true last voiced sample of the
speech before noise was added:
  end: the segment's end (after its last voiced frame), where endpointing counts from;
  clock: the end the voice-to-voice latency is timed from (the last loud sample under Silero's
         last speech window; the old clock, the stream's last sample above -40 dBFS, under
         webrtcvad);
  decided: when the segment was declared over (the end plus the silence fallback);
  start: when the segment's start was declared, after the first loud sample of the speech;
  cut: lines heard as more than one segment or ended before their last word; missed: none;
  false: voiced frames heard in the tail from 200 ms after the last word (ms per line), and
  segments begun after the last word.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from lab.audio.vad import Endpointer, VadConfig

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")

LEAD_MS = 300
TAIL_MS = 2000
LOUD_SNR_DB = 5.0
# Voiced frames this long after the last word count as noise heard as speech.
FALSE_AFTER_MS = 200
RULES = ("webrtcvad", "silero", "webrtcvad, Silero confirms")


@dataclass
class Tally:
    end: list[float] = field(default_factory=list)
    clock: list[float] = field(default_factory=list)
    decided: list[float] = field(default_factory=list)
    start: list[float] = field(default_factory=list)
    false_ms: list[float] = field(default_factory=list)
    false_starts: int = 0
    cut: int = 0
    missed: int = 0
    frame_s: float = 0.0
    frames: int = 0


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _pcm16(samples: np.ndarray) -> bytes:
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


def streams(variant: str, lines: list[str]) -> list[tuple[bytes, float, float]]:
    """Each line as (the PCM the lab hears, its speech's true start and end in stream ms)."""
    from benchmarks import corpus
    from lab.audio.frames import SAMPLE_RATE

    lead, tail = SAMPLE_RATE * LEAD_MS // 1000, SAMPLE_RATE * TAIL_MS // 1000
    out = []
    source = "noisy" if variant == "noisy" else "clean"
    for text, clip in corpus.build(lines, source).items():
        speech = np.frombuffer(clip.pcm, dtype="<i2").astype(np.float64)
        audio = np.concatenate([np.zeros(lead), speech, np.zeros(tail)])
        if variant == "noisy":
            # The corpus clip's last 500 ms are its noise alone: the same noise runs on around it.
            level = float(np.sqrt(np.mean(speech[-SAMPLE_RATE // 2 :] ** 2)))
            noise = corpus.pink_noise(lead + tail, corpus._seed(text) + 1) * level
            audio[:lead] += noise[:lead]
            audio[lead + speech.size :] += noise[lead:]
        elif variant == "loud noise":
            voiced = speech[np.abs(speech) > 32768 * 10 ** (corpus.VOICED_DBFS / 20)]
            level = float(np.sqrt(np.mean(voiced**2))) * 10 ** (-LOUD_SNR_DB / 20)
            audio += corpus.pink_noise(audio.size, corpus._seed(text)) * level
        first = int(np.flatnonzero(np.abs(speech) > 32768 * 10 ** (corpus.VOICED_DBFS / 20))[0])
        out.append((_pcm16(audio), LEAD_MS + first * 1000 / SAMPLE_RATE, LEAD_MS + clip.end_ms))
    return out


def config(rule: str) -> VadConfig:
    from lab.audio.vad import VadConfig

    if rule == "silero":
        return VadConfig(engine="silero")
    return VadConfig(engine="webrtcvad", silero_confirms=rule != "webrtcvad")


def measure(
    endpointer: Endpointer,
    pcm: bytes,
    true_start_ms: float,
    true_end_ms: float,
    tally: Tally,
    first_index: int = 0,
) -> None:
    """One line through `endpointer`, its frames numbered on from `first_index` (the true times
    are the line's own: a call's earlier lines shift them)."""
    from lab.audio.frames import FRAME_MS, split_frames
    from lab.audio.loudness import loud_end_ms
    from lab.audio.vad import SpeechEnd, SpeechStart

    offset_ms = first_index * FRAME_MS
    true_start_ms += offset_ms
    true_end_ms += offset_ms
    # (its start, the frame that ended it, its end, the clock's end) per segment.
    segments: list[tuple[int, int, SpeechEnd, float | None]] = []
    start_ms = 0
    for frame in split_frames(pcm, first_index):
        started = time.perf_counter()
        events = endpointer.push(frame)
        tally.frame_s += time.perf_counter() - started
        tally.frames += 1
        if endpointer.voiced and frame.stream_ms >= true_end_ms + FALSE_AFTER_MS:
            tally.false_ms.append(FRAME_MS)
        for event in events:
            if isinstance(event, SpeechStart) and event.stream_ms >= true_end_ms:
                tally.false_starts += 1
            elif isinstance(event, SpeechStart) and not tally.start:
                tally.start.append((frame.index + 1) * FRAME_MS - true_start_ms)
            if isinstance(event, SpeechStart):
                start_ms = event.stream_ms
            if isinstance(event, SpeechEnd):
                segments.append((start_ms, frame.index, event, endpointer.speech_end_ms()))
    # Segments begun in noise after the last word are counted as false starts above.
    said = [segment for segment in segments if segment[0] < true_end_ms]
    if not said:
        tally.missed += 1
        return
    if len(said) > 1:
        tally.cut += 1
    _, index, last, clock = said[-1]
    tally.end.append(last.stream_ms - true_end_ms)
    tally.decided.append((index + 1) * FRAME_MS - true_end_ms)
    silero_clock = endpointer.config.engine == "silero" or endpointer.config.silero_confirms
    if silero_clock and clock is not None:
        tally.clock.append(clock - true_end_ms)
    else:
        tally.clock.append((loud_end_ms(pcm) or 0.0) + offset_ms - true_end_ms)


def cell(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{pct(values, 50):.0f} / {pct(values, 95):.0f} / {max(values):.0f}"


def main(call: bool) -> None:
    import django

    django.setup()
    from lab.audio import silero
    from lab.audio.frames import FRAME_BYTES
    from lab.audio.vad import Endpointer
    from lab.scenarios.catalog import all_contracts

    lines = sorted({line.say for c in all_contracts().values() for line in c.caller})
    started = time.perf_counter()
    silero.load()
    load_ms = (time.perf_counter() - started) * 1000
    print(f"load average at start: {os.getloadavg()[0]:.2f}; Silero loaded in {load_ms:.0f} ms")
    print("every line through one endpointer per rule, as a call" if call else "a fresh one each")
    print(
        "| audio | rule | end err p50 / p95 / max | clock err p50 / p95 / max | "
        "decided after p50 / p95 | start after p50 / p95 | cut | missed | "
        "false speech ms/line (max) | false starts | µs/frame |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for variant in ("clean", "noisy", "loud noise"):
        audio = streams(variant, lines)
        for rule in RULES:
            tally, endpointer, first_index = Tally(), Endpointer(config(rule)), 0
            for pcm, true_start, true_end in audio:
                per_line = Tally()
                if not call:
                    endpointer, first_index = Endpointer(config(rule)), 0
                measure(endpointer, pcm, true_start, true_end, per_line, first_index)
                first_index += -(-len(pcm) // FRAME_BYTES)
                tally.start += per_line.start
                tally.end += per_line.end
                tally.clock += per_line.clock
                tally.decided += per_line.decided
                tally.false_ms.append(sum(per_line.false_ms))
                tally.false_starts += per_line.false_starts
                tally.cut += per_line.cut
                tally.missed += per_line.missed
                tally.frame_s += per_line.frame_s
                tally.frames += per_line.frames
            print(
                f"| {variant} | {rule} | {cell(tally.end)} | {cell(tally.clock)} | "
                f"{pct(tally.decided, 50):.0f} / {pct(tally.decided, 95):.0f} | "
                f"{pct(tally.start, 50):.0f} / {pct(tally.start, 95):.0f} | "
                f"{tally.cut}/{len(audio)} | {tally.missed} | "
                f"{statistics.mean(tally.false_ms):.0f} ({max(tally.false_ms):.0f}) | "
                f"{tally.false_starts} | {tally.frame_s / tally.frames * 1e6:.0f} |"
            )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--call", action="store_true", help="one endpointer per rule for all lines, as a call"
    )
    main(parser.parse_args().call)
