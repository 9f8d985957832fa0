"""When each VAD rule raises the turn candidate on the side by side's clips, in audio time.

Issue 19's six scenarios' caller lines from benchmarks/corpus.py (clean; noisy: pitch -2
semitones, pink noise at 15 dB over the speech and its 1 s tail), fed two ways:
  line: each line alone to a fresh Endpointer, 300 ms of digital silence before, 1.5 s after;
  call: as the lab's voice path hears a scripted call (lab/runs/voice.py, speak_as_caller): one
        Endpointer per scenario, each line 300 ms of digital silence, the clip, then
        LAB_VAD_END_SILENCE_MS + 400 ms of it, and no frames between lines (none are sent while
        the agent speaks).
Each frame's verdicts (webrtcvad's and Silero's) are made once per stream and replayed through
each rule's state machine. Figures are ms of audio after a line's last voiced sample, so the
machine's load moves none of them. A candidate is the first 200 ms pause after the last voiced
sample; early: pauses that long before it (speculation begun mid-line); cut: a segment ended
before the last voiced sample, or the line heard as more than one; false starts: segments begun
after the last voiced sample, with the turn left to the fallback and with it decided at every
candidate (end_now there, as a turn decided complete ends it).

Run: .venv/bin/python -m benchmarks.bench_vad_candidate [--feed line|call]
"""

from __future__ import annotations

import argparse
import os
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lab.audio.frames import FRAME_BYTES, FRAME_MS, AudioFrame, split_frames
from lab.audio.vad import Endpointer, SpeechEnd, SpeechStart, VadConfig, Verdicts

if TYPE_CHECKING:
    from benchmarks.corpus import Clip

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")

CANDIDATE_MS = 200
LEAD_MS, LINE_AFTER_MS = 300, 1500
FEEDS = ("line", "call")


@dataclass(frozen=True, slots=True)
class Said:
    """One line inside a stream: its frames [first, stop) and its last voiced sample's end."""

    first: int
    stop: int
    end_ms: float


@dataclass
class Stream:
    """One Endpointer's worth of audio: each frame's verdicts, and the lines in it."""

    verdicts: list[Verdicts] = field(default_factory=list)
    lines: list[Said] = field(default_factory=list)


@dataclass
class Tally:
    after: list[float] = field(default_factory=list)
    none: int = 0
    early: int = 0
    cut: int = 0
    segments: list[int] = field(default_factory=list)
    false_starts: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})


def streams(feed: str, scenarios: list[str], clips: dict[str, Clip]) -> list[Stream]:
    """The frames' verdicts, classified once per stream (both engines, as the lab runs them)."""
    from django.conf import settings

    from lab.scenarios.catalog import all_contracts

    after_ms = LINE_AFTER_MS if feed == "line" else settings.LAB_VAD_END_SILENCE_MS + 400
    contracts = all_contracts()
    out: list[Stream] = []
    for scenario in scenarios:
        texts = [line.say for line in contracts[scenario].caller]
        for group in [[t] for t in texts] if feed == "line" else [texts]:
            stream, endpointer = Stream(), Endpointer(VadConfig())
            for text in group:
                clip = clips[text]
                pcm = bytes(32 * LEAD_MS) + clip.pcm + bytes(32 * after_ms)
                frames = split_frames(pcm, len(stream.verdicts))
                end_ms = frames[0].stream_ms + LEAD_MS + clip.end_ms
                stream.lines.append(Said(frames[0].index, frames[-1].index + 1, end_ms))
                stream.verdicts += [endpointer.classify(frame) for frame in frames]
            out.append(stream)
    return out


def replay(config: VadConfig, stream: Stream, tally: Tally, *, decide: bool) -> None:
    """One rule's state machine over a stream's verdicts; the lines' figures into `tally`."""
    endpointer = Endpointer(config)
    candidates: list[float] = []
    starts: list[int] = []
    ends: list[int] = []
    for index, verdicts in enumerate(stream.verdicts):
        before = endpointer.trailing_silence_ms
        frame = AudioFrame(pcm=bytes(FRAME_BYTES), index=index)
        for event in endpointer.push_voiced(frame, verdicts):
            if isinstance(event, SpeechStart):
                starts.append(event.stream_ms)
            elif isinstance(event, SpeechEnd):
                ends.append((index + 1) * FRAME_MS)
        silence = endpointer.trailing_silence_ms
        if before < CANDIDATE_MS <= silence:
            candidates.append((index + 1) * FRAME_MS)
            if decide and endpointer.end_now() is not None:
                ends.append((index + 1) * FRAME_MS)
    if decide:
        # Only the false starts are read from the decided replay: a decided turn has no fallback.
        for said in stream.lines:
            lo, hi = said.first * FRAME_MS, said.stop * FRAME_MS
            tally.false_starts[True] += sum(said.end_ms <= s < hi for s in starts if s >= lo)
        return
    for said in stream.lines:
        lo, hi = said.first * FRAME_MS, said.stop * FRAME_MS
        later = [c - said.end_ms for c in candidates if said.end_ms < c < hi]
        if later:
            tally.after.append(later[0])
        else:
            tally.none += 1
        tally.early += sum(lo <= c < said.end_ms for c in candidates)
        segments = sum(lo <= s < hi for s in starts)
        tally.segments.append(segments)
        tally.cut += segments > 1 or any(lo <= e < said.end_ms for e in ends)
        tally.false_starts[False] += sum(said.end_ms <= s < hi for s in starts)


# Each rule's state machine; the verdicts it judges are the same frames' for all of them.
RULES = {
    "webrtcvad": VadConfig(engine="webrtcvad"),
    "silero": VadConfig(engine="silero"),
    "webrtcvad, Silero confirms": VadConfig(engine="webrtcvad", silero_confirms=True),
}


def main(feeds: list[str]) -> None:
    import django

    django.setup()
    from benchmarks import corpus
    from benchmarks.bench_side_by_side import ISSUE19_SCENARIOS
    from benchmarks.voice_aims import pct

    texts = corpus.caller_lines(ISSUE19_SCENARIOS)
    print(f"load average {os.getloadavg()[0]:.1f} (audio time: the load moves no figure)")
    print(
        "| feed | audio | rule | candidate after the last voiced sample p50 / p95 / max ms "
        "| no candidate | early candidates | lines cut | segments per line (max) "
        "| false starts: fallback / decided at the candidate |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for variant in corpus.VARIANTS:
        clips = corpus.build(texts, variant)
        for feed in feeds:
            heard = streams(feed, ISSUE19_SCENARIOS, clips)
            for name, config in RULES.items():
                tally = Tally()
                for stream in heard:
                    replay(config, stream, tally, decide=False)
                    replay(config, stream, tally, decide=True)
                after = tally.after
                cell = (
                    f"{statistics.median(after):.0f} / {pct(after, 0.95):.0f} / {max(after):.0f}"
                    if after
                    else "-"
                )
                print(
                    f"| {feed} | {variant} | {name} | {cell} | {tally.none} of {len(texts)} "
                    f"| {tally.early} | {tally.cut} | {statistics.mean(tally.segments):.2f} "
                    f"({max(tally.segments)}) | {tally.false_starts[False]} / "
                    f"{tally.false_starts[True]} |",
                    flush=True,
                )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--feed", choices=FEEDS, action="append", help="default: both")
    main(parser.parse_args().feed or list(FEEDS))
