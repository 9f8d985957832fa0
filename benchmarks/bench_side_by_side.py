"""The lab and a pipecat 1.x pipeline side by side, on the same spoken corpus, passes interleaved.

Run: .venv/bin/python -m benchmarks.bench_side_by_side [--quick] [--rounds N]
(`make bench-voice` runs it with bench_voice --calls 1,4,8,16; `make bench` builds
benchmarks/.pipecat-venv for the pipecat side first.) It ends with issue 28's aims, met or missed:
after the passes, the lab plays the clean lines once more beside a busy loop on one core.
Both sides hear the same clips (benchmarks/corpus.py: clean, and pitch-lowered with pink
noise) at a microphone's pace, and both are timed from the frame holding the caller's last
voiced sample (above -40 dBFS in the clean speech) to the first agent audio. The lab plays
its scenarios through the real consumer path (bench_voice.play_events); pipecat runs its own
pipeline in its own venv (pipecat_side/runner.py) at its defaults and with matched silence.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import bench_voice, corpus
from benchmarks.side_by_side_lines import Line, Pass, attach, windows
from benchmarks.side_by_side_report import (
    BUSY_CONFIG,
    LAB_CONFIG,
    PIPECAT_CONFIGS,
    TURN_MODEL,
    report,
)
from lab.events.types import Event, Transcribed, TurnDecided, TurnLatency
from lab.runs import voice
from lab.runs.caller_audio import CallerAudio
from lab.scenarios.catalog import all_contracts
from lab.speech import asr, service, smart_turn, tts

ROOT = Path(__file__).resolve().parent
PIPECAT_PYTHON = ROOT / ".pipecat-venv" / "bin" / "python"
RUNNER = ROOT / "pipecat_side" / "runner.py"
# The lab's scripted caller leads each line with this much silence; pipecat gets the same.
LEAD_MS = 300
FRAME_BYTES = 640
# Pipecat's stand-in for the LLM says this to every turn (the lab's agent says its own).
FIXED_REPLY = "Thursday afternoon at two is free. Shall I book it for you?"
# Issue 19's 17 caller lines. A scenario over an impaired phone line is left out: the lab would
# hear the line's damage and pipecat the clean clip.
ISSUE19_SCENARIOS = [
    "correction",
    "double_confirmation",
    "interruption",
    "no_confirmation",
    "refund_correction",
    "tool_timeout",
]


# --- the lab side --------------------------------------------------------------------------


@dataclass
class Heard:
    """The clip the scripted caller is saying now, and when its last voiced frame went in."""

    clips: dict[str, corpus.Clip]
    lines: list[Line] = field(default_factory=list)
    target: bytes | None = None


class CorpusVoice:
    """voice.py's speech service, but the scripted caller says the corpus clip for its line."""

    def __init__(self, heard: Heard) -> None:
        self.heard = heard

    def __getattr__(self, name: str) -> Any:
        # Everything else (promote, SpeechUnavailable, ...) is the service's own.
        return getattr(service, name)

    async def synthesize(self, text: str) -> bytes:
        one = self.heard.clips.get(text)
        if one is None:
            return await service.synthesize(text)
        frame = one.end_sample * 2 // FRAME_BYTES
        self.heard.target = one.pcm[frame * FRAME_BYTES : (frame + 1) * FRAME_BYTES]
        self.heard.lines.append(Line(text=text, began=time.time(), ended=float("nan")))
        return one.pcm


def hook_lab(heard: Heard) -> None:
    """Route the scripted caller's voice through the corpus and stamp its last voiced frame."""
    push_audio = CallerAudio.push_audio

    async def stamped(self: CallerAudio, data: bytes) -> None:
        if heard.target is not None and data == heard.target:
            heard.lines[-1].ended, heard.target = time.time(), None
        await push_audio(self, data)

    CallerAudio.push_audio = stamped  # type: ignore[method-assign]
    voice.service = CorpusVoice(heard)  # type: ignore[assignment]


def at(event: Event) -> float:
    return event.at.timestamp()


