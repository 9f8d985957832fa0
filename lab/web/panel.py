"""The live panel: a projection of the event log into transcript, decisions and checklist.

The run page renders it whole; the consumer renders the fragments one event adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.template.loader import render_to_string

from lab.audit.turn_view import VERDICT_LABELS, ChunkView
from lab.evaluation.evaluator import evaluate
from lab.events.types import (
    AgentFaulted,
    AgentInterrupted,
    AgentUtterance,
    CallerUnderstood,
    CallerUtterance,
    CitationBlocked,
    CommitFailed,
    CommitReconciled,
    CommitSucceeded,
    CommitUncertain,
    CueMissed,
    Event,
    GateDecision,
    InputRejected,
    IntentRevised,
    LateResultRejected,
    LookupFailed,
    PhoneBargeIn,
    PhoneLatency,
    ProposalExpired,
    ProposalMade,
    RetrievalDone,
    RunStarted,
    ToolCallInvalid,
    TurnGraded,
    TurnGrounding,
    TurnLatency,
)
from lab.runs.ending import QUIET_END_S
from lab.scenarios.contracts import Contract
from lab.web.event_lines import summarize
from lab.web.waterfall import waterfalls

TEMPLATE = "web/run.html"


@dataclass(frozen=True)
class TurnAudit:
    """An agent turn's grade and grounding audit as the panel shows them, each once recorded."""

    graded: TurnGraded | None
    grounding: TurnGrounding | None
    chunks: list[ChunkView]

    @property
    def verdict_label(self) -> str | None:
        return VERDICT_LABELS[self.graded.grade.verdict] if self.graded else None


@dataclass(frozen=True)
class TranscriptItem:
    event_id: str
    speaker: str
    text: str
    heard_text: str | None
    note: str
    audit: TurnAudit | None = None

    @property
    def unheard_text(self) -> str:
        """The words an interruption cut off before the caller heard them."""
        heard_words = len((self.heard_text or "").split())
        return " ".join(self.text.split()[heard_words:])


@dataclass(frozen=True)
class DecisionItem:
    event_id: str
    tone: str
    title: str
    detail: str
    rests_on: list[str]


def turn_audit(utterance: Event, events: list[Event]) -> TurnAudit | None:
    """The grade and grounding events recorded for an utterance; None before either arrives."""
    graded = grounding = None
    retrieval: RetrievalDone | None = None
    retrieval_id = getattr(utterance.payload, "retrieval_event_id", None)
    for event in events:
        match event.payload:
            case TurnGraded(utterance_event_id=utterance.id) as p:
                graded = p
            case TurnGrounding(utterance_event_id=utterance.id) as p:
                grounding = p
            case RetrievalDone() as p if event.id == retrieval_id:
                retrieval = p
    if graded is None and grounding is None:
        return None
    cited = set(grounding.audit.cited) if grounding else set()
    chunks = [
        ChunkView(number, chunk, chunk.id in cited)
        for number, chunk in enumerate(retrieval.chunks if retrieval else (), start=1)
    ]
    return TurnAudit(graded, grounding, chunks)


def transcript_item(event: Event, events: list[Event]) -> TranscriptItem | None:
    match event.payload:
        case CallerUtterance(text=text, source=source):
            return TranscriptItem(event.id, "caller", text, None, source)
        case AgentUtterance(text=text, purpose=purpose):
            cut = next(
                (
                    e.payload
                    for e in events
                    if isinstance(e.payload, AgentInterrupted)
                    and e.payload.utterance_event_id == event.id
                ),
                None,
            )
            heard = cut.heard_text if cut else None
            return TranscriptItem(
                event.id, "agent", text, heard, purpose, turn_audit(event, events)
            )
    return None


def decision_item(event: Event) -> DecisionItem | None:
    match event.payload:
        case GateDecision() as p:
            request = p.request
            target = request.proposal_id or f"revision {request.revision}"
            return DecisionItem(
                event.id,
                p.outcome.value,
                f"{p.outcome.value.upper()} {request.operation.value} · {target}",
                f"{p.reason_kind}: {p.reason}",
                p.rests_on,
            )
        case IntentRevised() as p:
            return DecisionItem(
                event.id,
                "info",
                f"Intent revision {p.revision}",
                summarize(event),
                [p.understood_event_id],
            )
        case ProposalMade() as p:
            grounds = [p.grounded_on] if p.grounded_on else []
            return DecisionItem(
                event.id, "info", f"Proposal {p.proposal_id}", summarize(event), grounds
            )
        case ProposalExpired() as p:
            return DecisionItem(
                event.id,
                "block",
                f"Proposal {p.proposal_id} expired",
                p.reason_kind,
                [p.cause_event_id],
            )
        case (
            LookupFailed()
            | LateResultRejected()
            | CommitFailed()
            | InputRejected()
            | AgentFaulted()
            | ToolCallInvalid()
        ):
            return DecisionItem(event.id, "block", event.type, summarize(event), [])
        case CommitSucceeded() as p:
            title = "Receipt replayed" if p.replayed else "Tool executed"
            return DecisionItem(event.id, "allow", title, summarize(event), [])
        case CommitUncertain():
            return DecisionItem(event.id, "info", "Commit outcome uncertain", summarize(event), [])
        case CueMissed():
            return DecisionItem(event.id, "info", "Cue missed", summarize(event), [])
        case CitationBlocked() as p:
            return DecisionItem(
                event.id,
                "block",
                f"Answer blocked: {p.reason_kind}",
                f"{p.reason}. Not spoken: {p.blocked_text!r}; said instead: {p.fallback!r}",
                [p.retrieval_event_id],
            )
        case CommitReconciled() as p:
            tone, title = (
                ("allow", "Reconciled: executed")
                if p.receipt
                else ("block", "Reconciled: not executed")
            )
            return DecisionItem(event.id, tone, title, f"{summarize(event)}. {p.evidence}", [])
    return None


