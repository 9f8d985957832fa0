"""Every event type a run can record, as pydantic models: the one place they are defined.

Pure: no Django, no I/O. The gate, the evaluator, the panel and the report all read these.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from lab.grading.grounding import GroundingAudit
from lab.grading.schema import TurnGrade
from lab.retrieval.window import RetrievalWindow, RetrievedChunk

Args = dict[str, str | int]


class Mode(StrEnum):
    GUARDED = "guarded"
    UNGUARDED = "unguarded"


class Channel(StrEnum):
    TYPED = "typed"
    VOICE = "voice"


class Action(StrEnum):
    BOOK = "book"
    REFUND = "refund"


class Operation(StrEnum):
    LOOKUP = "lookup"
    PROPOSE = "propose"
    COMMIT = "commit"


class Outcome(StrEnum):
    ALLOW = "allow"
    BLOCK = "block"
    REPLAY = "replay"


class UnderstandingKind(StrEnum):
    REQUEST = "request"
    CORRECTION = "correction"
    CONFIRM = "confirm"
    POSITIVE = "positive"
    DECLINE = "decline"
    UNSUPPORTED = "unsupported"
    UNCLEAR = "unclear"
    QUESTION = "question"


class Confirmation(StrEnum):
    """What a caller turn does to the proposal awaiting confirmation."""

    CONFIRM = "confirm"
    NOT_CONFIRM = "not_confirm"
    UNCLEAR = "unclear"


# Why a turn was classified as it was: the family of the cue it matched.
CueKind = Literal[
    "explicit",
    "decline",
    "presence",
    "hedge",
    "positive",
    "unrelated",
    "other_action",
    "clarify",
    "values",
    "request",
    "question",
    "identity",
    "capabilities",
    "business_fact",
    "out_of_scope",
    "noise",
]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _omit_unset(model: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Drop fields added after logs were first written while unset, so old events re-hash alike."""
    for name in model._added_later:
        if not getattr(model, name):
            data.pop(name, None)
    return data


class RunStarted(_Payload):
    type: Literal["run.started"] = "run.started"
    run_id: str
    scenario_id: str
    scenario_version: int
    contract_hash: str
    mode: Mode
    channel: Channel
    evaluator_version: str
    gate_version: str
    agent_version: str
    # The agent answered without retrieval. Left out while False, so old events re-hash alike.
    ungrounded: bool = False

    _added_later: ClassVar[tuple[str, ...]] = ("ungrounded",)

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_unset(self, handler(self))


class CallerUtterance(_Payload):
    """A final caller transcript: typed, played by the scripted caller, or recognized from audio."""

    type: Literal["caller.utterance"] = "caller.utterance"
    text: str
    source: CallerSource


CallerSource = Literal["typed", "script", "asr"]


class CallerUnderstood(_Payload):
    """What the agent's language understanding made of one caller utterance.

    confirmation, cue_kind and cue say what the turn does to a pending proposal and why;
    ambiguous names values that were said but could be read more than one way (ask again).
    """

    type: Literal["caller.understood"] = "caller.understood"
    utterance_event_id: str
    kind: UnderstandingKind
    action: Action | None = None
    args: Args = Field(default_factory=dict)
    heard: dict[str, str] = Field(default_factory=dict)
    confirmation: Confirmation | None = None
    cue_kind: CueKind | None = None
    cue: str | None = None
    ambiguous: dict[str, str] = Field(default_factory=dict)

    # Added after logs were first written: left out while unset, so old events re-hash alike.
    _added_later: ClassVar[tuple[str, ...]] = ("confirmation", "cue_kind", "cue", "ambiguous")

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_unset(self, handler(self))


class IntentRevised(_Payload):
    """A new revision of the caller's request; every earlier revision loses authority."""

    type: Literal["intent.revised"] = "intent.revised"
    revision: int
    action: Action
    args: Args
    heard: dict[str, str] = Field(default_factory=dict)
    supersedes: int | None = None
    understood_event_id: str


UtterancePurpose = Literal[
    "greeting",
    "readback",
    "reconfirm",
    "acknowledge",
    "clarify",
    "answer",
    "lookup",
    "failure",
    "receipt",
    "refuse",
    "goodbye",
]


class AgentUtterance(_Payload):
    type: Literal["agent.utterance"] = "agent.utterance"
    text: str
    purpose: UtterancePurpose
    duration_ms: int
    proposal_id: str | None = None
    # The retrieval the answer stood on; text keeps its [KB-N] markers, speech never says them.
    retrieval_event_id: str | None = None

    _added_later: ClassVar[tuple[str, ...]] = ("retrieval_event_id",)

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_unset(self, handler(self))


