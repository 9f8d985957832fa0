"""Every event type a run can record, as one discriminated union: the log's public vocabulary.

Pure: no Django, no I/O. The payloads live by family (conversation, decisions, tool events, speech
events, grounding events); the gate, the evaluator, the panel and the report import them from here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from lab.events.caller_events import Cue, CueMissed, PersonaAnswered, PersonaField
from lab.events.conversation import (
    AgentFaulted,
    AgentFaultKind,
    AgentIdentity,
    AgentInterrupted,
    AgentUtterance,
    CallerSource,
    CallerUnderstood,
    CallerUtterance,
    EndKind,
    InputRejected,
    IntentRevised,
    RunEnded,
    RunStarted,
    UtterancePurpose,
)
from lab.events.decisions import (
    GateDecision,
    GateRequest,
    ProposalExpired,
    ProposalMade,
)
from lab.events.grounding_events import (
    CitationBlocked,
    RetrievalDone,
    TurnGraded,
    TurnGradeRecovered,
    TurnGrounding,
)
from lab.events.phone_events import PhoneBargeIn, PhoneLatency
from lab.events.recording_events import RecordingClosed
from lab.events.speech_events import (
    AgentAudioPlayed,
    AgentAudioStarted,
    CallerBackchannel,
    EchoIgnored,
    LineImpaired,
    SpeculationDiscarded,
    SpeechEnded,
    SpeechStarted,
    Transcribed,
    TranscriptSignal,
    TurnCandidate,
    TurnDecided,
    TurnLatency,
    VoiceEndClock,
)
from lab.events.tool_events import (
    PARTS_OF_DAY,
    CommitFailed,
    CommitFailureKind,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Receipt,
    ReconcileTrigger,
    ToolCallInvalid,
    ToolCallObserved,
    option_grounds,
)
from lab.events.vocabulary import (
    Action,
    Args,
    Channel,
    Confirmation,
    CueKind,
    Mode,
    Operation,
    Outcome,
    UnderstandingKind,
)

__all__ = [
    "EVENT_LIST",
    "PARTS_OF_DAY",
    "PAYLOAD",
    "Action",
    "AgentAudioPlayed",
    "AgentAudioStarted",
    "AgentFaultKind",
    "AgentFaulted",
    "AgentIdentity",
    "AgentInterrupted",
    "AgentUtterance",
    "Args",
    "CallerBackchannel",
    "CallerSource",
    "CallerUnderstood",
    "CallerUtterance",
    "Channel",
    "CitationBlocked",
    "CommitFailed",
    "CommitFailureKind",
    "CommitReconciled",
    "CommitStarted",
    "CommitSucceeded",
    "CommitUncertain",
    "Confirmation",
    "Cue",
    "CueKind",
    "CueMissed",
    "EchoIgnored",
    "EndKind",
    "Event",
    "EventPayload",
    "GateDecision",
    "GateRequest",
    "InputRejected",
    "IntentRevised",
    "LateResultRejected",
    "LineImpaired",
    "LookupFailed",
    "LookupStarted",
    "LookupSucceeded",
    "Mode",
    "Operation",
    "Outcome",
    "PersonaAnswered",
    "PersonaField",
    "PhoneBargeIn",
    "PhoneLatency",
    "ProposalExpired",
    "ProposalMade",
    "Receipt",
    "ReconcileTrigger",
    "RecordingClosed",
    "RetrievalDone",
    "RunEnded",
    "RunStarted",
    "SpeculationDiscarded",
    "SpeechEnded",
    "SpeechStarted",
    "ToolCallInvalid",
    "ToolCallObserved",
    "Transcribed",
    "TranscriptSignal",
    "TurnCandidate",
    "TurnDecided",
    "TurnGradeRecovered",
    "TurnGraded",
    "TurnGrounding",
    "TurnLatency",
    "UnderstandingKind",
    "UtterancePurpose",
    "VoiceEndClock",
    "event_id_for",
    "option_grounds",
]

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
    | AgentFaulted
    | ToolCallInvalid
    | ToolCallObserved
    | SpeechStarted
    | SpeechEnded
    | Transcribed
    | AgentAudioStarted
    | AgentAudioPlayed
    | TurnLatency
    | TurnCandidate
    | TurnDecided
    | SpeculationDiscarded
    | CallerBackchannel
    | EchoIgnored
    | LineImpaired
    | PhoneLatency
    | PhoneBargeIn
    | CueMissed
    | PersonaAnswered
    | RetrievalDone
    | CitationBlocked
    | TurnGraded
    | TurnGrounding
    | TurnGradeRecovered
    | RecordingClosed
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