SCRIPTED_LABEL = "the lab's scripted agent (in process)"


def agent_under_test(events: list[Event]) -> str:
    """Who was tested, as the run's own run.started says: an outside agent, or the lab's own."""
    started = next((e.payload for e in events if isinstance(e.payload, RunStarted)), None)
    if started is None or started.agent is None:
        return SCRIPTED_LABEL
    return started.agent.label()


def referee_used(events: list[Event]) -> str | None:
    """What judged an outside agent's caller turns, as their caller.understood events say: the
    scenario's annotations, the lab's understanding, or both; None for the lab's own agent."""
    started = next((e.payload for e in events if isinstance(e.payload, RunStarted)), None)
    heard = [e.payload for e in events if isinstance(e.payload, CallerUnderstood)]
    if started is None or started.agent is None or not heard:
        return None
    annotated = sum(understood.annotated for understood in heard)
    if annotated == len(heard):
        return "scenario annotations"
    if not annotated:
        return "the lab's understanding"
    return (
        f"scenario annotations ({annotated} of {len(heard)} caller turns), "
        "the lab's understanding for the rest"
    )


def panel_context(contract: Contract, events: list[Event]) -> dict:
    """Everything the run page needs to draw the panel from scratch."""
    return {
        "contract": contract,
        "events": [(event, summarize(event)) for event in events],
        "transcript": [t for e in events if (t := transcript_item(e, events))],
        "decisions": [d for e in events if (d := decision_item(e))],
        "evaluation": evaluate(contract, events),
        "ended": bool(events) and events[-1].type == "run.ended",
        "quiet_end_s": f"{QUIET_END_S:g}",
        "waterfalls": waterfalls(events),
        "agent_under_test": agent_under_test(events),
        "referee": referee_used(events),
    }


def _partial(name: str, context: dict) -> str:
    return render_to_string(f"{TEMPLATE}#{name}", context)


def event_fragments(contract: Contract, events: list[Event], event: Event) -> str:
    """The out-of-band HTML fragments that bring an open panel up to date with one new event."""
    parts = [_partial("event_append", {"event": event, "summary": summarize(event)})]
    if (item := transcript_item(event, events)) is not None:
        parts.append(_partial("transcript_append", {"item": item}))
    if isinstance(event.payload, AgentInterrupted | TurnGraded | TurnGrounding):
        # The utterance it changes is drawn again; an imported log may name one it lacks.
        target = event.payload.utterance_event_id
        original = next((e for e in events if e.id == target), None)
        if original is not None and (item := transcript_item(original, events)) is not None:
            parts.append(_partial("transcript_replace", {"item": item}))
    if (decision := decision_item(event)) is not None:
        parts.append(_partial("decision_append", {"decision": decision}))
    if isinstance(event.payload, CallerUnderstood):
        # What judged the caller's turns so far, as a reload would say it.
        parts.append(_partial("referee_line", {"referee": referee_used(events), "oob": True}))
    if isinstance(event.payload, TurnLatency | PhoneLatency | PhoneBargeIn):
        upto = next((i for i, e in enumerate(events) if e.id == event.id), len(events) - 1)
        parts.append(_partial("latency_append", {"turn": waterfalls(events[: upto + 1])[-1]}))
    ended = event.type == "run.ended"
    parts.append(
        _partial(
            "verdict_oob",
            {"evaluation": evaluate(contract, events), "ended": ended},
        )
    )
    return "".join(parts)


def agent_state_fragment(*, speaking: bool) -> str:
    """Whether the typed channel's agent is still talking: a line sent now would interrupt it."""
    return _partial("agent_state_oob", {"speaking": speaking})


def notice_fragment(message: str, *, tone: str = "error") -> str:
    return _partial("notice_oob", {"message": message, "tone": tone})
