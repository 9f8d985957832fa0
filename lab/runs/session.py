"""One live run: feeds caller turns to the agent, the agent's requests to the gate and the
tools, and every outcome into the event log, which the listeners (the panel) watch.

The same session serves the browser, the scripted caller and the headless runner.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from channels.db import database_sync_to_async
from django.conf import settings

from lab.agent.dialogue import (
    AGENT_VERSION,
    Commit,
    Lookup,
    Propose,
    Revise,
    Say,
    ScriptedAgent,
    Step,
)
from lab.agent.understanding import understand
from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events import store
from lab.events.chain import EventChain, digest
from lab.events.models import Run
from lab.events.types import (
    AgentInterrupted,
    AgentUtterance,
    CallerUnderstood,
    CallerUtterance,
    Channel,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateRequest,
    InputRejected,
    IntentRevised,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalMade,
    RunEnded,
    RunStarted,
)
from lab.policy.gate import GATE_VERSION, GateState
from lab.runs.speech import SpeechTimeline
from lab.scenarios.contracts import CallerLine, Contract, Fault
from lab.tools.adapters import ADAPTERS, CommitRejected, CommitResult
from lab.tools.authorization import Authorization

Listener = Callable[[Event], Awaitable[None]]
SCRIPT_WAIT_S = 60.0


class VoiceOutput(Protocol):
    """What the voice channel adds to a session: audible speech and a speaking caller."""

    def say(self, event: Event) -> None: ...
    async def silence(self, utterance_event_ids: list[str]) -> None: ...
    async def speak_as_caller(self, text: str) -> None: ...


class RunClosed(Exception):
    """The run has ended; nothing more can be recorded in it."""


class RunSession:
    def __init__(self, *, run: Run, contract: Contract, events: list[Event] | None = None) -> None:
        self.run = run
        self.contract = contract
        self.guarded = run.mode == Mode.GUARDED
        self.chain = EventChain(events)
        self.gate = GateState.from_events(self.chain.events)
        self.agent = ScriptedAgent(naive=not self.guarded)
        for event in self.chain.events:
            self.agent.observe(event)
        self.adapter = ADAPTERS[contract.tool]
        self.faults: dict[tuple[str, int], Fault] = {
            (fault.operation, fault.attempt): fault for fault in contract.faults
        }
        self.timeline = SpeechTimeline()
        self.listeners: list[Listener] = []
        self.voice: VoiceOutput | None = None
        # Real audio plays in real time; only the typed channel's clock may be compressed.
        self.scale = 1.0 if run.channel == Channel.VOICE else settings.LAB_TIME_SCALE
        self._append_lock = asyncio.Lock()
        self._turn_lock = asyncio.Lock()
        self._changed = asyncio.Condition()
        self._busy = 0
        self._steps: deque[Step] = deque()
        self._background: set[asyncio.Task[Any]] = set()
        self._counters: dict[str, int] = {}

    # -- public API -------------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        return self.chain.events

    @property
    def ended(self) -> bool:
        return any(event.type == "run.ended" for event in self.chain.events[-1:])

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def start(self) -> None:
        """Record run.started and greet, unless the run was already under way."""
        if self.chain.events:
            return
        await database_sync_to_async(self.adapter.load)(self.run)
        await self.record(
            RunStarted(
                run_id=str(self.run.id),
                scenario_id=self.contract.id,
                scenario_version=self.contract.version,
                contract_hash=self.contract.contract_hash,
                mode=Mode(self.run.mode),
                channel=self.run.channel,
                evaluator_version=EVALUATOR_VERSION,
                gate_version=GATE_VERSION,
                agent_version=AGENT_VERSION,
            )
        )
        async with self.working():
            self._steps.extend(self.agent.greet())
            await self._drain()

    async def caller_says(self, text: str, *, source: str = "typed") -> None:
        """One final caller transcript; it cuts any agent speech still playing."""
        arrived = self.now()
        async with self.working(), self._turn_lock:
            said = await self.record(CallerUtterance(text=text, source=source))
            await self.interrupt(cause_event_id=said.id, at=arrived)
            understanding = understand(text)
            await self.record(
                CallerUnderstood(
                    utterance_event_id=said.id,
                    kind=understanding.kind,
                    action=understanding.action,
                    args=understanding.args,
                    heard=understanding.heard,
                )
            )
            await self._drain()

    async def interrupt(self, *, cause_event_id: str, at: float) -> None:
        cuts = self.timeline.cut(at)
        if cuts and self.voice is not None:
            await self.voice.silence([cut.utterance.event_id for cut in cuts])
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

    async def reject_input(self, *, reason_kind: str, reason: str) -> None:
        if not self.ended:
            await self.record(InputRejected(reason_kind=reason_kind, reason=reason))

    async def end(self, *, reason_kind: str, reason: str) -> None:
        if self.ended:
            return
        for task in self._background:
            task.cancel()
        self.timeline.cut(self.now())
        await self.record(RunEnded(reason_kind=reason_kind, reason=reason))
        await database_sync_to_async(store.run_mark_ended)(run=self.run)

    async def play_script(self) -> None:
        """Play the scenario's scripted caller, then end the run."""
        try:
            mark = len(self.chain.events)
            for line in self.contract.caller:
                await self._wait_for_turn(line, since=mark)
                mark = len(self.chain.events)
                if self.voice is not None:
                    await self.voice.speak_as_caller(line.say)
                else:
                    await self.caller_says(line.say, source="script")
            await self.wait_idle()
        except TimeoutError:
            await self.end(
                reason_kind="abandoned",
                reason="the scripted caller waited too long for the agent",
            )
        except RunClosed:
            return
        else:
            await self.end(reason_kind="completed", reason="the scripted caller finished")

    async def wait_idle(self) -> None:
        """Return once no turn is being processed and the agent has stopped speaking."""
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: self._busy == 0)
            remaining = self.timeline.busy_until(self.now()) - self.now()
            if remaining <= 0 and self._busy == 0:
                return
            await asyncio.sleep(max(remaining, 0))

    # -- recording --------------------------------------------------------------------------

    async def record(self, payload: EventPayload) -> Event:
        """Append, persist and broadcast one event, then let the gate and the agent react."""
        async with self._append_lock:
            if self.ended:
                raise RunClosed("the run has ended")
            event = self.chain.append(payload, at=datetime.now(UTC))
            await database_sync_to_async(store.event_append)(run=self.run, event=event)
        for listener in self.listeners:
            await listener(event)
        if self.guarded:
            self.gate.apply(event)
            for reaction in self.gate.reactions(event):
                await self.record(reaction)
        self._steps.extend(self.agent.observe(event))
        async with self._changed:
            self._changed.notify_all()
        return event

    @contextlib.asynccontextmanager
    async def working(self):
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            async with self._changed:
                self._changed.notify_all()

    def _next(self, counter: str) -> int:
        self._counters[counter] = self._counters.get(counter, 0) + 1
        return self._counters[counter]

    async def _drain(self) -> None:
        while self._steps:
            step = self._steps.popleft()
            match step:
                case Say():
                    await self._say(step)
                case Revise():
                    await self._revise(step)
                case Lookup():
                    await self._lookup(step)
                case Propose():
                    await self._propose(step)
                case Commit():
                    await self._commit(step)

    async def _decide(self, request: GateRequest) -> Event | None:
        """Ask the gate (guarded runs only); returns the decision event, or None if unguarded."""
        if not self.guarded:
            return None
        return await self.record(self.gate.decide(request))

    # -- steps ------------------------------------------------------------------------------

    def speech_ms(self, text: str) -> int:
        return round(len(text.split()) / settings.LAB_SPEECH_WPM * 60000)

    async def _say(self, step: Say) -> None:
        duration_ms = self.speech_ms(step.text)
        event = await self.record(
            AgentUtterance(
                text=step.text,
                purpose=step.purpose,
                duration_ms=duration_ms,
                proposal_id=step.proposal_id,
            )
        )
        self.timeline.enqueue(
            event_id=event.id,
            text=step.text,
            seconds=duration_ms / 1000 * self.scale,
            now=self.now(),
            proposal_id=step.proposal_id,
        )
        if self.voice is not None:
            self.voice.say(event)

    async def _revise(self, step: Revise) -> None:
        previous = self.agent.revision or None
        await self.record(
            IntentRevised(
                revision=self._next("revision"),
                action=step.action,
                args=step.args,
                heard=step.heard,
                supersedes=previous,
                understood_event_id=step.understood_event_id,
            )
        )

    async def _lookup(self, step: Lookup) -> None:
        attempt = self._next(f"lookup-{step.revision}")
        decision = await self._decide(
            GateRequest(
                operation=Operation.LOOKUP,
                action=step.action,
                revision=step.revision,
                args=step.query,
            )
        )
        if decision is not None and decision.payload.outcome is Outcome.BLOCK:
            return
        attempt_id = f"lk-{step.revision}-{attempt}"
        await self.record(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=step.revision,
                action=step.action,
                query=step.query,
                authorized_by=decision.id if decision else None,
            )
        )
        fault = self.faults.get(("lookup", self._next("lookup")))
        if fault is not None and fault.kind == "error":
            await self.record(
                LookupFailed(attempt_id=attempt_id, failure_kind="error", reason="injected error")
            )
            return
        work = self._tool_call(self.adapter.lookup, self.run, step.query, fault=fault)
        options = await self._await_tool(
            work,
            attempt_id,
            lambda reason: LookupFailed(
                attempt_id=attempt_id, failure_kind="timeout", reason=reason
            ),
        )
        if options is None:
            return
        await self.record(LookupSucceeded(attempt_id=attempt_id, options=options))

    async def _propose(self, step: Propose) -> None:
        decision = await self._decide(
            GateRequest(
                operation=Operation.PROPOSE,
                action=step.action,
                revision=step.revision,
                args=step.args,
                lookup_event_id=step.grounded_on,
            )
        )
        if decision is not None and decision.payload.outcome is Outcome.BLOCK:
            return
        await self.record(
            ProposalMade(
                proposal_id=f"p-{self._next('proposal')}",
                revision=step.revision,
                action=step.action,
                args=step.args,
                args_hash=digest(step.args),
                grounded_on=step.grounded_on,
            )
        )

    async def _commit(self, step: Commit) -> None:
        proposal: ProposalMade | None = step.proposal
        action = proposal.action if proposal else self.agent.action or self.adapter.action
        request = GateRequest(
            operation=Operation.COMMIT,
            action=action,
            revision=proposal.revision if proposal else self.agent.revision,
            args=proposal.args if proposal else {},
            proposal_id=proposal.proposal_id if proposal else None,
            confirmation_event_id=step.confirmation_event_id,
        )
        decision = await self._decide(request)
        if proposal is None or (decision and decision.payload.outcome is Outcome.BLOCK):
            return
        authorization = (
            Authorization.from_decision(decision)
            if decision
            # No gate: a naive agent keys each attempt on its own, so nothing deduplicates.
            else Authorization.unguarded(f"unguarded-{self.run.id}-{step.confirmation_event_id}")
        )
        number = self._next("commit")
        attempt_id = f"cm-{number}"
        await self.record(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=authorization.idempotency_key,
                action=proposal.action,
                args=proposal.args,
                args_hash=proposal.args_hash,
                revision=proposal.revision,
                proposal_id=proposal.proposal_id,
                confirmation_event_id=step.confirmation_event_id,
                authorized_by=authorization.decision_event_id,
            )
        )
        fault = self.faults.get(("commit", number))
        if fault is not None and fault.kind == "error":
            await self.record(
                CommitFailed(attempt_id=attempt_id, failure_kind="error", reason="injected error")
            )
            return
        work = self._tool_call(
            self.adapter.commit, self.run, authorization, proposal.args, fault=fault
        )
        try:
            result: CommitResult | None = await self._await_tool(
                work,
                attempt_id,
                lambda reason: CommitFailed(
                    attempt_id=attempt_id, failure_kind="timeout", reason=reason
                ),
            )
        except CommitRejected as rejected:
            await self.record(
                CommitFailed(
                    attempt_id=attempt_id, failure_kind=rejected.kind, reason=rejected.reason
                )
            )
            return
        if result is not None:
            await self.record(
                CommitSucceeded(
                    attempt_id=attempt_id, receipt=result.receipt, replayed=result.replayed
                )
            )

    # -- tool calls with injected faults ----------------------------------------------------

    def _tool_call(self, function, *args: Any, fault: Fault | None) -> asyncio.Task[Any]:
        async def call() -> Any:
            if fault is not None and fault.kind == "timeout":
                late_ms = settings.LAB_TOOL_TIMEOUT_MS + (fault.late_result_after_ms or 0)
                await asyncio.sleep(late_ms / 1000 * self.scale)
            return await database_sync_to_async(function)(*args)

        return asyncio.ensure_future(call())

    async def _await_tool(
        self,
        work: asyncio.Task[Any],
        attempt_id: str,
        timed_out: Callable[[str], EventPayload],
    ) -> Any | None:
        """The tool's answer, or None after recording that it did not come in time."""
        timeout = settings.LAB_TOOL_TIMEOUT_MS / 1000 * self.scale
        try:
            return await asyncio.wait_for(asyncio.shield(work), timeout)
        except TimeoutError:
            await self.record(timed_out(f"no answer within {settings.LAB_TOOL_TIMEOUT_MS} ms"))
            self._reject_late(work, attempt_id)
            return None

    def _reject_late(self, work: asyncio.Task[Any], attempt_id: str) -> None:
        """A timed-out attempt is terminal: whatever it returns later is recorded as rejected."""

        async def watch() -> None:
            with contextlib.suppress(Exception):
                await work
                await self.record(
                    LateResultRejected(
                        attempt_id=attempt_id, reason="the attempt had already timed out"
                    )
                )

        task = asyncio.ensure_future(watch())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- scripted caller --------------------------------------------------------------------

    async def _wait_for_turn(self, line: CallerLine, *, since: int) -> None:
        async with asyncio.timeout(SCRIPT_WAIT_S):
            if line.into_readback_ms is not None:
                readback = await self.wait_for_event(
                    since, lambda e: e.type == "agent.utterance" and e.payload.purpose == "readback"
                )
                if self.voice is not None:
                    await self.wait_for_event(
                        since,
                        lambda e: (
                            e.type == "agent.audio_started"
                            and e.payload.utterance_event_id == readback.id
                        ),
                    )
                start = self.timeline.starts[readback.id]
                delay = start + line.into_readback_ms / 1000 * self.scale - self.now()
                await asyncio.sleep(max(delay, 0))
                return
            if line.after == "proposal":
                await self.wait_for_event(since, lambda e: e.type == "proposal.made")
            await self.wait_idle()
        await asyncio.sleep(line.pause_ms / 1000 * self.scale)

    async def wait_for_event(self, since: int, match: Callable[[Event], bool]) -> Event:
        def found() -> Event | None:
            return next((e for e in self.chain.events[since:] if match(e)), None)

        async with self._changed:
            await self._changed.wait_for(lambda: found() is not None or self.ended)
        event = found()
        if event is None:
            raise RunClosed("the run ended while the scripted caller was waiting")
        return event
