"""One line per event saying what it records: the panel's event log and its decisions."""

from __future__ import annotations

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
    if line.keypad is not None:
        parts.append(f"keys {line.keypad} pressed")
    kinds = ", ".join(line.kinds)
    return f"caller line {line.line} over an impaired line ({kinds}): {'; '.join(parts)}"
