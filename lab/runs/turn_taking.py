"""Work begun at a short-silence candidate: recognition, the turn model, the words' signal.

None of it is recorded or reaches the agent's state until the turn is decided complete; a
caller who resumes first has it all thrown away.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import logging
from dataclasses import dataclass

from django.conf import settings

from lab.audio.turn_end import TurnEvidence
from lab.events.types import Event, TranscriptSignal, VoiceEndClock
from lab.grading.grounding import strip_markers
from lab.language.completeness import transcript_signal
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.steps import Say
from lab.speech import asr, service, smart_turn, tts

logger = logging.getLogger(__name__)
_NEVER_RECORDED = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


def turn_model_name() -> str | None:
    """The end-of-turn model in use, or None (switched off, or its wheel is missing)."""
    enabled = settings.LAB_TURN_MODEL and smart_turn.available()
    return smart_turn.MODEL_NAME if enabled else None


async def turn_probability(pcm: bytes) -> float | None:
    """P(turn complete) from the turn model (here or on a speech worker); None without one."""
    if turn_model_name() is None:
        return None
    try:
        return await service.turn_probability(pcm)
    except service.SpeechUnavailable as error:
        # Without the model's word the words and the fallback silence still decide the turn.
        logger.warning("turn model unavailable: %s", error.reason)
        return None


def likely_first_words(agent: ScriptedAgent, text: str) -> str | None:
    """The first chunk the agent would say to `text`, worked out on a copy of it."""
    twin = copy.deepcopy(agent)
    understood = twin.understand(text).event("speculative")
    event = Event(
        id="speculative",
        seq=1,
        at=_NEVER_RECORDED,
        payload=understood,
        prev_hash="",
        hash="",
    )
    say = next((step for step in twin.observe(event) if isinstance(step, Say)), None)
    chunks = tts.chunks(strip_markers(say.text)) if say else []
    return chunks[0] if chunks else None


@dataclass
class TurnClock:
    """Timings of one caller turn, from the end of speech to the first agent audio."""

    caller_event_id: str
    endpointing_ms: int
    recognition_ms: int
    transcript_at: float
    speech_ended_at: float
    loud_at: float | None = None
    voice_end_clock: VoiceEndClock | None = None
    decision_ms: int = 0
    candidate_silence_ms: int = 0
    recognition_tail_ms: int = 0
    speculative: bool = False


class Speculation:
    """Recognition, the turn model and the reply's first words, started at one candidate."""

    def __init__(
        self,
        *,
        pcm: bytes,
        transcript: asyncio.Future[asr.Transcript] | None,
        silence_ms: int,
        agent: ScriptedAgent,
        at: float,
        candidate: asyncio.Task[Event],
    ) -> None:
        # The turn.candidate event's write, its place in the log taken at the candidate.
        self.candidate = candidate
        self.silence_ms = silence_ms
        self.started_at = at
        # Recognition begun earlier in this pause covers the same words (the pause added none).
        self.transcript: asyncio.Future[asr.Transcript] = transcript or asyncio.ensure_future(
            service.recognize(pcm)
        )
        # The turn model runs only where the words leave the turn in doubt, after recognition:
        # beside it, on two cores, it doubled recognition's time.
        self.probability: asyncio.Future[float | None] | None = None
        self._pcm = pcm
        self.transcript_at: float | None = None
        self.signal: TranscriptSignal = "unknown"
        self._agent = agent
        self.prefetch: asyncio.Future[bytes] | None = None
        self.decision: asyncio.Future[None] | None = None
        self.ready = asyncio.ensure_future(self._prepare())

    async def _prepare(self) -> None:
        transcript = await self.transcript
        self.transcript_at = asyncio.get_running_loop().time()
        self.signal = transcript_signal(transcript.text, self._agent.understand(transcript.text))
        if self.signal != "incomplete":
            first = likely_first_words(self._agent, transcript.text)
            if first:
                # Warms the phrase cache: the decided turn's reply finds its first chunk made.
                self.prefetch = asyncio.ensure_future(service.synthesize(first))
        if self.signal != "complete":
            self.probability = asyncio.ensure_future(turn_probability(self._pcm))
            await self.probability

    def evidence(self, silence_ms: int) -> TurnEvidence:
        """What is known now; the model's probability only once it has answered."""
        future = self.probability
        answered = future is not None and future.done() and not future.cancelled()
        failed = answered and future is not None and future.exception() is not None
        probability = future.result() if future is not None and answered and not failed else None
        signal = self.signal if self.transcript_at is not None else "unknown"
        return TurnEvidence(silence_ms=silence_ms, probability=probability, signal=signal)

    def cancel(self) -> None:
        """Stop waiting on the work; what already runs in an executor is left to finish unheard."""
        for future in (self.ready, self.transcript, self.probability):
            if future is not None:
                future.cancel()
