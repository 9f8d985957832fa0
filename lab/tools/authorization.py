"""What a write adapter demands before it executes: a gate decision, or an unguarded label.

A gate-issued authorization carries what the gate authorized (action, revision, proposal,
idempotency key and canonical arguments hash); it covers that request and no other.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.events.chain import digest
from lab.events.types import Action, Args, Event, GateDecision, Operation, Outcome


class NotAuthorized(PermissionError):
    """A write request that no gate decision authorizes."""


@dataclass(frozen=True)
class CommitRequest:
    """One write as the session presents it to an adapter."""

    action: Action
    revision: int
    proposal_id: str | None
    args: Args
    idempotency_key: str


@dataclass(frozen=True)
class Grant:
    """The request a gate decision authorized, as the decision itself recorded it."""

    action: Action
    revision: int
    proposal_id: str | None
    args_hash: str
    idempotency_key: str

    @classmethod
    def of(cls, decision: GateDecision) -> Grant:
        request = decision.request
        return cls(
            action=request.action,
            revision=request.revision,
            proposal_id=request.proposal_id,
            args_hash=digest(request.args),
            idempotency_key=decision.idempotency_key or "",
        )

    def differences(self, request: CommitRequest) -> list[str]:
        """The fields in which request departs from this grant (empty when it is covered)."""
        pairs = {
            "action": (self.action, request.action),
            "revision": (self.revision, request.revision),
            "proposal": (self.proposal_id, request.proposal_id),
            "arguments": (self.args_hash, digest(request.args)),
            "idempotency key": (self.idempotency_key, request.idempotency_key),
        }
        return [name for name, (granted, asked) in pairs.items() if granted != asked]


@dataclass(frozen=True)
class Authorization:
    idempotency_key: str
    decision_event_id: str | None
    grant: Grant | None = None

    @classmethod
    def from_decision(cls, event: Event) -> Authorization:
        decision = event.payload
        if not isinstance(decision, GateDecision):
            raise NotAuthorized(f"{event.id} is a {event.type}, not a gate decision")
        if decision.request.operation is not Operation.COMMIT:
            raise NotAuthorized(f"{event.id} decides a {decision.request.operation}, not a commit")
        if decision.outcome is Outcome.BLOCK or not decision.idempotency_key:
            raise NotAuthorized(f"{event.id} blocked the commit: {decision.reason}")
        return cls(
            idempotency_key=decision.idempotency_key,
            decision_event_id=event.id,
            grant=Grant.of(decision),
        )

    @classmethod
    def unguarded(cls, idempotency_key: str) -> Authorization:
        """The label an unguarded run's writes carry: no gate decided them."""
        return cls(idempotency_key=idempotency_key, decision_event_id=None)
