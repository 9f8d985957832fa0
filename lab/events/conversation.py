"""What the caller and the agent said and did with it: utterances, understanding, revisions."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    Field,
)

from lab.events.vocabulary import (
    Action,
    Args,
    Channel,
    Confirmation,
    CueKind,
    EvolvingPayload,
    Mode,
    PayloadModel,
    UnderstandingKind,
)

ConnectorKind = Literal["scripted", "openai", "pipecat", "mcp", "twilio", "telnyx", "pcm"]


class AgentIdentity(EvolvingPayload):
    """Who was tested, as run.started records it; never a secret, only digests of what was given."""

    _added_later: ClassVar[tuple[str, ...]] = (
        "tools_observed_only",
        "tools_file_digest",
        "tools_mapping",
        "tools_today",
    )

    connector: ConnectorKind
    endpoint: str | None = None
    model: str | None = None
    tools_digest: str | None = None
    system_prompt_digest: str | None = None
    # The agent runs its own tools (a pipecat bot's function handlers): the lab sees each call
    # only after it ran, so the gate could not stand in front of it, guarded or not.
    tools_observed_only: bool = False
    # The agent's own tools file (lab/agent_tools): its digest, and the meaning each tool was
    # read with (kind, action, argument roles, where results list options, what was inferred).
    tools_file_digest: str | None = None
    tools_mapping: dict[str, Any] | None = None
    # The tools file's own `today` (ISO date) its days were read against; None: the lab's.
    tools_today: str | None = None

    def label(self) -> str:
        """One line for pages and commands: 'openai http://127.0.0.1:9/v1 (model scripted)'."""
        parts: list[str] = [self.connector]
        if self.endpoint:
            parts.append(self.endpoint)
        if self.model:
            parts.append(f"(model {self.model})")
        if self.tools_observed_only:
            parts.append("(its own tools, observed only: the gate could not stand in front)")
        return " ".join(parts)

    def version(self) -> str:
        """run.started's agent_version for it: the connector and the model it reports, since no
        version of the lab's scripted agent was tested."""
        return f"{self.connector}:{self.model}" if self.model else self.connector


class RunStarted(EvolvingPayload):
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
    # An agent the lab did not write; left out for the scripted agent, as in older logs.
    agent: AgentIdentity | None = None

    _added_later: ClassVar[tuple[str, ...]] = ("ungrounded", "agent")


class CallerUtterance(PayloadModel):
    """A final caller transcript: typed, played by the scripted caller, or recognized from audio."""

    type: Literal["caller.utterance"] = "caller.utterance"
    text: str
    source: CallerSource


CallerSource = Literal["typed", "script", "asr"]


class CallerUnderstood(EvolvingPayload):
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
    # Read as the scripted line's annotation says it is meant (the referee of an outside agent),
    # not by the lab's understanding of its words.
    annotated: bool = False

    # Added after logs were first written: left out while unset, so old events re-hash alike.
    _added_later: ClassVar[tuple[str, ...]] = (
        "confirmation",
        "cue_kind",
        "cue",
        "ambiguous",
        "annotated",
    )


class IntentRevised(PayloadModel):
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


class AgentUtterance(EvolvingPayload):
    type: Literal["agent.utterance"] = "agent.utterance"
    text: str
    purpose: UtterancePurpose
    duration_ms: int
    proposal_id: str | None = None
    # The retrieval the answer stood on; text keeps its [KB-N] markers, speech never says them.
    retrieval_event_id: str | None = None

    _added_later: ClassVar[tuple[str, ...]] = ("retrieval_event_id",)


class AgentInterrupted(PayloadModel):
    """The caller cut into agent speech; what they heard ends at heard_ms."""

    type: Literal["agent.interrupted"] = "agent.interrupted"
    utterance_event_id: str
    cause_event_id: str
    heard_ms: int
    heard_text: str


class InputRejected(PayloadModel):
    """Input the lab refused, kept so that nothing the caller sent is silently lost."""

    type: Literal["input.rejected"] = "input.rejected"
    reason_kind: str
    reason: str


# ungated: the agent ran, on its own tools, a call the gate would have blocked (observed only);
# unobserved: a deployed bot whose tools never reached the lab (lab/runs/unobserved.py);
# unread: its own result could be read more than one way (two lists that could be the options).
AgentFaultKind = Literal[
    "timeout",
    "http_error",
    "malformed",
    "disconnected",
    "ungated",
    "oversize",
    "truncated",
    "unobserved",
    "unread",
]


class AgentFaulted(PayloadModel):
    """The agent under test erred, hung or answered garbage; such a run cannot pass."""

    type: Literal["agent.fault"] = "agent.fault"
    fault_kind: AgentFaultKind
    reason: str


EndKind = Literal["completed", "abandoned", "caller_left", "error"]


class RunEnded(PayloadModel):
    type: Literal["run.ended"] = "run.ended"
    reason_kind: EndKind
    reason: str