class AgentInterrupted(_Payload):
    """The caller cut into agent speech; what they heard ends at heard_ms."""

    type: Literal["agent.interrupted"] = "agent.interrupted"
    utterance_event_id: str
    cause_event_id: str
    heard_ms: int
    heard_text: str


class GateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: Operation
    action: Action
    revision: int
    args: Args = Field(default_factory=dict)
    proposal_id: str | None = None
    confirmation_event_id: str | None = None
    lookup_event_id: str | None = None


class GateDecision(_Payload):
    type: Literal["gate.decision"] = "gate.decision"
    request: GateRequest
    outcome: Outcome
    reason_kind: str
    reason: str
    rests_on: list[str]
    idempotency_key: str | None = None


class ProposalMade(_Payload):
    type: Literal["proposal.made"] = "proposal.made"
    proposal_id: str
    revision: int
    action: Action
    args: Args
    args_hash: str
    grounded_on: str | None = None


class ProposalExpired(_Payload):
    type: Literal["proposal.expired"] = "proposal.expired"
    proposal_id: str
    reason_kind: Literal["superseded", "interrupted"]
    cause_event_id: str


class LookupStarted(_Payload):
    type: Literal["tool.lookup.started"] = "tool.lookup.started"
    attempt_id: str
    attempt: int
    revision: int
    action: Action
    query: Args
    authorized_by: str | None = None


class LookupSucceeded(_Payload):
    type: Literal["tool.lookup.succeeded"] = "tool.lookup.succeeded"
    attempt_id: str
    options: list[Args]


# The calendar's parts of the day as [start, end) hours: the adapter filters by them and the
# agent maps what callers say ("after lunch", "around two") onto them.
PARTS_OF_DAY: dict[str, tuple[int, int]] = {
    "morning": (0, 12),
    "afternoon": (12, 17),
    "evening": (17, 24),
}


def option_grounds(option: Args, args: Args) -> bool:
    """Whether a lookup option grounds args: max_X keys bound args[X], other keys must equal."""
    for key, expected in option.items():
        if key.startswith("max_"):
            value = args.get(key.removeprefix("max_"))
            if not (isinstance(value, int) and isinstance(expected, int) and value <= expected):
                return False
        elif args.get(key) != expected:
            return False
    return True


class LookupFailed(_Payload):
    type: Literal["tool.lookup.failed"] = "tool.lookup.failed"
    attempt_id: str
    failure_kind: Literal["timeout", "error"]
    reason: str


class LateResultRejected(_Payload):
    """A result that arrived after its attempt had already timed out."""

    type: Literal["tool.late_result.rejected"] = "tool.late_result.rejected"
    attempt_id: str
    reason: str


