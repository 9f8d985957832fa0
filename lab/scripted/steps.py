"""What the scripted agent decides to do next: the steps its dialogue policy returns.

Pure data; the run session carries each step out (speaks, revises, looks up, proposes, commits).
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.events.chain import digest
from lab.events.types import (
    Action,
    Args,
    GateRequest,
    Operation,
    ProposalMade,
    UtterancePurpose,
)
from lab.scripted.answers import Retrieve


@dataclass(frozen=True)
class Say:
    text: str
    purpose: UtterancePurpose
    proposal_id: str | None = None
    retrieval_event_id: str | None = None


@dataclass(frozen=True)
class Revise:
    action: Action
    args: Args
    heard: dict[str, str]
    understood_event_id: str


@dataclass(frozen=True)
class Lookup:
    revision: int
    action: Action
    query: Args

    def request(self) -> GateRequest:
        return GateRequest(
            operation=Operation.LOOKUP, action=self.action, revision=self.revision, args=self.query
        )


@dataclass(frozen=True)
class Propose:
    revision: int
    action: Action
    args: Args
    grounded_on: str | None

    def request(self) -> GateRequest:
        return GateRequest(
            operation=Operation.PROPOSE,
            action=self.action,
            revision=self.revision,
            args=self.args,
            lookup_event_id=self.grounded_on,
        )

    def made(self, proposal_id: str) -> ProposalMade:
        """The proposal this step makes once the gate lets it."""
        return ProposalMade(
            proposal_id=proposal_id,
            revision=self.revision,
            action=self.action,
            args=self.args,
            args_hash=digest(self.args),
            grounded_on=self.grounded_on,
        )


@dataclass(frozen=True)
class Commit:
    proposal: ProposalMade | None
    confirmation_event_id: str
    # How many earlier attempts of this commit got no answer (a network retry when above 0).
    retry: int = 0

    def request(self, *, action: Action, revision: int) -> GateRequest:
        """The commit request; without a proposal, for the action and revision the agent holds."""
        proposal = self.proposal
        return GateRequest(
            operation=Operation.COMMIT,
            action=proposal.action if proposal else action,
            revision=proposal.revision if proposal else revision,
            args=proposal.args if proposal else {},
            proposal_id=proposal.proposal_id if proposal else None,
            confirmation_event_id=self.confirmation_event_id,
        )


Step = Say | Revise | Lookup | Propose | Commit | Retrieve
