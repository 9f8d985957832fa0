"""The deterministic policy gate: decides each lookup, proposal and commit (allow, block or
replay) on the fold of the run's events so far (fold.py), naming the events each decision rests on.

Pure: no Django, no I/O, no clock, no randomness; the same events and request decide the same.
"""

from __future__ import annotations

from typing import Literal

from lab.events.types import (
    GateDecision,
    GateRequest,
    Operation,
    Outcome,
    UnderstandingKind,
    option_grounds,
)
from lab.policy.fold import (
    AttemptState,
    CommitRecord,
    GateFold,
    ProposalRecord,
    idempotency_key,
)

__all__ = ["GATE_VERSION", "GateState", "ReasonKind", "idempotency_key"]

GATE_VERSION = "gate-1"


ReasonKind = Literal[
    "no_intent",
    "stale_revision",
    "read",
    "retry",
    "lookup_in_flight",
    "lookup_already_answered",
    "retry_limit",
    "ungrounded",
    "grounded",
    "no_proposal",
    "args_changed",
    "already_executed",
    "in_flight",
    "uncertain_outcome",
    "commit_failed",
    "proposal_expired",
    "no_confirmation",
    "not_explicit",
    "confirmation_before_proposal",
    "confirmation_reused",
    "confirmed",
]


class GateState(GateFold):
    """The gate: the fold of a run's events, and decide(), which never mutates it."""

    def decide(self, request: GateRequest) -> GateDecision:
        """The decision on one request, for the caller to append to the log."""
        match request.operation:
            case Operation.LOOKUP:
                return self._decide_lookup(request)
            case Operation.PROPOSE:
                return self._decide_propose(request)
            case Operation.COMMIT:
                return self._decide_commit(request)

    def _decide_lookup(self, request: GateRequest) -> GateDecision:
        if self._revision is None:
            return _block(request, "no_intent", "There is no request from the caller yet.", [])
        if request.revision != self._revision:
            return self._stale(request, request.revision)
        intent_id = self._intent_ids[self._revision]
        attempts = self._lookups_by_revision.get(request.revision, [])
        if not attempts:
            return _allow(
                request,
                "read",
                f"A read for revision {request.revision} needs no confirmation.",
                [intent_id],
            )
        if len(attempts) >= 2:
            return _block(
                request,
                "retry_limit",
                f"Revision {request.revision} has had its read and its one retry; "
                "at most one retry of a read.",
                [attempt.latest_id for attempt in attempts],
            )
        attempt = attempts[0]
        match attempt.state:
            case AttemptState.FAILED:
                return _allow(
                    request,
                    "retry",
                    "The read failed; one retry is allowed.",
                    [intent_id, attempt.latest_id],
                )
            case AttemptState.IN_FLIGHT:
                return _block(
                    request,
                    "lookup_in_flight",
                    "A read for this revision is still in flight.",
                    [attempt.started_id],
                )
            case AttemptState.SUCCEEDED:
                return _block(
                    request,
                    "lookup_already_answered",
                    "A read for this revision already has its answer.",
                    [attempt.latest_id],
                )

    def _decide_propose(self, request: GateRequest) -> GateDecision:
        if self._revision is None:
            return _block(request, "no_intent", "There is no request from the caller yet.", [])
        if request.revision != self._revision:
            return self._stale(request, request.revision)
        intent_id = self._intent_ids[self._revision]
        attempt = (
            self._lookup_results.get(request.lookup_event_id) if request.lookup_event_id else None
        )
        if attempt is None or attempt.revision != request.revision:
            return _block(
                request,
                "ungrounded",
                "The proposal does not rest on a successful read of the current revision.",
                [intent_id],
            )
        if attempt.action != request.action or not any(
            option_grounds(option, request.args) for option in attempt.options
        ):
            return _block(
                request,
                "ungrounded",
                "The proposed arguments match none of the options the read returned.",
                [intent_id, attempt.latest_id],
            )
        return _allow(
            request,
            "grounded",
            "The proposal matches an option the read returned.",
            [intent_id, attempt.latest_id],
        )

    def _decide_commit(self, request: GateRequest) -> GateDecision:
        proposal = self._proposals.get(request.proposal_id) if request.proposal_id else None
        if proposal is None and request.proposal_id is None:
            # A confirmation that names nothing, just after the offer expired: say it expired.
            expired = self._latest_expired(request.revision)
            if expired is not None:
                return _block(
                    request,
                    "proposal_expired",
                    f"Proposal {expired.made.proposal_id} was made, then expired before this "
                    "confirmation; it must be read back again.",
                    [expired.event_id, str(expired.expired_by)],
                )
        if proposal is None:
            return _block(request, "no_proposal", "No proposal with that id was made.", [])
        made = proposal.made
        # Checked before replays: the same key with other arguments is an error, never a replay.
        if (
            request.action != made.action
            or request.args != made.args
            or not proposal.hash_matches_args
        ):
            return _block(
                request,
                "args_changed",
                "The request differs from what was proposed and read back.",
                [proposal.event_id],
            )
        # Before expiry: a committed proposal is never pending, so it is never expired either.
        record = self._commits.get(proposal.key)
        if record is not None:
            return _replay_or_block(request, proposal.key, record)
        if proposal.expired_by is not None:
            return _block(
                request,
                "proposal_expired",
                "The proposal expired before it was confirmed.",
                [proposal.expired_by],
            )
        if made.revision != self._revision:
            return self._stale(request, made.revision)
        if request.revision != self._revision:
            return self._stale(request, request.revision)
        return self._check_confirmation(request, proposal)

    def _latest_expired(self, revision: int) -> ProposalRecord | None:
        """The latest proposal of revision, if it expired and none was made after it."""
        of_revision = [p for p in self._proposals.values() if p.made.revision == revision]
        latest = of_revision[-1] if of_revision else None
        return latest if latest is not None and latest.expired_by is not None else None

    def _check_confirmation(self, request: GateRequest, proposal: ProposalRecord) -> GateDecision:
        confirmation_id = request.confirmation_event_id
        understood = self._understood.get(confirmation_id) if confirmation_id else None
        if confirmation_id is None or understood is None:
            return _block(
                request,
                "no_confirmation",
                "No caller confirmation was given for this proposal.",
                [proposal.event_id],
            )
        kind, seq = understood
        if kind is not UnderstandingKind.CONFIRM:
            return _block(
                request,
                "not_explicit",
                f"The caller's words were understood as {kind.value}, not as a confirmation.",
                [confirmation_id],
            )
        if seq <= proposal.seq:
            return _block(
                request,
                "confirmation_before_proposal",
                "The confirmation came before the proposal, so it cannot confirm it.",
                [proposal.event_id, confirmation_id],
            )
        used = self._confirmations_used.get(confirmation_id)
        if used is not None and used[0] != proposal.made.proposal_id:
            return _block(
                request,
                "confirmation_reused",
                f"This confirmation already authorized proposal {used[0]}.",
                [confirmation_id, used[1]],
            )
        return _allow(
            request,
            "confirmed",
            "The caller explicitly confirmed this proposal of the current revision.",
            [self._intent_ids[proposal.made.revision], proposal.event_id, confirmation_id],
            proposal.key,
        )

    def _stale(self, request: GateRequest, revision: int) -> GateDecision:
        return _block(
            request,
            "stale_revision",
            f"Revision {revision} has no authority; revision {self._revision} is the caller's "
            "current request.",
            [self._intent_ids[self._revision]] if self._revision is not None else [],
        )


