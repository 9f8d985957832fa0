"""The turn loop for an agent the lab did not write: caller turns to it, what it does recorded.

The referee (lab/referee/referee.py) records what the scripted agent's own steps would: the
caller's turns understood (a scripted line as its contract says it is meant) and revised, the
agent's readbacks as proposals, its commits resting on them; the agent's tool calls go through
the run's GatedToolBox. Each turn has a deadline, and a fault (or a missed deadline) is recorded
and ends the run: it cannot pass.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from django.conf import settings

from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    AgentUnderTest,
    CallerTurn,
    Cut,
    FullDuplex,
    Interjecting,
    LineMeasured,
    PlannedBargeIn,
    Said,
    ToolObserved,
)
from lab.connectors.interface import TurnFinished as Finished
from lab.events.chain import digest
from lab.events.models import Run
from lab.events.types import (
    AgentFaulted,
    AgentFaultKind,
    AgentInterrupted,
    AgentUtterance,
    CallerSource,
    CallerUnderstood,
    CallerUtterance,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    IntentRevised,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalMade,
    RetrievalDone,
    UnderstandingKind,
    UtterancePurpose,
)
from lab.language.days import Week
from lab.policy.gate import GateState
from lab.referee.referee import Readback, Referee
from lab.runs.counters import RunCounters
from lab.runs.external_tools import GatedToolBox
from lab.runs.log import RunClosed
from lab.runs.retrieval import tenant_retriever
from lab.runs.speaker import Speaker
from lab.runs.tools import ToolCalls
from lab.scenarios.meaning import CallerMeaning
from lab.scripted.answers import Retrieve, retrieve, wants_retrieval
from lab.scripted.setup import calendar_week
from lab.scripted.steps import Say

Record = Callable[[EventPayload], Awaitable[Event]]
OnFault = Callable[[str], Awaitable[None]]
# Longer utterances are cut: an agent's runaway text must not flood the log or the page.
_MAX_SAY_CHARS = 2000
# Sentences one turn may say: a spoken reply has a handful, and 100 would take ten minutes to
# say; each is an event, graded and shown, so a reply that never ends must not flood the log.
MAX_TURN_SENTENCES = 100
_CLOSE_S = 2.0
# How long a live line's tool call waits for the log to record the caller's barge-in; under the
# reference bots' own tool timeouts (10-15 s).
CATCH_UP_S = 8.0


class ExternalAgentTurns:
    """AgentTurns' counterpart for an AgentUnderTest reached through a connector."""

    def __init__(
        self,
        *,
        run: Run,
        events: list[Event],
        record: Record,
        speaker: Speaker,
        tools: ToolCalls,
        counters: RunCounters,
        agent: AgentUnderTest,
        on_fault: OnFault,
        toolset: Toolset | None = None,
    ) -> None:
        self.guarded = run.mode == Mode.GUARDED
        self.events = events
        self.record = record
        self.speaker = speaker
        self.counters = counters
        self.outside = agent
        self.on_fault = on_fault
        self.gate = GateState.from_events(events)
        # The agent's own tools file may declare actions beyond the sandbox's (a cancel it runs
        # on its own tools): the referee follows those too, in their declared shapes.
        self.referee = Referee(
            tools=frozenset(tools.adapters) | (toolset.actions if toolset else frozenset()),
            week=toolset_week(toolset),
            shapes=toolset.shapes if toolset else None,
        )
        for event in events:
            self.referee.observe(event)
        self.tools = tools
        # A slow write waits for no caller line this agent cannot hear before it answers.
        tools.hold_for_caller &= isinstance(agent, Interjecting)
        self.toolbox = GatedToolBox(
            run=run,
            record=record,
            events=lambda: events,
            tools=tools,
            gate=self.gate,
            referee=self.referee,
            counters=counters,
            toolset=toolset,
            settled=self._log_caught_up,
        )
        self.lock = asyncio.Lock()
        # The offer (purpose, proposal id) the agent's current turn has read back, if any.
        self._offer: tuple[UtterancePurpose, str] | None = None
        # The retrieval.done the current caller turn's answer stands on, if the lab retrieved.
        self._retrieval: str | None = None
        # The agent.interrupted events already handed to the agent as its turns' cuts.
        self._cuts_told: set[str] = set()
        # When the agent's latest lookup answered with options (the loop's clock): a live line
        # takes the bot's next speech after it as its readback (lab/connectors/phone_barge.py).
        self._answered_s: float | None = None
        # Set while a barge-in has gone out on a live line and the scripted caller has not yet
        # reached it in the log: the bot may already act on the words, and the gate must decide
        # its calls on the revision they make, not the one before.
        self._caught_up = asyncio.Event()
        self._caught_up.set()

    async def react(self, event: Event) -> None:
        # The gate folds every event in both modes: as-is it decides nothing, but the expiries a
        # correction or an interruption causes are facts about the caller the evaluator reads.
        self.gate.apply(event)
        for reaction in self.gate.reactions(event):
            await self.record(reaction)
        self.referee.observe(event)
        if isinstance(event.payload, LookupSucceeded) and event.payload.options:
            self._answered_s = asyncio.get_running_loop().time()

    async def greet(self) -> None:
        async with self.lock:
            self._retrieval = None
            await self._pump(self.outside.greet(self.toolbox), "greeting")

    async def farewell(self) -> None:
        """The lab closes a quiet call without putting words in an outside agent's mouth."""

    async def drain(self) -> None:
        """Nothing is queued: an outside agent's steps run as it takes them."""

    async def caller_turn(
        self,
        text: str,
        *,
        source: CallerSource,
        arrived: float,
        means: CallerMeaning | None = None,
        audio: bytes | None = None,
    ) -> None:
        """One final caller transcript: it cuts agent speech, is refereed (on what its scripted
        line means, when there is one), and goes to the agent (with the caller's audio as the lab
        heard it, on voice runs)."""
        if self.tools.writing and isinstance(self.outside, Interjecting):
            # Its turn holds the lock, waiting on a write: the caller is heard as they speak,
            # and that turn answers them while the write is still in flight.
            said, _ = await self._heard(text, source, arrived, means)
            turn = CallerTurn(text=text, utterance_event_id=said.id, audio=audio, cut=self._cuts())
            await self.outside.interject(turn)
            return
        async with self.lock:
            said, understood = await self._heard(text, source, arrived, means)
            assert isinstance(understood.payload, CallerUnderstood)
            retrieval = await self._retrieve(understood.payload, understood.id, text)
            window = retrieval.payload if retrieval is not None else None
            self._retrieval = retrieval.id if retrieval is not None else None
            question = understood.payload.kind is UnderstandingKind.QUESTION or window is not None
            turn = CallerTurn(
                text=text,
                utterance_event_id=said.id,
                audio=audio,
                cut=self._cuts(),
                knowledge=window.chunks if isinstance(window, RetrievalDone) else None,
            )
            await self._pump(
                self.outside.hear(turn, self.toolbox), "answer" if question else "acknowledge"
            )

    async def _heard(
        self, text: str, source: CallerSource, arrived: float, means: CallerMeaning | None
    ) -> tuple[Event, Event]:
        """The caller's utterance recorded, cutting agent speech, refereed and revised."""
        said = await self.record(CallerUtterance(text=text, source=source))
        await self.speaker.interrupt(cause_event_id=said.id, at=arrived)
        read = self.referee.understand(text, means).event(said.id)
        if means is not None:
            read = read.model_copy(update={"annotated": True})
        understood = await self.record(read)
        assert isinstance(understood.payload, CallerUnderstood)
        await self._revise(understood.payload, understood.id)
        self._caught_up.set()
        return said, understood

    async def plan_barge_in(self, text: str, into_ms: int) -> bool:
        """Hand a scripted barge-in to an agent on a live line, to go out over its next
        readback as the referee reads one; False: the agent takes turns, not a line."""
        if not isinstance(self.outside, FullDuplex):
            return False
        await self.outside.plan_barge_in(
            PlannedBargeIn(
                text,
                into_ms,
                lambda said: self.referee.readback(said) is not None,
                answered_s=lambda: self._answered_s,
                on_spoken=self._caught_up.clear,
            )
        )
        return True

    async def _log_caught_up(self) -> None:
        """Until the log holds a barge-in the live line already carried (bounded: a bot's own
        tool call gives up within seconds, and an unrecorded line is then decided on as it is)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CATCH_UP_S):
                await self._caught_up.wait()

    async def _retrieve(
        self, understood: CallerUnderstood, understood_id: str, text: str
    ) -> Event | None:
        """The lab's loop retrieves for a question as the scripted agent would (a RAG step), so
        the agent answers from the same window and its answer is graded against it."""
        if not wants_retrieval(understood, text):
            return None
        return await self.record(retrieve(Retrieve(text, understood_id), tenant_retriever()))

    def _cuts(self) -> tuple[Cut, ...]:
        """The agent speech cut since the last caller turn the agent heard, as the agent said it
        and as it was heard. On voice runs the cause is the caller's speech starting (VAD), not
        the utterance its words become, so every cut not yet handed over goes with this turn."""
        said = {e.id: e.payload.text for e in self.events if isinstance(e.payload, AgentUtterance)}
        cuts = [
            e
            for e in self.events
            if isinstance(e.payload, AgentInterrupted)
            and e.id not in self._cuts_told
            and e.payload.utterance_event_id in said
        ]
        self._cuts_told.update(e.id for e in cuts)
        return tuple(
            Cut(said=said[e.payload.utterance_event_id], heard=e.payload.heard_text)
            for e in cuts
            if isinstance(e.payload, AgentInterrupted)
        )

    async def _revise(self, understood: CallerUnderstood, understood_id: str) -> None:
        revision = self.referee.revise(understood)
        if revision is None:
            return
        await self.record(
            IntentRevised(
                revision=self.counters.next("revision"),
                action=revision.action,
                args=revision.args,
                heard=revision.heard,
                supersedes=revision.supersedes,
                understood_event_id=understood_id,
            )
        )

    async def _pump(self, stream: AsyncIterator[AgentOutput], purpose: UtterancePurpose) -> None:
        """Carry out one agent turn until it finishes, faults or misses its deadline."""
        timeout_s = settings.LAB_AGENT_TURN_TIMEOUT_S
        self._offer = None
        said = 0
        try:
            async with asyncio.timeout(timeout_s):
                async for output in stream:
                    match output:
                        case Said() if said == MAX_TURN_SENTENCES:
                            await self._fault(
                                "oversize",
                                f"the agent said more than {MAX_TURN_SENTENCES} sentences in one "
                                "turn; the lab stopped listening",
                            )
                            return
                        case Said(text=text, audio=audio):
                            said += 1
                            await self._say(text, purpose, audio)
                        case ToolObserved(call=call, result=result):
                            # Its own tools already ran: the lab records the call as it was,
                            # with the gate's decision beside it, so it is judged as any; a
                            # write the gate would have blocked still happened, and FAILs.
                            await self.toolbox.observe(call, result)
                        case LineMeasured(payload=payload):
                            await self.record(payload)
                        case Finished():
                            return
                        case AgentFault(kind=kind, reason=reason):
                            await self._fault(kind, reason)
                            return
        except TimeoutError:
            await self._fault(
                "timeout", f"the agent did not finish its turn within {timeout_s:g} s"
            )
        except RunClosed:
            raise
        except Exception as error:  # a connector's bug is the agent's fault, never a 500
            await self._fault("malformed", f"the connector failed: {type(error).__name__}: {error}")
        finally:
            await _close(stream)

    async def _fault(self, kind: AgentFaultKind, reason: str) -> None:
        reason = reason[:500]
        await self.record(AgentFaulted(fault_kind=kind, reason=reason))
        await self.on_fault(reason)

    async def _say(self, text: str, purpose: UtterancePurpose, audio: bytes | None = None) -> None:
        text = text.strip()[:_MAX_SAY_CHARS]
        if not text:
            return
        readback = self.referee.readback(text)
        proposal_id: str | None = None
        if readback is not None and readback.proposal_id is not None:
            purpose, proposal_id = "reconfirm", readback.proposal_id
        elif readback is not None:
            proposal_id = await self._propose(readback)
            purpose = "readback" if proposal_id else purpose
        elif self._offer is not None:
            # A streamed reply comes a sentence at a time: "Shall I book it?" after the time
            # read back is still that offer, and a caller who cuts into it interrupts the offer.
            purpose, proposal_id = self._offer
        if proposal_id is not None:
            self._offer = (purpose, proposal_id)
        retrieval = self._retrieval if purpose == "answer" else None
        await self.speaker.say(
            Say(text, purpose, proposal_id, retrieval_event_id=retrieval), audio=audio
        )

    async def _propose(self, readback: Readback) -> str | None:
        """Record the proposal a readback makes (the gate decides it first in guarded runs)."""
        if self.guarded:
            decision = await self.record(
                self.gate.decide(
                    GateRequest(
                        operation=Operation.PROPOSE,
                        action=readback.action,
                        revision=readback.revision,
                        args=readback.args,
                        lookup_event_id=readback.grounded_on,
                    )
                )
            )
            if isinstance(decision.payload, GateDecision) and (
                decision.payload.outcome is Outcome.BLOCK
            ):
                return None
        proposal_id = f"p-{self.counters.next('proposal')}"
        await self.record(
            ProposalMade(
                proposal_id=proposal_id,
                revision=readback.revision,
                action=readback.action,
                args=readback.args,
                args_hash=digest(readback.args),
                grounded_on=readback.grounded_on,
            )
        )
        return proposal_id


def toolset_week(toolset: Toolset | None) -> Week:
    """The calendar week the referee reads days on: the tools file's, else the calendar's."""
    return toolset.week if toolset is not None and toolset.week is not None else calendar_week()


async def _close(stream: AsyncIterator[AgentOutput]) -> None:
    """Close an agent turn's iterator, giving up on one that will not close."""
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_CLOSE_S):
            await aclose()
