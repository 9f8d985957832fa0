"""What a write adapter demands before it executes: a gate decision, or an unguarded label."""

from __future__ import annotations

from dataclasses import dataclass

from lab.events.types import Event, GateDecision, Operation, Outcome


class NotAuthorized(PermissionError):
    """A write request that no gate decision authorizes."""


@dataclass(frozen=True)
class Authorization:
    idempotency_key: str
    decision_event_id: str | None

    @classmethod
    def from_decision(cls, event: Event) -> Authorization:
        decision = event.payload
        if not isinstance(decision, GateDecision):
            raise NotAuthorized(f"{event.id} is a {event.type}, not a gate decision")
        if decision.request.operation is not Operation.COMMIT:
            raise NotAuthorized(f"{event.id} decides a {decision.request.operation}, not a commit")
        if decision.outcome is Outcome.BLOCK or not decision.idempotency_key:
            raise NotAuthorized(f"{event.id} blocked the commit: {decision.reason}")
        return cls(idempotency_key=decision.idempotency_key, decision_event_id=event.id)

    @classmethod
    def unguarded(cls, idempotency_key: str) -> Authorization:
        """The label an unguarded run's writes carry: no gate decided them."""
        return cls(idempotency_key=idempotency_key, decision_event_id=None)
