"""What the session's helpers use of a live run, as Protocols below RunSession.

Barge-in, the quiet-call rule and the scripted caller each take a run through one of these, so
they never import session.py, which imports them: no import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from lab.events.types import CallerSource, EndKind, Event, EventPayload
from lab.runs.speaker import VoiceOutput
from lab.runs.speech import SpeechTimeline
from lab.scenarios.contracts import Contract
from lab.scenarios.meaning import CallerMeaning


class SpeakingRun(Protocol):
    """A run whose agent speaks and whose caller may cut in: what barge-in needs."""

    @property
    def careful_barge_in(self) -> bool: ...

    @property
    def timeline(self) -> SpeechTimeline: ...

    def now(self) -> float: ...
    async def record(self, payload: EventPayload) -> Event: ...
    async def interrupt(self, *, cause_event_id: str, at: float) -> None: ...


class WatchedRun(Protocol):
    """A run the lab watches for its end: what the quiet-call rule needs."""

    scripted: bool

    @property
    def events(self) -> list[Event]: ...

    @property
    def idle(self) -> bool: ...

    async def wait_idle(self) -> None: ...
    async def wait_for_event(self, since: int, match: Callable[[Event], bool]) -> Event: ...
    async def close_quiet_call(self, *, quiet_s: float) -> None: ...


class ScriptedRun(SpeakingRun, WatchedRun, Protocol):
    """A run its scenario's scripted caller plays."""

    contract: Contract
    scale: float
    # The meaning of the scripted line being spoken on a voice run, for its transcript.
    voiced_meaning: CallerMeaning | None

    @property
    def voice(self) -> VoiceOutput | None: ...

    async def caller_says(
        self,
        text: str,
        *,
        source: CallerSource = "typed",
        means: CallerMeaning | None = None,
        audio: bytes | None = None,
        at: float | None = None,
    ) -> None: ...
    async def plan_barge_in(self, text: str, into_ms: int) -> None: ...
    async def finish(self, *, reason_kind: EndKind, reason: str) -> None: ...
    async def end(self, *, reason_kind: EndKind, reason: str) -> None: ...