class Receipt(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    receipt_id: str
    execution_id: str
    idempotency_key: str
    adapter: str
    action: Action
    args: Args


class CommitStarted(_Payload):
    type: Literal["tool.commit.started"] = "tool.commit.started"
    attempt_id: str
    idempotency_key: str
    action: Action
    args: Args
    args_hash: str
    revision: int
    proposal_id: str | None
    confirmation_event_id: str | None
    authorized_by: str | None


class CommitSucceeded(_Payload):
    """A receipt; replayed=True when an earlier execution's receipt was returned instead."""

    type: Literal["tool.commit.succeeded"] = "tool.commit.succeeded"
    attempt_id: str
    receipt: Receipt
    replayed: bool


CommitFailureKind = Literal["timeout", "error", "conflict", "not_found", "unauthorized"]


class CommitFailed(_Payload):
    type: Literal["tool.commit.failed"] = "tool.commit.failed"
    attempt_id: str
    failure_kind: CommitFailureKind
    reason: str


class CommitUncertain(_Payload):
    """A commit that did not answer in time: it may still execute, so its outcome is open."""

    type: Literal["tool.commit.uncertain"] = "tool.commit.uncertain"
    attempt_id: str
    reason: str


ReconcileTrigger = Literal["timeout", "error", "run_ending", "recovery"]


class CommitReconciled(_Payload):
    """What the sandbox holds for a commit attempt whose outcome was open: a receipt, or none.

    trigger: timeout = an uncertain commit's write answered late; error = the write raised;
    run_ending = the run ended with the write in flight; recovery = found when a run was
    reopened after its process stopped in the write window.
    """

    type: Literal["tool.commit.reconciled"] = "tool.commit.reconciled"
    attempt_id: str
    idempotency_key: str
    receipt: Receipt | None
    replayed: bool = False
    trigger: ReconcileTrigger
    evidence: str

    @property
    def executed(self) -> bool:
        return self.receipt is not None


class InputRejected(_Payload):
    """Input the lab refused, kept so that nothing the caller sent is silently lost."""

    type: Literal["input.rejected"] = "input.rejected"
    reason_kind: str
    reason: str


class SpeechStarted(_Payload):
    type: Literal["vad.speech_started"] = "vad.speech_started"
    stream_ms: int


class SpeechEnded(_Payload):
    type: Literal["vad.speech_ended"] = "vad.speech_ended"
    stream_ms: int
    segment_ms: int


class Transcribed(_Payload):
    type: Literal["asr.transcribed"] = "asr.transcribed"
    text: str
    segment_ms: int
    latency_ms: int
    model: str


class AgentAudioStarted(_Payload):
    """The first audio frame of an agent utterance left the server."""

    type: Literal["agent.audio_started"] = "agent.audio_started"
    utterance_event_id: str
    synth_ms: int


class AgentAudioPlayed(_Payload):
    """What the browser reports it actually played of one agent utterance."""

    type: Literal["agent.audio_played"] = "agent.audio_played"
    utterance_event_id: str
    played_ms: int
    total_ms: int


class TurnLatency(_Payload):
    """The latency chain of one voice turn, each step in milliseconds."""

    type: Literal["turn.latency"] = "turn.latency"
    caller_event_id: str
    endpointing_ms: int
    recognition_ms: int
    agent_ms: int
    synthesis_ms: int
    total_ms: int


class RetrievalDone(_Payload):
    """The knowledge-base chunks a caller's question retrieved, best first.

    confidence is the top score (0.0 when nothing matched); a turn without this event had no
    retrieval, and its confidence is null.
    """

    type: Literal["retrieval.done"] = "retrieval.done"
    understood_event_id: str
    query: str
    retriever: str
    knowledge_base: str
    chunks: tuple[RetrievedChunk, ...] = ()
    confidence: float

    def window(self) -> RetrievalWindow:
        return RetrievalWindow(
            query=self.query,
            retriever=self.retriever,
            knowledge_base=self.knowledge_base,
            chunks=self.chunks,
        )


class CitationBlocked(_Payload):
    """require_citation stopped an answer that had retrieval context but cited none of it."""

    type: Literal["citation.blocked"] = "citation.blocked"
    retrieval_event_id: str
    blocked_text: str
    reason_kind: Literal["no_marker", "orphan_marker"]
    reason: str
    fallback: str


class TurnGraded(_Payload):
    """The per-turn grader's verdict on one agent utterance, against a versioned constraint list."""

    type: Literal["turn.graded"] = "turn.graded"
    utterance_event_id: str
    retrieval_event_id: str | None = None
    caller_turn: str | None = None
    grade: TurnGrade


class TurnGrounding(_Payload):
    """The grounding audit of one agent utterance: what retrieval found and what it cited."""

    type: Literal["turn.grounding"] = "turn.grounding"
    utterance_event_id: str
    retrieval_event_id: str | None = None
    audit: GroundingAudit


EndKind = Literal["completed", "abandoned", "caller_left", "error"]


class RunEnded(_Payload):
    type: Literal["run.ended"] = "run.ended"
    reason_kind: EndKind
    reason: str


EventPayload = Annotated[
    RunStarted
    | CallerUtterance
    | CallerUnderstood
    | IntentRevised
    | AgentUtterance
    | AgentInterrupted
    | GateDecision
    | ProposalMade
    | ProposalExpired
    | LookupStarted
    | LookupSucceeded
    | LookupFailed
    | LateResultRejected
    | CommitStarted
    | CommitSucceeded
    | CommitFailed
    | CommitUncertain
    | CommitReconciled
    | InputRejected
    | SpeechStarted
    | SpeechEnded
    | Transcribed
    | AgentAudioStarted
    | AgentAudioPlayed
    | TurnLatency
    | RetrievalDone
    | CitationBlocked
    | TurnGraded
    | TurnGrounding
    | RunEnded,
    Field(discriminator="type"),
]


class Event(BaseModel):
    """One entry of a run's log. prev_hash/hash chain the log (RFC 8785 canonical JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    seq: int = Field(ge=1)
    at: datetime
    payload: EventPayload
    prev_hash: str
    hash: str

    @property
    def type(self) -> str:
        return self.payload.type


EVENT_LIST = TypeAdapter(list[Event])
PAYLOAD = TypeAdapter(EventPayload)


def event_id_for(seq: int) -> str:
    return f"ev-{seq:05d}"