def observe_lab(lines: list[Line], events: list[Event]) -> None:
    """Fill one scenario's lines from its event log."""

    def of(kind: str) -> list[float]:
        return sorted(at(e) for e in events if e.type == kind)

    attach(lines, of("vad.speech_ended"), of("agent.utterance"), of("agent.audio_started"))
    said = [(at(e), e.payload.text) for e in events if isinstance(e.payload, Transcribed)]
    for line, stamps in zip(lines, windows(lines, [t for t, _ in said]), strict=True):
        line.transcripts = [text for t, text in said if t in stamps]
    chains = [(at(e), e.payload) for e in events if isinstance(e.payload, TurnLatency)]
    for line, stamps in zip(lines, windows(lines, [t for t, _ in chains]), strict=True):
        # The first turn answered after the last voiced sample: the one the table times.
        line.latency = next((c for t, c in chains if t in stamps and t >= line.ended), None)


def lab_chain(lines: list[Line]) -> dict[str, list[float]]:
    """The lab's chain in the order a turn goes through it, ms per part."""
    chain: dict[str, list[float]] = {}
    for line in lines:
        latency = line.latency
        if latency is None:
            continue
        parts = {
            "candidate after the last voiced sample (VAD end + candidate silence)": (
                line.candidate_ms
            ),
            "candidate → decided (the fallback wait where not decided there)": (
                latency.decision_ms if line.candidate_ms is not None else None
            ),
            "transcript after the last voiced sample": line.transcript_ms,
            "recognition still running once decided (queue + decode)": latency.recognition_ms,
            "agent": latency.agent_ms,
            "first chunk synthesized": latency.synthesis_ms,
            f"the lab's own voice_to_voice_ms ({latency.voice_end_clock} clock)": (
                latency.voice_to_voice_ms
            ),
        }
        for name, value in parts.items():
            if value is not None:
                chain.setdefault(name, []).append(value)
    return chain


async def lab_pass(
    scenarios: list[str], clips: dict[str, corpus.Clip], heard: Heard, config: str = LAB_CONFIG
) -> Pass:
    heard.clips = clips
    load_before, cpu_before = os.getloadavg()[0], time.process_time()
    lines: list[Line] = []
    for scenario in scenarios:
        heard.lines = []
        events = await bench_voice.play_events(scenario)
        if any(line.ended != line.ended for line in heard.lines):  # NaN: that frame never came
            raise SystemExit("the lab's scripted caller no longer sends the clip in whole frames")
        observe_lab(heard.lines, events)
        lines += heard.lines
        TURN_MODEL.setdefault(clips_variant(clips), []).extend(
            e.payload.complete
            for e in events
            if isinstance(e.payload, TurnDecided) and e.payload.model_probability is not None
        )
    chain = lab_chain(lines)
    cpu_s = time.process_time() - cpu_before
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = (load_before, os.getloadavg()[0])
    return Pass(config, clips_variant(clips), lines, cpu_s, peak, load, chain)


async def busy_pass(scenarios: list[str], clips: dict[str, corpus.Clip], heard: Heard) -> Pass:
    """The lab's clean pass again with a busy loop spinning on one core beside it."""
    spinner = await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
    try:
        await bench_voice.warmed_up()
        return await lab_pass(scenarios, clips, heard, BUSY_CONFIG)
    finally:
        spinner.kill()
        await spinner.wait()


def clips_variant(clips: dict[str, corpus.Clip]) -> str:
    return next(iter(clips.values())).variant


# --- the pipecat side ----------------------------------------------------------------------


