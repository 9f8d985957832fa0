"""When each VAD engine raises the turn candidate on the side by side's clips, in audio time.

Every caller line of issue 19's six scenarios from benchmarks/corpus.py (clean; noisy: pitch -2
semitones, pink noise at 15 dB over the speech and its 1 s tail), 300 ms of quiet before it
and 1.5 s of digital silence after, as the scripted caller sends it, through lab/audio/vad.py's
Endpointer frame by frame. Figures are ms of audio after the line's last voiced sample, so the
machine's load does not move them.

Run: .venv/bin/python -m benchmarks.bench_vad_candidate
"""

from __future__ import annotations

import os
import statistics

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")

CANDIDATE_MS = 200
LEAD_MS, AFTER_MS = 300, 1500


def main() -> None:
    import django

    django.setup()
    from benchmarks import corpus
    from benchmarks.bench_side_by_side import ISSUE19_SCENARIOS
    from benchmarks.voice_aims import pct
    from lab.audio.frames import split_frames
    from lab.audio.vad import VAD_ENGINES, Endpointer, SpeechStart, VadConfig

    texts = corpus.caller_lines(ISSUE19_SCENARIOS)
    print(f"load average {os.getloadavg()[0]:.1f} (audio time: the load moves no figure)")
    print(
        "| audio | engine | candidate after the last voiced sample p50 / p95 / max ms "
        "| lines with no candidate within 1.5 s | segments per line (max) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for variant in corpus.VARIANTS:
        clips = corpus.build(texts, variant)
        for engine in VAD_ENGINES:
            after, none, segments = [], 0, []
            for text in texts:
                clip = clips[text]
                pcm = bytes(32 * LEAD_MS) + clip.pcm + bytes(32 * AFTER_MS)
                endpointer = Endpointer(VadConfig(engine=engine))
                end_ms = LEAD_MS + clip.end_ms
                raised, starts = None, 0
                for frame in split_frames(pcm):
                    events = endpointer.push(frame)
                    starts += sum(isinstance(e, SpeechStart) for e in events)
                    at = frame.stream_ms + 20
                    silent = endpointer.trailing_silence_ms >= CANDIDATE_MS
                    if raised is None and at > end_ms and silent:
                        raised = at - end_ms
                if raised is None:
                    none += 1
                else:
                    after.append(raised)
                segments.append(starts)
            cell = (
                f"{statistics.median(after):.0f} / {pct(after, 0.95):.0f} / {max(after):.0f}"
                if after
                else "-"
            )
            print(
                f"| {variant} | {engine} | {cell} | {none} of {len(texts)} "
                f"| {statistics.mean(segments):.2f} ({max(segments)}) |"
            )


if __name__ == "__main__":
    main()
