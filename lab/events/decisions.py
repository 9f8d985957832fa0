"""The gate's requests and decisions, and the proposals awaiting a confirmation."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from lab.events.vocabulary import (
    Action,
    Args,
    Operation,
    Outcome,
    PayloadModel,
)


class GateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: Operation
    action: Action
    revision: int
    args: Args = Field(default_factory=dict)
    proposal_id: str | None = None
    confirmation_event_id: str | None = None
    lookup_event_id: str | None = None


class GateDecision(PayloadModel):
    type: Literal["gate.decision"] = "gate.decision"
    request: GateRequest
    outcome: Outcome
    reason_kind: str
    reason: str
    rests_on: list[str]
    idempotency_key: str | None = None


class ProposalMade(PayloadModel):
    type: Literal["proposal.made"] = "proposal.made"
    proposal_id: str
    revision: int
    action: Action
    args: Args
    args_hash: str
    grounded_on: str | None = None


class ProposalExpired(PayloadModel):
    type: Literal["proposal.expired"] = "proposal.expired"
    proposal_id: str
    reason_kind: Literal["superseded", "interrupted"]
    cause_event_id: str
