"""One live run: the facade the consumer, the voice link and the headless runner drive.

It wires the log writer (log.py), the agent/gate turn loop (turns.py), tool calls
(tools.py), agent speech (speaker.py) and the scripted caller (caller.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from channels.db import database_sync_to_async
from django.conf import settings

from lab.accounts.agents import connect_refusal
from lab.connectors import mcp_runs
from lab.connectors.interface import AgentIdentity, AgentUnderTest, CallNamed, SelfIdentifying
from lab.connectors.live_calls import LiveCall, call_closed, call_opened
from lab.connectors.mcp_relay import RELAY
from lab.connectors.registry import connect
from lab.connectors.tool_specs import offered_specs
from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events import store
from lab.events.models import Run
from lab.events.types import (
    CallerSource,
    Channel,
    EndKind,
    Event,
    EventPayload,
    InputRejected,
    Mode,
    RunEnded,
    RunStarted,
)
from lab.policy.gate import GATE_VERSION
from lab.runs import caller, ending
from lab.runs.barge_in import typed_backchannel
from lab.runs.counters import RunCounters
from lab.runs.external_tools import GatedToolBox
from lab.runs.external_turns import ExternalAgentTurns
from lab.runs.grading import TurnAuditor
from lab.runs.log import Listener, OrderedWriter, RunClosed, RunLog
from lab.runs.reconciliation import reconcile
from lab.runs.run_agent import agent_identity, agent_spec, run_owner, run_toolset
from lab.runs.speaker import Speaker, VoiceOutput
from lab.runs.speech import SpeechTimeline
from lab.runs.tools import ToolCalls
from lab.runs.turns import AgentTurns
from lab.runs.unobserved import PHONE_CONNECTORS, actions_unobserved
from lab.scenarios.contracts import Contract
from lab.scenarios.meaning import CallerMeaning
from lab.scripted.dialogue import AGENT_VERSION, ScriptedAgent

__all__ = ["Listener", "RunClosed", "RunSession", "VoiceOutput"]

AGENT_CLOSE_S = 5.0


class RunSession:
    def __init__(
        self,
        *,
        run: Run,
        contract: Contract,
        events: list[Event] | None = None,
        agent: AgentUnderTest | None = None,
    ) -> None:
        """agent: the outside agent under test; by default the one the run names, if any."""
        self.run = run
        self.contract = contract
        self.log = RunLog(run, events)
        self.writer = OrderedWriter(self.log, self._reacted)
        # Real audio plays in real time; only the typed channel's clock may be compressed.
        self.scale = 1.0 if run.channel == Channel.VOICE else settings.LAB_TIME_SCALE
        self.speaker = Speaker(record=self.record, now=self.now, scale=self.scale)
        self.speaker.auditor = TurnAuditor(
            run=run,
            record=self.record,
            events=lambda: self.log.events,
            require_citation=bool(contract.require_citation),
        )
        counters = RunCounters(self.log.events)
        self.tools = ToolCalls(
            run=run,
            contract=contract,
            record=self.record,
            events=lambda: self.log.events,
            scale=self.scale,
            counters=counters,
            wait_for=self.wait_for_event,
        )
        offered = tuple(spec.name for spec in offered_specs(frozenset(self.tools.adapters)))
        spec = agent_spec(run, offered) if agent is None else None
        self.agent: AgentUnderTest | None = connect(spec) if spec is not None else agent
        self.turns: AgentTurns | ExternalAgentTurns
        if self.agent is None:
            self.turns = AgentTurns(
                run=run,
                events=self.log.events,
                record=self.record,
                speaker=self.speaker,
                tools=self.tools,
                counters=counters,
            )
        else:
            self.turns = ExternalAgentTurns(
                run=run,
                events=self.log.events,
                record=self.record,
                speaker=self.speaker,
                tools=self.tools,
                counters=counters,
                agent=self.agent,
                on_fault=self._agent_faulted,
                toolset=run_toolset(run),
            )
        self._changed = asyncio.Condition()
        self._busy = 0
        # While a scripted caller plays, it decides when the call ends.
        self.scripted = False
        self.voiced_meaning: CallerMeaning | None = None
        self._quiet: asyncio.Task[None] | None = None
        # What must reach the log before run.ended closes it (the voice run's recording).
        self.before_end: list[Callable[[], Awaitable[None]]] = []
        if self.agent is not None and self.agent.identity.connector in PHONE_CONNECTORS:
            self.before_end.append(self._actions_observed)

    @property
    def careful_barge_in(self) -> bool:
        """Whether an acknowledgement over the agent is kept from it. Naive barge-in is a habit of
        the scripted agent's unguarded mode; an outside agent gets the lab's careful loop."""
        return self.run.mode == Mode.GUARDED or self.agent is not None

    @property
    def toolbox(self) -> GatedToolBox | None:
        """The run's gated tools as an outside agent reaches them (a connector, an MCP server)."""
        return self.turns.toolbox if isinstance(self.turns, ExternalAgentTurns) else None

    @property
    def scripted_agent(self) -> ScriptedAgent | None:
        """The lab's own agent, when it is the one under test (voice speculation works on it)."""
        return self.turns.agent if isinstance(self.turns, AgentTurns) else None

    @property
    def events(self) -> list[Event]:
        return self.log.events

    @property
    def listeners(self) -> list[Listener]:
        return self.log.listeners

    @property
    def ended(self) -> bool:
        return self.log.ended

    @property
    def timeline(self) -> SpeechTimeline:
        return self.speaker.timeline

    @property
    def voice(self) -> VoiceOutput | None:
        return self.speaker.voice

    @voice.setter
    def voice(self, voice: VoiceOutput | None) -> None:
        self.speaker.voice = voice

    @property
    def idle(self) -> bool:
        """No turn in progress, no agent speech queued, sending or still playing."""
        voice_idle = self.voice is None or self.voice.idle
        return self._busy == 0 and voice_idle and self.timeline.busy_until(self.now()) <= self.now()

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def start(self) -> None:
        """Record run.started and greet; a reopened run first reconciles its open commits."""
        if self.ended:
            return
        refusal = await self._agent_refused()
        if refusal is not None:
            if not self.events:
                await self.record(self._run_started())
            await self.end(
                reason_kind="error", reason=f"the agent under test was not connected: {refusal}"
            )
            return
        if self._quiet is None:
            self._quiet = asyncio.ensure_future(ending.end_when_quiet(self))
        if self.events:
            await self._tools_open()
            async with self.working():
                if await reconcile(self.run, self.events, self.record):
                    await self.turns.drain()
            return
        await self.tools.load()
        if isinstance(self.agent, SelfIdentifying):
            await self.agent.identify()
        await self.record(self._run_started())
        await self._tools_open()
        async with self.working():
            await self.turns.greet()

    def _run_started(self) -> RunStarted:
        identity = self._identity()
        return RunStarted(
            run_id=str(self.run.id),
            scenario_id=self.contract.id,
            scenario_version=self.contract.version,
            contract_hash=self.contract.contract_hash,
            mode=Mode(self.run.mode),
            channel=Channel(self.run.channel),
            evaluator_version=EVALUATOR_VERSION,
            gate_version=GATE_VERSION,
            agent_version=identity.version() if identity else AGENT_VERSION,
            ungrounded=self.run.ungrounded,
            agent=identity,
        )

    async def _agent_refused(self) -> str | None:
        """Why a tenant's registered agent may not be reached now: its URL is checked again on
        every address its name resolves to at this moment (DNS can change since it was saved)."""
        if self.agent is None or not self.run.tenant or not self.run.agent_connector:
            return None
        # Reads the tenants (whose key prefix is whose) as well as DNS: off the loop, on a
        # connection Django closes after.
        return await database_sync_to_async(connect_refusal, thread_sensitive=False)(
            connector=self.run.agent_connector,
            endpoint=self.run.agent_endpoint,
            secret_env=self.run.agent_key_env,
            tenant=self.run.tenant,
        )

    async def _tools_open(self) -> None:
        """An outside agent's MCP client reaches the run's tools through this session now, from
        any web process."""
        if self.toolbox is not None:
            mcp_runs.LIVE.open(str(self.run.id), self.toolbox)
            await RELAY.join(str(self.run.id))
        if self.toolbox is not None and self.agent is not None:
            # Its tool calls over HTTP find the run too (lab/web/sandbox_http.py), whatever wire
            # the agent is reached on: a bot that runs its tools remotely points them there.
            endpoint = self.agent.identity.endpoint or ""
            call_opened(LiveCall(self._call_id(), endpoint, self.toolbox, run_owner(self.run)))

    def _call_id(self) -> str:
        """The id the agent's sandbox calls name the run by: the one its wire told it, if any."""
        return self.agent.call_id if isinstance(self.agent, CallNamed) else str(self.run.id)

    async def caller_says(
        self,
        text: str,
        *,
        source: CallerSource = "typed",
        means: CallerMeaning | None = None,
        audio: bytes | None = None,
        at: float | None = None,
    ) -> None:
        """One final caller transcript (with its audio on voice runs); it cuts any agent speech
        still playing when it came, or at `at` (a scripted line's own moment on the run's clock).

        means: what the scripted line it comes from means, for the referee of an outside agent; the
        first transcript of a spoken line takes that line's meaning (the rest the lab's reading).
        """
        arrived = self.now() if at is None else at
        if source == "asr" and means is None:
            means, self.voiced_meaning = self.voiced_meaning, None
        async with self.working():
            await self.turns.caller_turn(
                text, source=source, arrived=arrived, means=means, audio=audio
            )

    async def plan_barge_in(self, text: str, into_ms: int) -> None:
        """A scripted line meant to cut into the next readback, told ahead to an agent on a
        live line (a phone call) so it goes out over the agent's own audio."""
        if isinstance(self.turns, ExternalAgentTurns):
            await self.turns.plan_barge_in(text, into_ms)

    async def caller_types(self, text: str) -> None:
        """A line the caller typed: an acknowledgement over agent speech is a backchannel, as
        the voice path hears one (guarded); anything else is the caller's turn."""
        if not await typed_backchannel(self, text):
            await self.caller_says(text, source="typed")

    async def interrupt(self, *, cause_event_id: str, at: float) -> None:
        await self.speaker.interrupt(cause_event_id=cause_event_id, at=at)

    async def reject_input(self, *, reason_kind: str, reason: str) -> None:
        if not self.ended:
            await self.record(InputRejected(reason_kind=reason_kind, reason=reason))

    async def finish(self, *, reason_kind: EndKind, reason: str) -> None:
        """End the run once the agent's queued speech has been sent and played (or reported)."""
        await self.wait_idle()
        if self.voice is not None:
            await self.voice.played_out()
        await self.end(reason_kind=reason_kind, reason=reason)

    async def close_quiet_call(self, *, quiet_s: float) -> None:
        """The caller has gone quiet after the agent's answer: say goodbye and end."""
        async with self.working():
            await self.turns.farewell()
        await self.finish(
            reason_kind="completed",
            reason=f"the caller said nothing for {quiet_s:g} s after the agent's last answer",
        )

    def close(self) -> None:
        """Stop the session's own background work without ending the run (it moves elsewhere)."""
        if self._quiet is not None and self._quiet is not asyncio.current_task():
            self._quiet.cancel()
        self.tools.cancel()
        if self.toolbox is not None:
            mcp_runs.LIVE.close(str(self.run.id), self.toolbox)
            call_closed(self._call_id(), self.toolbox)

    async def end(self, *, reason_kind: EndKind, reason: str) -> None:
        if self.ended:
            return
        self.close()
        await self.tools.settle_open()
        self.timeline.cut(self.now())
        for hook in self.before_end:
            await hook()
        # Every event the caller's frames handed over is in the log and announced before this.
        await self.writer.drain()
        await self.record(RunEnded(reason_kind=reason_kind, reason=reason))
        await database_sync_to_async(store.run_mark_ended)(run=self.run)
        if self.agent is not None:
            # A connector that will not close must not keep the run from ending.
            with contextlib.suppress(Exception):
                async with asyncio.timeout(AGENT_CLOSE_S):
                    await self.agent.close()

    def _identity(self) -> AgentIdentity | None:
        """The outside agent's identity; the tools the lab offers it, unless it said otherwise."""
        return None if self.agent is None else agent_identity(self.agent.identity, self.toolbox)

    async def _actions_observed(self) -> None:
        """A phone call none of whose tool calls reached the lab says so before it ends."""
        if (fault := actions_unobserved(self.log.events)) is not None:
            await self.record(fault)

    async def _agent_faulted(self, reason: str) -> None:
        await self.end(reason_kind="error", reason=f"the agent under test faulted: {reason}")

    async def play_script(self) -> None:
        """Play the scenario's scripted caller, then end the run."""
        await caller.play_script(self)

    async def wait_idle(self) -> None:
        """Return once no turn is being processed and the agent has stopped speaking."""
        while True:
            async with self._changed:
                await self._changed.wait_for(
                    lambda: self._busy == 0 and (self.voice is None or self.voice.idle)
                )
            remaining = self.timeline.busy_until(self.now()) - self.now()
            if remaining <= 0 and self._busy == 0:
                return
            await asyncio.sleep(max(remaining, 0))

    async def wait_for_event(self, since: int, match: Callable[[Event], bool]) -> Event:
        def found() -> Event | None:
            return next((e for e in self.events[since:] if match(e)), None)

        async with self._changed:
            await self._changed.wait_for(lambda: found() is not None or self.ended)
        event = found()
        if event is None:
            raise RunClosed("the run ended while the scripted caller was waiting")
        return event

    async def record(self, payload: EventPayload) -> Event:
        """Append, persist and broadcast one event, then let the gate and the agent react."""
        event = await self.log.append(payload)
        await self._reacted(event)
        return event

    async def _reacted(self, event: Event) -> None:
        await self.turns.react(event)
        async with self._changed:
            self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def working(self) -> AsyncIterator[None]:
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            async with self._changed:
                self._changed.notify_all()
