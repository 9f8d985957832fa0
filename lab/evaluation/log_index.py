"""The evaluator's one pass over a log: its records (`records.py`) and the indexes checks query.

"Before" and "after" compare the events' seq, the log's own gapless numbering. Pure.

A commit *attempt* is judged whether or not it executed: every tool.commit.started, and, for an
agent the lab did not write, every commit the gate blocked (it called the tool; the lab's gate,
not the agent, stopped it). The lab's own scripted agent only asks the gate, by design, so its
blocked asks stay evidence that the gate held, never attempts.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from lab.evaluation.records import (
    Blocked,
    CommitBlock,
    CommitStart,
    CommitSuccess,
    End,
    Execution,
    Expiry,
    Fault,
    Graded,
    Grounded,
    Interruption,
    LookupFailure,
    LookupStart,
    LookupSuccess,
    Proposal,
    Readback,
    Retrieved,
    Revised,
    Said,
    Settled,
    Understanding,
)
from lab.events.chain import digest
from lab.events.types import (
    AgentFaulted,
    AgentInterrupted,
    AgentUtterance,
    CallerUnderstood,
    CitationBlocked,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    Event,
    GateDecision,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RetrievalDone,
    RunEnded,
    RunStarted,
    TurnGraded,
    TurnGrounding,
    UnderstandingKind,
)


class Revisions:
    """Intent revisions with prefix maxima, so the questions the checks ask are binary searches."""

    def __init__(self, revisions: list[Revised]) -> None:
        self.events = revisions
        self.seqs = [revised.seq for revised in revisions]
        self.maxima: list[int] = []
        self.maximal: list[Revised] = []
        for revised in revisions:
            if self.maximal and revised.revision <= self.maxima[-1]:
                self.maxima.append(self.maxima[-1])
                self.maximal.append(self.maximal[-1])
            else:
                self.maxima.append(revised.revision)
                self.maximal.append(revised)

    def latest_before(self, seq: int) -> Revised | None:
        """The revision with the highest number recorded before seq."""
        index = bisect_left(self.seqs, seq)
        return self.maximal[index - 1] if index else None

    def first_above(self, revision: int) -> Revised | None:
        """The first revision in the log whose number exceeds revision."""
        index = bisect_right(self.maxima, revision)
        return self.events[index] if index < len(self.events) else None

    def between(self, start: int, end: int) -> Revised | None:
        """The first revision recorded strictly between two seqs."""
        index = bisect_right(self.seqs, start)
        if index < len(self.events) and self.events[index].seq < end:
            return self.events[index]
        return None


class LogIndex:
    """The records of one ordered log and the indexes the checks query, built in one pass."""

    def __init__(self, events: Iterable[Event]) -> None:
        self._revisions: list[Revised] = []
        self.proposals: list[Proposal] = []
        self.proposal_by_id: dict[str, Proposal] = {}
        self.expirations: defaultdict[str, list[Expiry]] = defaultdict(list)
        self.understood: dict[str, Understanding] = {}
        self.positives: list[Understanding] = []
        self.commit_blocks: list[CommitBlock] = []
        # Commits the gate blocked, as the attempts they are when an outside agent made them.
        self._blocked_commits: list[CommitStart] = []
        self.outside_agent = False
        self.commit_starts: list[CommitStart] = []
        self.commit_start_by_attempt: dict[str, CommitStart] = {}
        self.commit_starts_by_proposal: defaultdict[str, list[CommitStart]] = defaultdict(list)
        self._commit_successes: list[CommitSuccess] = []
        self.commit_success_by_attempt: dict[str, CommitSuccess] = {}
        # Attempts whose outcome the log settles: a receipt, a definite failure, a reconciliation.
        self.commits_settled: dict[str, Settled] = {}
        # Attempts the agent was told may have run (a timeout, an uncertain outcome): a retry on
        # the same key is then the agent finding out, not a second write.
        self.answered_unknown: dict[str, Settled] = {}
        self.lookup_starts_by_revision: defaultdict[int, list[LookupStart]] = defaultdict(list)
        self.lookup_start_by_attempt: dict[str, LookupStart] = {}
        self.lookup_successes: dict[str, LookupSuccess] = {}
        self.lookup_failures: list[LookupFailure] = []
        self.lookup_failure_by_attempt: dict[str, LookupFailure] = {}
        self.readbacks: dict[str, Readback] = {}
        self.interruptions: list[Interruption] = []
        self.said: dict[str, Said] = {}
        self.retrievals: list[Retrieved] = []
        self.grades: list[Graded] = []
        self.grade_by_utterance: dict[str, Graded] = {}
        self.groundings: list[Grounded] = []
        self.grounding_by_utterance: dict[str, Grounded] = {}
        self.citation_blocks: dict[str, Blocked] = {}
        self.ended: End | None = None
        self.faults: list[Fault] = []

        # One dict lookup per event on its exact payload class; most of a voice log (audio,
        # speech and latency events) has no reader and costs nothing more.
        readers: dict[type, Callable[[int, str, Any], None]] = {
            RunStarted: self._run_started,
            GateDecision: self._gate_decision,
            CallerUnderstood: self._caller_understood,
            AgentUtterance: self._agent_utterance,
            IntentRevised: self._intent_revised,
            ProposalMade: self._proposal_made,
            ProposalExpired: self._proposal_expired,
            LookupStarted: self._lookup_started,
            LookupSucceeded: self._lookup_succeeded,
            LookupFailed: self._lookup_failed,
            CommitStarted: self._commit_started,
            CommitSucceeded: self._commit_succeeded,
            CommitFailed: self._commit_failed,
            CommitReconciled: self._commit_reconciled,
            CommitUncertain: self._commit_uncertain,
            AgentInterrupted: self._agent_interrupted,
            RetrievalDone: self._retrieval_done,
            TurnGraded: self._turn_graded,
            TurnGrounding: self._turn_grounding,
            CitationBlocked: self._citation_blocked,
            RunEnded: self._run_ended,
            AgentFaulted: self._agent_faulted,
        }
        for event in events:
            payload = event.payload
            reader = readers.get(type(payload))
            if reader is not None:
                reader(event.seq, event.id, payload)

        self.revisions = Revisions(self._revisions)
        self.executions = [
            Execution(self.commit_start_by_attempt.get(success.attempt_id), success)
            for success in self._commit_successes
            if not success.replayed
        ]
        self.replays = [success for success in self._commit_successes if success.replayed]
        self.open_commits = [
            started
            for started in self.commit_starts
            if started.attempt_id not in self.commits_settled
        ]
        self.attempts = sorted(
            self.commit_starts + (self._blocked_commits if self.outside_agent else []),
            key=lambda attempt: attempt.seq,
        )
        self.attempts_by_proposal: defaultdict[str, list[CommitStart]] = defaultdict(list)
        for attempt in self.attempts:
            if attempt.proposal_id is not None:
                self.attempts_by_proposal[attempt.proposal_id].append(attempt)
        executed = {e.started.attempt_id for e in self.executions if e.started is not None}
        # Attempts that produced no execution: failed, blocked, replayed or still open.
        self.unexecuted = [a for a in self.attempts if a.attempt_id not in executed]
        self.late_results = self._late_results()
        self.lookup_failure_by_revision = self._failures_by_revision()

    def _run_started(self, seq: int, event_id: str, payload: RunStarted) -> None:
        self.outside_agent = payload.agent is not None

    def _gate_decision(self, seq: int, event_id: str, payload: GateDecision) -> None:
        request = payload.request
        if payload.outcome is Outcome.BLOCK and request.operation is Operation.COMMIT:
            block = CommitBlock(seq, event_id, payload.rests_on, request.confirmation_event_id)
            self.commit_blocks.append(block)
            attempt = CommitStart(
                seq,
                event_id,
                f"blocked-{event_id}",
                request.revision,
                request.proposal_id,
                request.confirmation_event_id,
                request.args,
                digest(request.args),
            )
            self._blocked_commits.append(attempt)

    def _caller_understood(self, seq: int, event_id: str, payload: CallerUnderstood) -> None:
        understanding = Understanding(seq, event_id, payload.kind)
        self.understood.setdefault(event_id, understanding)
        if understanding.kind is UnderstandingKind.POSITIVE:
            self.positives.append(understanding)

    def _agent_utterance(self, seq: int, event_id: str, payload: AgentUtterance) -> None:
        said = Said(seq, event_id, payload.purpose, payload.retrieval_event_id)
        self.said.setdefault(event_id, said)
        if payload.purpose == "readback" and payload.proposal_id is not None:
            self.readbacks.setdefault(event_id, Readback(seq, event_id, payload.proposal_id))

    def _intent_revised(self, seq: int, event_id: str, payload: IntentRevised) -> None:
        self._revisions.append(Revised(seq, event_id, payload.revision))

    def _proposal_made(self, seq: int, event_id: str, payload: ProposalMade) -> None:
        proposal = Proposal(
            seq,
            event_id,
            payload.proposal_id,
            payload.revision,
            payload.args,
            payload.args_hash,
            payload.grounded_on,
        )
        self.proposals.append(proposal)
        self.proposal_by_id.setdefault(proposal.proposal_id, proposal)

    def _proposal_expired(self, seq: int, event_id: str, payload: ProposalExpired) -> None:
        self.expirations[payload.proposal_id].append(Expiry(seq, event_id, payload.proposal_id))

    def _lookup_started(self, seq: int, event_id: str, payload: LookupStarted) -> None:
        lookup = LookupStart(seq, event_id, payload.attempt_id, payload.attempt, payload.revision)
        self.lookup_starts_by_revision[lookup.revision].append(lookup)
        self.lookup_start_by_attempt.setdefault(lookup.attempt_id, lookup)

    def _lookup_succeeded(self, seq: int, event_id: str, payload: LookupSucceeded) -> None:
        success = LookupSuccess(seq, event_id, payload.attempt_id, payload.options)
        self.lookup_successes.setdefault(event_id, success)

    def _lookup_failed(self, seq: int, event_id: str, payload: LookupFailed) -> None:
        failure = LookupFailure(seq, event_id, payload.attempt_id)
        self.lookup_failures.append(failure)
        self.lookup_failure_by_attempt.setdefault(failure.attempt_id, failure)

    def _commit_started(self, seq: int, event_id: str, payload: CommitStarted) -> None:
        started = CommitStart(
            seq,
            event_id,
            payload.attempt_id,
            payload.revision,
            payload.proposal_id,
            payload.confirmation_event_id,
            payload.args,
            payload.args_hash,
            payload.idempotency_key,
        )
        self.commit_starts.append(started)
        self.commit_start_by_attempt.setdefault(started.attempt_id, started)
        if started.proposal_id is not None:
            self.commit_starts_by_proposal[started.proposal_id].append(started)

    def _commit_succeeded(self, seq: int, event_id: str, payload: CommitSucceeded) -> None:
        self._receipted(seq, event_id, payload.attempt_id, payload.receipt, payload.replayed)

    def _commit_failed(self, seq: int, event_id: str, payload: CommitFailed) -> None:
        # A timed-out write may still have run: only the other failures settle an attempt.
        if payload.failure_kind != "timeout":
            self.commits_settled.setdefault(payload.attempt_id, Settled(seq, event_id))
        else:
            self.answered_unknown.setdefault(payload.attempt_id, Settled(seq, event_id))

    def _commit_uncertain(self, seq: int, event_id: str, payload: CommitUncertain) -> None:
        self.answered_unknown.setdefault(payload.attempt_id, Settled(seq, event_id))

    def _commit_reconciled(self, seq: int, event_id: str, payload: CommitReconciled) -> None:
        # A reconciled receipt is the attempt's receipt; without one it settles unexecuted.
        self.commits_settled.setdefault(payload.attempt_id, Settled(seq, event_id))
        if payload.receipt is not None:
            self._receipted(seq, event_id, payload.attempt_id, payload.receipt, payload.replayed)

    def _receipted(
        self, seq: int, event_id: str, attempt_id: str, receipt: Receipt, replayed: bool
    ) -> None:
        success = CommitSuccess(
            seq, event_id, attempt_id, receipt.execution_id, receipt.idempotency_key, replayed
        )
        self._commit_successes.append(success)
        self.commit_success_by_attempt.setdefault(attempt_id, success)
        self.commits_settled.setdefault(attempt_id, Settled(seq, event_id))

    def _agent_interrupted(self, seq: int, event_id: str, payload: AgentInterrupted) -> None:
        self.interruptions.append(Interruption(seq, event_id, payload.utterance_event_id))

    def _retrieval_done(self, seq: int, event_id: str, payload: RetrievalDone) -> None:
        self.retrievals.append(Retrieved(seq, event_id, payload.query, payload.confidence))

    def _turn_graded(self, seq: int, event_id: str, payload: TurnGraded) -> None:
        grade = payload.grade
        graded = Graded(
            seq,
            event_id,
            payload.utterance_event_id,
            grade.verdict,
            grade.claim,
            grade.rationale,
            None if grade.category is None else str(grade.category),
        )
        self.grades.append(graded)
        self.grade_by_utterance.setdefault(graded.utterance_event_id, graded)

    def _turn_grounding(self, seq: int, event_id: str, payload: TurnGrounding) -> None:
        found = payload.audit
        grounded = Grounded(
            seq,
            event_id,
            payload.utterance_event_id,
            found.verdict,
            found.orphans,
            len(found.retrieved),
        )
        self.groundings.append(grounded)
        self.grounding_by_utterance.setdefault(grounded.utterance_event_id, grounded)

    def _citation_blocked(self, seq: int, event_id: str, payload: CitationBlocked) -> None:
        blocked = Blocked(seq, event_id, payload.retrieval_event_id, payload.reason_kind)
        self.citation_blocks.setdefault(blocked.retrieval_event_id, blocked)

    def _agent_faulted(self, seq: int, event_id: str, payload: AgentFaulted) -> None:
        self.faults.append(Fault(seq, event_id, payload.reason))

    def _run_ended(self, seq: int, event_id: str, payload: RunEnded) -> None:
        if self.ended is None:
            self.ended = End(seq, event_id, payload.reason_kind, payload.reason)

    def _late_results(self) -> dict[str, LookupFailure]:
        """Lookup successes (by event id) for attempts that had already failed, with the failure."""
        late: dict[str, LookupFailure] = {}
        if not self.lookup_failure_by_attempt:
            return late
        for success in self.lookup_successes.values():
            failure = self.lookup_failure_by_attempt.get(success.attempt_id)
            if failure is not None and failure.seq < success.seq:
                late[success.id] = failure
        return late

    def _failures_by_revision(self) -> dict[int, LookupFailure]:
        first: dict[int, LookupFailure] = {}
        for failure in self.lookup_failures:
            started = self.lookup_start_by_attempt.get(failure.attempt_id)
            if started is not None:
                first.setdefault(started.revision, failure)
        return first

    def proposal_of(self, started: CommitStart) -> Proposal | None:
        return self.proposal_by_id.get(started.proposal_id) if started.proposal_id else None

    def unexecuted_note(self, started: CommitStart) -> str:
        """What a reason adds about an attempt that did not execute: it contradicts all the same."""
        if started.attempt_id in self.commit_success_by_attempt:
            return ""
        return " (an attempt that never executed, which contradicts all the same)"

    def confirmation_of(self, started: CommitStart) -> Understanding | None:
        if started.confirmation_event_id is None:
            return None
        return self.understood.get(started.confirmation_event_id)
