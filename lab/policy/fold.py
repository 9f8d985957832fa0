"""The policy gate's state: a fold over a run's events (what was proposed, read, committed).

Pure: no Django, no I/O, no clock. gate.py decides requests on this state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Self

from lab.events.chain import digest
from lab.events.types import (
    Action,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    Event,
    EventPayload,
    GateDecision,
    IntentRevised,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RunStarted,
    UnderstandingKind,
)


def idempotency_key(*, run_id: str, proposal_id: str, args_hash: str) -> str:
    """SHA-256 hex naming one execution: the same run, proposal and arguments give the same key."""
    return digest({"run_id": run_id, "proposal_id": proposal_id, "args_hash": args_hash})


class AttemptState(StrEnum):
    IN_FLIGHT = "in_flight"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(slots=True)
class ProposalRecord:
    made: ProposalMade
    event_id: str
    seq: int
    key: str
    # Checked once at fold time so decide() can compare Args by equality instead of hashing.
    hash_matches_args: bool
    expired_by: str | None = None


@dataclass(slots=True)
class LookupRecord:
    revision: int
    action: Action
    started_id: str
    state: AttemptState = AttemptState.IN_FLIGHT
    latest_id: str = ""
    options: list[Args] = field(default_factory=list)


@dataclass(slots=True)
class CommitRecord:
    args_hash: str
    confirmation_event_id: str | None
    latest_id: str
    state: AttemptState = AttemptState.IN_FLIGHT
    failure_kind: str | None = None
    receipt: Receipt | None = None

    def succeed(self, receipt: Receipt, event_id: str) -> None:
        # A replayed receipt after an uncertain timeout reveals the original execution.
        if self.receipt is None:
            self.state, self.receipt, self.latest_id = AttemptState.SUCCEEDED, receipt, event_id

    def fail(self, failure_kind: str, event_id: str) -> None:
        if self.receipt is None:
            self.state, self.failure_kind = AttemptState.FAILED, failure_kind
            self.latest_id = event_id


@dataclass(slots=True)
class CommitAttempt:
    """One commit.started: its key, and the key's state before it (restored if refused)."""

    key: str
    before: tuple[AttemptState, str | None, str] | None