def _replay_or_block(request: GateRequest, key: str, record: CommitRecord) -> GateDecision:
    rests_on = [record.latest_id]
    if record.confirmation_event_id is not None:
        rests_on.append(record.confirmation_event_id)
    match record.state:
        case AttemptState.SUCCEEDED:
            return _decision(
                request,
                Outcome.REPLAY,
                "already_executed",
                "This proposal was already executed; the original receipt is returned.",
                rests_on,
                key,
            )
        case AttemptState.IN_FLIGHT:
            return _decision(
                request,
                Outcome.REPLAY,
                "in_flight",
                "This proposal's commit is already in flight; it is not run again.",
                rests_on,
                key,
            )
        case AttemptState.FAILED if record.failure_kind == "timeout":
            return _decision(
                request,
                Outcome.REPLAY,
                "uncertain_outcome",
                "The commit timed out, so it may have run; the key is replayed, never re-run.",
                rests_on,
                key,
            )
        case AttemptState.FAILED:
            return _block(
                request,
                "commit_failed",
                f"The commit failed ({record.failure_kind}); a failed key is not run again.",
                [record.latest_id],
            )


def _allow(
    request: GateRequest,
    reason_kind: ReasonKind,
    reason: str,
    rests_on: list[str],
    key: str | None = None,
) -> GateDecision:
    return _decision(request, Outcome.ALLOW, reason_kind, reason, rests_on, key)


def _block(
    request: GateRequest, reason_kind: ReasonKind, reason: str, rests_on: list[str]
) -> GateDecision:
    return _decision(request, Outcome.BLOCK, reason_kind, reason, rests_on, None)


def _decision(
    request: GateRequest,
    outcome: Outcome,
    reason_kind: ReasonKind,
    reason: str,
    rests_on: list[str],
    key: str | None,
) -> GateDecision:
    return GateDecision(
        request=request,
        outcome=outcome,
        reason_kind=reason_kind,
        reason=reason,
        rests_on=rests_on,
        idempotency_key=key,
    )
