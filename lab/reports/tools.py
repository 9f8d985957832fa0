"""The tool identities of a run, derived from its tool.commit.* events alone.

Pure: no Django, no I/O. Export writes them; import derives them again and compares.
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.events.types import CommitFailed, CommitStarted, CommitSucceeded, Event
from lab.reports.schema import ToolCommit, ToolIdentities


def _outcome(commit: ToolCommit, event: Event) -> ToolCommit:
    match event.payload:
        case CommitSucceeded(receipt=receipt, replayed=replayed):
            outcome = "replayed" if replayed else "executed"
            return commit.model_copy(
                update={"outcome": outcome, "outcome_event_id": event.id, "receipt": receipt}
            )
        case CommitFailed(failure_kind=kind):
            return commit.model_copy(
                update={"outcome": "failed", "outcome_event_id": event.id, "failure_kind": kind}
            )
    return commit


def tool_identities(events: Sequence[Event]) -> ToolIdentities:
    """Every commit attempt in log order, with the first outcome recorded for it."""
    commits: dict[str, ToolCommit] = {}
    for event in events:
        match event.payload:
            case CommitStarted() as p if p.attempt_id not in commits:
                commits[p.attempt_id] = ToolCommit(
                    attempt_id=p.attempt_id,
                    action=p.action,
                    idempotency_key=p.idempotency_key,
                    proposal_id=p.proposal_id,
                    authorized_by=p.authorized_by,
                    started_event_id=event.id,
                    outcome="pending",
                    outcome_event_id=None,
                    receipt=None,
                    failure_kind=None,
                )
            case CommitSucceeded() | CommitFailed() as p:
                known = commits.get(p.attempt_id)
                if known is None and isinstance(p, CommitSucceeded):
                    # A receipt without a recorded start still names what executed.
                    known = ToolCommit(
                        attempt_id=p.attempt_id,
                        action=p.receipt.action,
                        idempotency_key=p.receipt.idempotency_key,
                        proposal_id=None,
                        authorized_by=None,
                        started_event_id=None,
                        outcome="pending",
                        outcome_event_id=None,
                        receipt=None,
                        failure_kind=None,
                    )
                if known is not None and known.outcome == "pending":
                    commits[p.attempt_id] = _outcome(known, event)
    receipts = [c.receipt for c in commits.values() if c.receipt is not None]
    return ToolIdentities(
        adapters=sorted({r.adapter for r in receipts}),
        idempotency_keys=list(dict.fromkeys(c.idempotency_key for c in commits.values())),
        receipt_ids=list(dict.fromkeys(r.receipt_id for r in receipts)),
        execution_ids=list(dict.fromkeys(r.execution_id for r in receipts)),
        commits=list(commits.values()),
    )
