"""The agent's side of the conversation clock: what it says, when, and what a caller cut."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from django.conf import settings

from lab.events.types import AgentInterrupted, AgentUtterance, Event, EventPayload
from lab.grading.grounding import strip_markers
from lab.runs.speech import SpeechTimeline
from lab.scripted.steps import Say

if TYPE_CHECKING:
    from lab.runs.grading import TurnAuditor

Record = Callable[[EventPayload], Awaitable[Event]]


class VoiceOutput(Protocol):
    """What the voice channel adds to a session: audible speech and a speaking caller."""

    @property
    def idle(self) -> bool: ...

    def say(self, event: Event, audio: bytes | None = None) -> None: ...
    async def silence(self, utterance_event_ids: list[str], *, at: float | None = None) -> None: ...
    async def caller_voice(self, text: str) -> bytes | None: ...
    async def speak_as_caller(self, text: str, pcm: bytes | None = None, *, line: int) -> None: ...
    async def played_out(self) -> None: ...


def speech_ms(text: str) -> int:
    """How long an utterance takes to say at LAB_SPEECH_WPM."""
    return round(len(text.split()) / settings.LAB_SPEECH_WPM * 60000)


class Speaker:
    """Records agent utterances, queues them on the timeline (and the voice), and cuts them."""

    def __init__(self, *, record: Record, now: Callable[[], float], scale: float) -> None:
        self.record = record
        self.now = now
        self.scale = scale
        self.timeline = SpeechTimeline()
        self.voice: VoiceOutput | None = None
        self.auditor: TurnAuditor | None = None
        # Told whenever the timeline changes (speech queued, retimed to its audio, or cut),
        # so a page can say whether the agent is speaking from the timeline itself.
        self.on_change: list[Callable[[], Awaitable[None]]] = []

    async def changed(self) -> None:
        for listener in self.on_change:
            await listener()

    async def say(self, step: Say, *, audio: bytes | None = None) -> Event:
        """audio: the agent's own voice for it (16 kHz PCM16), played in place of the lab's TTS."""
        if self.auditor is not None:
            said, step = step.text, await self.auditor.cite_or_block(step)
            if step.text != said:
                audio = None  # its audio says what was blocked: the fallback is the lab TTS's
        # The event keeps the [KB-N] markers; what is spoken and timed never has them.
        spoken = strip_markers(step.text)
        duration_ms = speech_ms(spoken)
        event = await self.record(
            AgentUtterance(
                text=step.text,
                purpose=step.purpose,
                duration_ms=duration_ms,
                proposal_id=step.proposal_id,
                retrieval_event_id=step.retrieval_event_id,
            )
        )
        self.timeline.enqueue(
            event_id=event.id,
            text=spoken,
            seconds=duration_ms / 1000 * self.scale,
            now=self.now(),
            proposal_id=step.proposal_id,
        )
        await self.changed()
        if self.voice is not None:
            self.voice.say(event, audio)
        # Graded once it is on its way to the caller, so grading never delays the speech.
        if self.auditor is not None:
            await self.auditor.after(event)
        return event

    async def interrupt(self, *, cause_event_id: str, at: float) -> None:
        cuts = self.timeline.cut(at)
        if cuts:
            await self.changed()
        if cuts and self.voice is not None:
            await self.voice.silence([cut.utterance.event_id for cut in cuts], at=at)
        for cut in cuts:
            duration_ms = round(cut.utterance.duration / self.scale * 1000)
            await self.record(
                AgentInterrupted(
                    utterance_event_id=cut.utterance.event_id,
                    cause_event_id=cause_event_id,
                    heard_ms=round(duration_ms * cut.heard_fraction),
                    heard_text=cut.heard_text,
                )
            )
