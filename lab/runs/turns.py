"""The agent/gate turn loop: caller turns → understanding → agent steps → gate decisions."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from lab.events.models import Run
from lab.events.types import (
    CallerSource,
    CallerUnderstood,
    CallerUtterance,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    IntentRevised,
    Mode,
    Outcome,
    ProposalMade,
    UnderstandingKind,
)
from lab.policy.gate import GateState
from lab.runs.counters import RunCounters
from lab.runs.retrieval import tenant_retriever
from lab.runs.speaker import Speaker
from lab.runs.tools import ToolCalls
from lab.scenarios.meaning import CallerMeaning
from lab.scripted.answers import Retrieve, retrieve
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.setup import scripted_agent
from lab.scripted.steps import Commit, Lookup, Propose, Revise, Say, Step
from lab.tools.authorization import Authorization

Record = Callable[[EventPayload], Awaitable[Event]]


def _blocked(decision: Event | None) -> bool:
    """Whether a recorded gate decision blocked the request (None: no gate, nothing blocks)."""
    return isinstance(decision, Event) and (
        isinstance(decision.payload, GateDecision) and decision.payload.outcome is Outcome.BLOCK
    )


class AgentTurns:
    """Feeds each event to the gate (guarded runs) and the agent, and carries out their steps."""

    def __init__(
        self,
        *,
        run: Run,
        events: list[Event],
        record: Record,
        speaker: Speaker,
        tools: ToolCalls,
        counters: RunCounters,
    ) -> None:
        self.run = run
        self.guarded = run.mode == Mode.GUARDED
        self.record = record
        self.speaker = speaker
        self.tools = tools
        self.gate = GateState.from_events(events)
        self.agent: ScriptedAgent = scripted_agent(
            naive=not self.guarded, tools=tools.adapters, ungrounded=run.ungrounded
        )
        for event in events:
            self.agent.observe(event)
        self.steps: deque[Step] = deque()
        # The steps a caller heard while a write is in flight calls for, taken at once.
        self.meanwhile: deque[Step] = deque()
        self.lock = asyncio.Lock()
        self.counters = counters

    async def react(self, event: Event) -> None:
        """Let the gate and then the agent react to one recorded event."""
        if self.guarded:
            self.gate.apply(event)
            for reaction in self.gate.reactions(event):
                await self.record(reaction)
        steps = self.agent.observe(event)
        heard = event.payload
        if (
            self.tools.writing
            and isinstance(heard, CallerUnderstood)
            and heard.kind not in (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION)
        ):
            # What the agent does on hearing the caller mid-write, it does now, not after the
            # write; a change of request still waits for the write's outcome.
            self.meanwhile.extend(steps)
        else:
            self.steps.extend(steps)

    async def greet(self) -> None:
        self.steps.extend(self.agent.greet())
        await self.drain()

    async def farewell(self) -> None:
        self.steps.extend(self.agent.farewell())
        await self.drain()

    async def caller_turn(
        self,
        text: str,
        *,
        source: CallerSource,
        arrived: float,
        means: CallerMeaning | None = None,
        audio: bytes | None = None,
    ) -> None:
        """One final caller transcript: it cuts agent speech, is understood, and answered (the
        lab's own agent reads the transcript, never the audio or a script's meaning)."""
        if self.tools.writing:
            # The turn holding the lock waits on a write: the caller is heard as they speak, and
            # answered at once (the scripted agent only waits; the naive one writes again); that
            # turn's own drain carries what the write's outcome calls for.
            await self._hear(text, source, arrived)
            await self.drain(self.meanwhile)
            async with self.lock:
                await self.drain()
            return
        async with self.lock:
            await self._hear(text, source, arrived)
            await self.drain()

    async def _hear(self, text: str, source: CallerSource, arrived: float) -> None:
        said = await self.record(CallerUtterance(text=text, source=source))
        await self.speaker.interrupt(cause_event_id=said.id, at=arrived)
        await self.record(self.agent.understand(text).event(said.id))

    async def drain(self, steps: deque[Step] | None = None) -> None:
        steps = self.steps if steps is None else steps
        while steps:
            step = steps.popleft()
            match step:
                case Say():
                    await self.speaker.say(step)
                case Revise():
                    await self._revise(step)
                case Lookup():
                    await self._lookup(step)
                case Propose():
                    await self._propose(step)
                case Commit():
                    await self._commit(step)
                case Retrieve():
                    await self.record(retrieve(step, tenant_retriever()))

    async def _decide(self, request: GateRequest) -> Event | None:
        """Ask the gate (guarded runs only); returns the decision event, or None if unguarded."""
        if not self.guarded:
            return None
        return await self.record(self.gate.decide(request))

    async def _revise(self, step: Revise) -> None:
        previous = self.agent.revision or None
        await self.record(
            IntentRevised(
                revision=self.counters.next("revision"),
                action=step.action,
                args=step.args,
                heard=step.heard,
                supersedes=previous,
                understood_event_id=step.understood_event_id,
            )
        )

    async def _lookup(self, step: Lookup) -> None:
        attempt = self.counters.next(f"lookup-{step.revision}")
        decision = await self._decide(step.request())
        if _blocked(decision):
            return
        await self.tools.lookup(
            step, attempt=attempt, authorized_by=decision.id if decision else None
        )

    async def _propose(self, step: Propose) -> None:
        decision = await self._decide(step.request())
        if _blocked(decision):
            return
        await self.record(step.made(f"p-{self.counters.next('proposal')}"))

    async def _commit(self, step: Commit) -> None:
        proposal: ProposalMade | None = step.proposal
        action = self.agent.action or self.tools.default_action
        request = step.request(action=action, revision=self.agent.revision)
        decision = await self._decide(request)
        if proposal is None or _blocked(decision):
            return
        authorization = (
            Authorization.from_decision(decision)
            if decision
            # No gate: a naive agent keys each attempt on its own, so nothing deduplicates; a
            # network retry gets a new key too, as a client that mints one per request does.
            else Authorization.unguarded(
                f"unguarded-{self.run.id}-{step.confirmation_event_id}"
                + (f"-retry{step.retry}" if step.retry else "")
            )
        )
        await self.tools.commit(
            proposal,
            confirmation_event_id=step.confirmation_event_id,
            authorization=authorization,
        )
