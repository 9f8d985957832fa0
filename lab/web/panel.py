"""The live panel: a projection of the event log into transcript, decisions and checklist.

The run page renders it whole; the consumer renders the fragments one event adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.template.loader import render_to_string

from lab.audit.turn_view import VERDICT_LABELS, ChunkView
from lab.evaluation.evaluator import evaluate
from lab.events.types import (
    AgentAudioPlayed,
    AgentAudioStarted,
    AgentFaulted,
    AgentInterrupted,
    AgentUtterance,
    CallerUnderstood,
    CallerUtterance,
    CitationBlocked,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    CueMissed,
    Event,
    GateDecision,
    InputRejected,
    IntentRevised,
    LateResultRejected,
    LineImpaired,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    PersonaAnswered,
    PhoneBargeIn,
    PhoneLatency,
    ProposalExpired,
    ProposalMade,
    RecordingClosed,
    RetrievalDone,
    RunEnded,
    RunStarted,
    SpeechEnded,
    SpeechStarted,
    ToolCallInvalid,
    ToolCallObserved,
    Transcribed,
    TurnGraded,
    TurnGrounding,
    TurnLatency,
)
from lab.runs.ending import QUIET_END_S
from lab.scenarios.contracts import Contract
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


def _args(args: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def summarize(event: Event) -> str:
    """One line that says what the event records."""
    match event.payload:
        case RunStarted() as p:
            tested = f", agent {p.agent.label()}" if p.agent else ""
            return (
                f"{p.scenario_id} v{p.scenario_version}, {p.mode} mode, {p.channel} channel{tested}"
            )
        case CallerUtterance() as p:
            return f"caller ({p.source}): {p.text}"
        case CallerUnderstood() as p:
            action = f" {p.action}" if p.action else ""
            return f"understood {p.kind}{action} {_args(p.args)}".rstrip()
        case IntentRevised() as p:
            return f"revision {p.revision}: {p.action} {_args(p.args)}"
        case AgentUtterance() as p:
            return f"agent ({p.purpose}, {p.duration_ms} ms): {p.text}"
        case AgentInterrupted() as p:
            return f"agent cut at {p.heard_ms} ms in {p.utterance_event_id} by {p.cause_event_id}"
        case GateDecision() as p:
            return f"gate {p.outcome} {p.request.operation}: {p.reason_kind}"
        case ProposalMade() as p:
            return f"proposal {p.proposal_id} of revision {p.revision}: {_args(p.args)}"
        case ProposalExpired() as p:
            return f"proposal {p.proposal_id} expired ({p.reason_kind})"
        case LookupStarted() as p:
            return f"lookup {p.attempt_id} attempt {p.attempt}: {_args(p.query)}"
        case LookupSucceeded() as p:
            return f"lookup {p.attempt_id} answered {len(p.options)} option(s)"
        case LookupFailed() as p:
            return f"lookup {p.attempt_id} failed: {p.failure_kind}"
        case LateResultRejected() as p:
            return f"late result of {p.attempt_id} rejected"
        case CommitStarted() as p:
            return f"commit {p.attempt_id} of {p.proposal_id}: {_args(p.args)}"
        case CommitSucceeded() as p:
            replay = "replayed " if p.replayed else ""
            return (
                f"{replay}receipt {p.receipt.receipt_id} (execution {p.receipt.execution_id[:8]})"
            )
        case CommitFailed() as p:
            return f"commit {p.attempt_id} failed: {p.failure_kind}"
        case CommitUncertain() as p:
            return f"commit {p.attempt_id} outcome uncertain: {p.reason}; waiting for the write"
        case CommitReconciled() as p:
            found = (
                f"receipt {p.receipt.receipt_id} (execution {p.receipt.execution_id[:8]})"
                if p.receipt
                else "did not execute"
            )
            return f"commit {p.attempt_id} reconciled ({p.trigger}): {found}"
        case InputRejected() as p:
            return f"input rejected ({p.reason_kind}): {p.reason}"
        case AgentFaulted() as p:
            return f"agent under test faulted ({p.fault_kind}): {p.reason}"
        case ToolCallInvalid() as p:
            return f"tool call {p.call_id} to {p.name} refused: {p.reason}"
        case ToolCallObserved() as p:
            return (
                f"the agent ran its own {p.name} (call {p.call_id}); observed after the fact, "
                "the gate could not stand in front of it"
            )
        case RunEnded() as p:
            return f"run ended ({p.reason_kind}): {p.reason}"
        case SpeechStarted() as p:
            return f"caller speech started at {p.stream_ms} ms of audio"
        case SpeechEnded() as p:
            return f"caller speech ended at {p.stream_ms} ms ({p.segment_ms} ms segment)"
        case Transcribed() as p:
            return f"transcribed in {p.latency_ms} ms by {p.model}: {p.text!r}"
        case AgentAudioStarted() as p:
            return f"first audio of {p.utterance_event_id} sent ({p.synth_ms} ms synthesis)"
        case AgentAudioPlayed() as p:
            return f"browser played {p.played_ms} of {p.total_ms} ms of {p.utterance_event_id}"
        case TurnLatency() as p:
            return f"turn latency {p.total_ms} ms (end of speech to first agent audio)"
        case PhoneLatency() as p:
            return (
                f"phone turn latency {p.latency_ms} ms (caller's last voiced sample to bot audio)"
            )
        case PhoneBargeIn() as p:
            stop = "its clear" if p.cleared else "the end of its audio"
            return (
                f"caller cut in {p.into_ms} ms into the readback ({p.late_ms} ms late); the bot "
                f"stopped {p.response_ms} ms later ({stop}), {p.talk_over_ms} ms of talk-over"
            )
        case RetrievalDone() as p:
            return f"retrieved {len(p.chunks)} chunk(s) by {p.retriever} for {p.query!r}"
        case CitationBlocked() as p:
            return f"answer blocked ({p.reason_kind}): {p.reason}"
        case TurnGraded() as p:
            return f"{p.utterance_event_id} graded {p.grade.verdict}: {p.grade.rationale}"
        case TurnGrounding() as p:
            return f"{p.utterance_event_id} grounding {p.audit.verdict}"
        case RecordingClosed() as p:
            cut = ", truncated at the size cap" if p.truncated else ""
            return f"recording closed: {p.duration_ms} ms stereo, sha256 {p.digest[:12]}…{cut}"
        case LineImpaired() as p:
            return _line_summary(p)
        case CueMissed() as p:
            return (
                f"caller line {p.line} said without its cue: no {p.cue} came "
                f"in the {p.waited_ms} ms it waited"
            )
        case PersonaAnswered() as p:
            return f"the agent asked for {', '.join(p.asked)}; the caller answers from its persona"
    return event.type


def _line_summary(line: LineImpaired) -> str:
    parts = [f"{line.frames_lost} of {line.frames} frames lost"]
    if line.frames_late:
        parts.append(f"{line.frames_late} late (up to {line.max_late_ms} ms)")
    if line.snr_db is not None:
        parts.append(f"SNR {line.snr_db:.1f} dB")
    if line.clipped_samples is not None:
        parts.append(f"{line.clipped_samples} samples clipped")
    kinds = ", ".join(line.kinds)
    return f"caller line {line.line} over an impaired line ({kinds}): {'; '.join(parts)}"


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
