"""Barge-in: whether caller speech during agent audio interrupts it (first version: always)."""

from __future__ import annotations

from lab.events.types import Event
from lab.runs.session import RunSession


class BargeIn:
    """Decides what caller speech does to the agent's audio; the voice path calls its hooks."""

    def __init__(self, session: RunSession) -> None:
        self.session = session

    async def speech_started(self, started: Event, stream_ms: int) -> None:
        """Caller speech began: today it stops the agent's audio at once."""
        await self.session.interrupt(cause_event_id=started.id, at=self.session.now())

    def frame(self, frame_pcm: bytes, voiced: bool, stream_ms: int) -> None:
        """One caller frame after VAD."""

    async def absorbs(self, text: str, segment_start_ms: int, segment_end_ms: int) -> bool:
        """Whether a decided turn's transcript is a backchannel or echo, kept from the agent."""
        return False

    def agent_audio(self, utterance_event_id: str, pcm: bytes, sent_at: float) -> None:
        """Agent audio left for the caller."""