async def pipecat_pass(
    config: str, texts: list[str], clips: dict[str, corpus.Clip], folder: Path
) -> Pass:
    paths = corpus.write(clips, folder)
    said = [{"text": t, "pcm": str(paths[t]), "end_sample": clips[t].end_sample} for t in texts]
    manifest = folder / f"manifest-{config}.json"
    manifest.write_text(
        json.dumps({"config": config, "lead_ms": LEAD_MS, "reply": FIXED_REPLY, "clips": said})
    )
    load_before = os.getloadavg()[0]
    process = await asyncio.create_subprocess_exec(
        str(PIPECAT_PYTHON),
        str(RUNNER),
        str(manifest),
        # Every model is a local file; offline, a model that is not would fail, not download.
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        sys.stderr.write(err.decode(errors="replace")[-4000:])
        raise SystemExit(f"the pipecat runner failed ({config}), exit {process.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    clock = result["clock"]
    lines = [Line(text=x["text"], began=x["began"], ended=x["ended"]) for x in result["lines"]]
    attach(lines, clock["turn_stops"], clock["replies"], clock["audio"])
    said = clock["transcripts"]
    for line, stamps in zip(lines, windows(lines, [t for t, _ in said]), strict=True):
        line.transcripts = [text.strip() for t, text in said if t in stamps]
    steps = ("end → transcript", "transcript → turn stopped", "turn stopped → first audio")
    chain: dict[str, list[float]] = {step: [] for step in steps}
    for line, stamps in zip(lines, windows(lines, [t for t, _ in said]), strict=True):
        # The last transcript before the turn stopped: VAD stop and recognition, then the wait.
        stop = next((t for t in line.turn_stops if t >= line.ended), None)
        heard = max(
            (t for t in stamps if stop is not None and line.ended <= t <= stop), default=None
        )
        line.heard_at = heard
        if stop is not None and heard is not None and line.first_audio is not None:
            marks = (line.ended, heard, stop, line.first_audio)
            for step, begin, end in zip(steps, marks, marks[1:], strict=False):
                chain[step].append((end - begin) * 1000)
    load = (load_before, os.getloadavg()[0])
    return Pass(
        PIPECAT_CONFIGS[config],
        clips_variant(clips),
        lines,
        result["cpu_s"],
        result["peak_rss_mib"],
        load,
        chain,
    )


async def main(options: argparse.Namespace) -> None:
    if not PIPECAT_PYTHON.exists():
        raise SystemExit(f"no {PIPECAT_PYTHON}: `make bench` creates the pipecat venv")
    scenarios = options.scenarios or (["correction"] if options.quick else ISSUE19_SCENARIOS)
    contracts = all_contracts()
    unknown = [s for s in scenarios if s not in contracts]
    impaired = [s for s in scenarios if s in contracts and contracts[s].line is not None]
    if unknown or impaired:
        raise SystemExit(
            f"unknown scenarios {unknown}; over an impaired line (pipecat would hear it "
            f"clean) {impaired}"
        )
    texts = corpus.caller_lines(scenarios)
    began = time.monotonic()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"scenarios: {', '.join(scenarios)}; {len(texts)} caller lines per pass")
    print(
        f"noisy: pitch {corpus.PITCH_SEMITONES:+.0f} semitones (resampled), pink noise at "
        f"{corpus.SNR_DB:.0f} dB SNR"
    )
    heard = Heard(clips={})
    hook_lab(heard)
    folder = Path(tempfile.mkdtemp(prefix="bench-side-"))
    passes: list[Pass] = []
    for round_number in range(options.rounds):
        for variant in corpus.VARIANTS:
            clips = corpus.build(texts, variant)
            # Each pass starts as a warmed-up process: none inherits another's phrases, and the
            # first does not share the cores with the fixed lines' background synthesis.
            await bench_voice.warmed_up()
            passes.append(await lab_pass(scenarios, clips, heard))
            for config in PIPECAT_CONFIGS:
                passes.append(await pipecat_pass(config, texts, clips, folder / variant))
            for done in passes[-1 - len(PIPECAT_CONFIGS) :]:
                print(f"round {round_number + 1}, {variant}: {done.config}", flush=True)
    clean = corpus.build(texts, "clean")
    passes.append(await busy_pass(scenarios, clean, heard))
    print(f"{BUSY_CONFIG}, clean", flush=True)
    report(passes)
    print(
        f"\nload average at the end {os.getloadavg()[0]:.1f}; "
        f"{(time.monotonic() - began) / 60:.1f} min"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the correction scenario only")
    parser.add_argument(
        "--scenarios", nargs="+", help="these scenarios (default: issue 19's six, 17 lines)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds of all passes")
    options = parser.parse_args()
    bench_voice.call_command("migrate", verbosity=0)
    asr.load_model()
    tts.load_voice()
    smart_turn.load()
    asyncio.run(main(options))