class GateFold:
    """Mutable fold over a run's events; the gate's decisions read it and never mutate it."""

    def __init__(self) -> None:
        self.run_id = ""
        self._revision: int | None = None
        self._intent_ids: dict[int, str] = {}
        self._proposals: dict[str, ProposalRecord] = {}
        # Insertion-ordered, and small: a new revision expires every older entry.
        self._pending: dict[str, ProposalRecord] = {}
        self._readbacks: dict[str, str] = {}
        self._understood: dict[str, tuple[UnderstandingKind, int]] = {}
        self._lookups: dict[str, LookupRecord] = {}
        self._lookups_by_revision: dict[int, list[LookupRecord]] = {}
        # Only answers that still count: a later failure of their attempt removes them.
        self._lookup_results: dict[str, LookupRecord] = {}
        self._commits: dict[str, CommitRecord] = {}
        self._commit_attempts: dict[str, CommitAttempt] = {}
        self._confirmations_used: dict[str, tuple[str, str]] = {}

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> Self:
        state = cls()
        for event in events:
            state.apply(event)
        return state

    @property
    def current_revision(self) -> int | None:
        return self._revision

    def apply(self, event: Event) -> None:
        """Fold one event into the state; events the gate does not use are ignored."""
        match event.payload:
            case RunStarted(run_id=run_id):
                self.run_id = run_id
            case IntentRevised(revision=revision):
                self._revision = revision
                self._intent_ids[revision] = event.id
            case CallerUnderstood(kind=kind):
                self._understood[event.id] = (kind, event.seq)
            case AgentUtterance(purpose="readback", proposal_id=str() as proposal_id):
                self._readbacks[event.id] = proposal_id
            case ProposalMade() as made:
                self._fold_proposal(event, made)
            case ProposalExpired(proposal_id=proposal_id):
                proposal = self._proposals.get(proposal_id)
                if proposal is not None and proposal.expired_by is None:
                    proposal.expired_by = event.id
                    self._pending.pop(proposal_id, None)
            case LookupStarted() as started:
                self._fold_lookup_started(event, started)
            case LookupSucceeded(attempt_id=attempt_id, options=options):
                attempt = self._lookups.get(attempt_id)
                # Only an attempt still in flight can succeed: a timed-out one stays failed.
                if attempt is not None and attempt.state is AttemptState.IN_FLIGHT:
                    attempt.state = AttemptState.SUCCEEDED
                    attempt.latest_id = event.id
                    attempt.options = options
                    self._lookup_results[event.id] = attempt
            case LookupFailed(attempt_id=attempt_id) | LateResultRejected(attempt_id=attempt_id):
                self._fold_lookup_failed(event, attempt_id)
            case GateDecision() as decision:
                self._fold_decision(event, decision)
            case CommitStarted() as started:
                self._fold_commit_started(event, started)
            case CommitSucceeded(attempt_id=attempt_id, receipt=receipt):
                if (record := self._commit_record(attempt_id)) is not None:
                    record.succeed(receipt, event.id)
            case CommitFailed(attempt_id=attempt_id, failure_kind="unauthorized"):
                self._restore(attempt_id)
            case CommitFailed(attempt_id=attempt_id, failure_kind=failure_kind):
                if (record := self._commit_record(attempt_id)) is not None:
                    record.fail(failure_kind, event.id)
            case CommitUncertain(attempt_id=attempt_id):
                # Still in flight: a confirmation meanwhile replays the key, never re-runs it.
                record = self._commit_record(attempt_id)
                if record is not None and record.receipt is None:
                    record.latest_id = event.id
            case CommitReconciled(attempt_id=attempt_id, receipt=receipt):
                if (record := self._commit_record(attempt_id)) is not None:
                    if receipt is None:
                        record.fail("not_executed", event.id)
                    else:
                        record.succeed(receipt, event.id)

    def reactions(self, event: Event) -> list[EventPayload]:
        """The events the gate itself must record because of event, which was just applied."""
        match event.payload:
            case IntentRevised(revision=revision):
                return [
                    ProposalExpired(
                        proposal_id=proposal_id, reason_kind="superseded", cause_event_id=event.id
                    )
                    for proposal_id, proposal in self._pending.items()
                    if proposal.made.revision < revision
                ]
            case AgentInterrupted(utterance_event_id=utterance_id):
                proposal_id = self._readbacks.get(utterance_id)
                if proposal_id is not None and proposal_id in self._pending:
                    return [
                        ProposalExpired(
                            proposal_id=proposal_id,
                            reason_kind="interrupted",
                            cause_event_id=event.id,
                        )
                    ]
        return []

    def pending_proposal(self) -> ProposalMade | None:
        """The latest proposal of the current revision that is neither expired nor committed."""
        for proposal in reversed(self._pending.values()):
            if proposal.made.revision == self._revision:
                return proposal.made
        return None

    def receipt_for(self, idempotency_key: str) -> Receipt | None:
        record = self._commits.get(idempotency_key)
        return record.receipt if record is not None else None

    def check_key(self, key: str, args_hash: str) -> str | None:
        """A reason when key is already bound to other arguments; a key never silently replays."""
        record = self._commits.get(key)
        if record is None or record.args_hash == args_hash:
            return None
        return (
            f"Idempotency key {key[:12]}... was first used with arguments "
            f"{record.args_hash[:12]}..., not {args_hash[:12]}...; "
            "a key never executes different arguments."
        )

    def _fold_proposal(self, event: Event, made: ProposalMade) -> None:
        if made.proposal_id in self._proposals:
            return
        proposal = ProposalRecord(
            made=made,
            event_id=event.id,
            seq=event.seq,
            key=idempotency_key(
                run_id=self.run_id, proposal_id=made.proposal_id, args_hash=made.args_hash
            ),
            hash_matches_args=digest(made.args) == made.args_hash,
        )
        self._proposals[made.proposal_id] = proposal
        self._pending[made.proposal_id] = proposal

    def _fold_lookup_started(self, event: Event, started: LookupStarted) -> None:
        if started.attempt_id in self._lookups:
            return
        attempt = LookupRecord(
            revision=started.revision,
            action=started.action,
            started_id=event.id,
            latest_id=event.id,
        )
        self._lookups[started.attempt_id] = attempt
        self._lookups_by_revision.setdefault(started.revision, []).append(attempt)

    def _fold_lookup_failed(self, event: Event, attempt_id: str) -> None:
        attempt = self._lookups.get(attempt_id)
        # A failure is terminal whenever it comes: any earlier result stops counting.
        if attempt is not None and attempt.state is not AttemptState.FAILED:
            self._lookup_results.pop(attempt.latest_id, None)
            attempt.state = AttemptState.FAILED
            attempt.latest_id = event.id

    def _fold_decision(self, event: Event, decision: GateDecision) -> None:
        request = decision.request
        proposal = self._proposals.get(request.proposal_id) if request.proposal_id else None
        if (
            decision.outcome is not Outcome.ALLOW
            or request.operation is not Operation.COMMIT
            or proposal is None
            or decision.idempotency_key is None
        ):
            return
        if request.confirmation_event_id is not None:
            self._confirmations_used.setdefault(
                request.confirmation_event_id, (proposal.made.proposal_id, event.id)
            )
        # Authorized counts as in flight: a confirmation racing the commit.started replays.
        self._pending.pop(proposal.made.proposal_id, None)
        self._commits.setdefault(
            decision.idempotency_key,
            CommitRecord(
                args_hash=proposal.made.args_hash,
                confirmation_event_id=request.confirmation_event_id,
                latest_id=event.id,
            ),
        )

    def _fold_commit_started(self, event: Event, started: CommitStarted) -> None:
        record = self._commits.get(started.idempotency_key)
        before = (record.state, record.failure_kind, record.latest_id) if record else None
        self._commit_attempts[started.attempt_id] = CommitAttempt(started.idempotency_key, before)
        if started.proposal_id is not None:
            self._pending.pop(started.proposal_id, None)
        if record is None:
            self._commits[started.idempotency_key] = CommitRecord(
                args_hash=started.args_hash,
                confirmation_event_id=started.confirmation_event_id,
                latest_id=event.id,
            )
        elif record.state is not AttemptState.SUCCEEDED:
            # A replay after a failure presents the key again; it is in flight until it answers.
            record.state = AttemptState.IN_FLIGHT
            record.failure_kind = None
            record.latest_id = event.id

    def _commit_record(self, attempt_id: str) -> CommitRecord | None:
        attempt = self._commit_attempts.get(attempt_id)
        return self._commits.get(attempt.key) if attempt is not None else None

    def _restore(self, attempt_id: str) -> None:
        """An attempt the adapter refused as unauthorized never ran: undo what it changed."""
        attempt = self._commit_attempts.get(attempt_id)
        if attempt is None:
            return
        if attempt.before is None:
            self._commits.pop(attempt.key, None)
            return
        record = self._commits[attempt.key]
        if record.receipt is None:
            record.state, record.failure_kind, record.latest_id = attempt.before
