"""The evaluator: a pure function of (contract, ordered events) that never raises.

One pass copies what the checks read into small records and indexes them; each assertion is then
checked on those indexes alone. "Before" and "after" compare the events' seq, the log's own
gapless numbering. Pure: no Django, no I/O, no clock. It runs identically on a live, partial log
and on an imported one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from lab.evaluation.verdicts import (
    AssertionResult,
    AssertionState,
    Evaluation,
    ReasonKind,
    Verdict,
)
from lab.events.types import (
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CommitStarted,
    CommitSucceeded,
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
    RunEnded,
    UnderstandingKind,
    option_grounds,
)
from lab.scenarios.contracts import Assertion, AssertionKind, Contract

EVALUATOR_VERSION = "evaluator-1"

# How many event ids a verdict reason names before it only counts the rest.
_IDS_IN_REASON = 6


class _Located(Protocol):
    @property
    def seq(self) -> int: ...

    @property
    def id(self) -> str: ...


L = TypeVar("L", bound=_Located)


# One record per event the checks read, holding only the fields they read. A log is larger than
# any cache, so each pydantic field read is a likely cache miss: the pass reads every field once,
# while the event is hot, and the checks never touch the events again.
class _Revised(NamedTuple):
    seq: int
    id: str
    revision: int


class _Proposal(NamedTuple):
    seq: int
    id: str
    proposal_id: str
    revision: int
    args: Args
    args_hash: str
    grounded_on: str | None


class _Expiry(NamedTuple):
    seq: int
    id: str
    proposal_id: str


class _Understanding(NamedTuple):
    seq: int
    id: str
    kind: UnderstandingKind


class _CommitBlock(NamedTuple):
    """A gate decision that blocked a commit."""

    seq: int
    id: str
    rests_on: list[str]
    confirmation_event_id: str | None


class _CommitStart(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    revision: int
    proposal_id: str | None
    confirmation_event_id: str | None
    args: Args
    args_hash: str


class _CommitSuccess(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    execution_id: str
    idempotency_key: str
    replayed: bool


class _LookupStart(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    attempt: int
    revision: int


class _LookupSuccess(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    options: list[Args]


class _LookupFailure(NamedTuple):
    seq: int
    id: str
    attempt_id: str


class _Readback(NamedTuple):
    seq: int
    id: str
    proposal_id: str


class _Interruption(NamedTuple):
    seq: int
    id: str
    utterance_event_id: str


class _End(NamedTuple):
    seq: int
    id: str
    reason_kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Execution:
    """A non-replayed receipt and the commit attempt that produced it, if one was recorded."""

    started: _CommitStart | None
    succeeded: _CommitSuccess

    @property
    def events(self) -> tuple[_CommitStart | None, _CommitSuccess]:
        return self.started, self.succeeded


class _Revisions:
    """Intent revisions with prefix maxima, so the questions the checks ask are binary searches."""

    def __init__(self, revisions: list[_Revised]) -> None:
        self.events = revisions
        self.seqs = [revised.seq for revised in revisions]
        self.maxima: list[int] = []
        self.maximal: list[_Revised] = []
        for revised in revisions:
            if self.maximal and revised.revision <= self.maxima[-1]:
                self.maxima.append(self.maxima[-1])
                self.maximal.append(self.maximal[-1])
            else:
                self.maxima.append(revised.revision)
                self.maximal.append(revised)

    def latest_before(self, seq: int) -> _Revised | None:
        """The revision with the highest number recorded before seq."""
        index = bisect_left(self.seqs, seq)
        return self.maximal[index - 1] if index else None

    def first_above(self, revision: int) -> _Revised | None:
        """The first revision in the log whose number exceeds revision."""
        index = bisect_right(self.maxima, revision)
        return self.events[index] if index < len(self.events) else None

    def between(self, start: int, end: int) -> _Revised | None:
        """The first revision recorded strictly between two seqs."""
        index = bisect_right(self.seqs, start)
        if index < len(self.events) and self.events[index].seq < end:
            return self.events[index]
        return None


class _Log:
    """The records of one ordered log and the indexes the checks query, built in one pass."""

    def __init__(self, events: Iterable[Event]) -> None:
        self._revisions: list[_Revised] = []
        self.proposals: list[_Proposal] = []
        self.proposal_by_id: dict[str, _Proposal] = {}
        self.expirations: defaultdict[str, list[_Expiry]] = defaultdict(list)
        self.understood: dict[str, _Understanding] = {}
        self.positives: list[_Understanding] = []
        self.commit_blocks: list[_CommitBlock] = []
        self.commit_starts: list[_CommitStart] = []
        self.commit_start_by_attempt: dict[str, _CommitStart] = {}
        self.commit_starts_by_proposal: defaultdict[str, list[_CommitStart]] = defaultdict(list)
        self._commit_successes: list[_CommitSuccess] = []
        self.commit_success_by_attempt: dict[str, _CommitSuccess] = {}
        self.lookup_starts_by_revision: defaultdict[int, list[_LookupStart]] = defaultdict(list)
        self.lookup_start_by_attempt: dict[str, _LookupStart] = {}
        self.lookup_successes: dict[str, _LookupSuccess] = {}
        self.lookup_failures: list[_LookupFailure] = []
        self.lookup_failure_by_attempt: dict[str, _LookupFailure] = {}
        self.readbacks: dict[str, _Readback] = {}
        self.interruptions: list[_Interruption] = []
        self.ended: _End | None = None

        # One dict lookup per event on its exact payload class; most of a voice log (audio,
        # speech and latency events) has no reader and costs nothing more.
        readers: dict[type, Callable[[int, str, Any], None]] = {
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
            AgentInterrupted: self._agent_interrupted,
            RunEnded: self._run_ended,
        }
        for event in events:
            payload = event.payload
            reader = readers.get(type(payload))
            if reader is not None:
                reader(event.seq, event.id, payload)

        self.revisions = _Revisions(self._revisions)
        self.executions = [
            _Execution(self.commit_start_by_attempt.get(success.attempt_id), success)
            for success in self._commit_successes
            if not success.replayed
        ]
        self.replays = [success for success in self._commit_successes if success.replayed]
        self.late_results = self._late_results()
        self.lookup_failure_by_revision = self._failures_by_revision()

    def _gate_decision(self, seq: int, event_id: str, payload: GateDecision) -> None:
        request = payload.request
        if payload.outcome is Outcome.BLOCK and request.operation is Operation.COMMIT:
            block = _CommitBlock(seq, event_id, payload.rests_on, request.confirmation_event_id)
            self.commit_blocks.append(block)

    def _caller_understood(self, seq: int, event_id: str, payload: CallerUnderstood) -> None:
        understanding = _Understanding(seq, event_id, payload.kind)
        self.understood.setdefault(event_id, understanding)
        if understanding.kind is UnderstandingKind.POSITIVE:
            self.positives.append(understanding)

    def _agent_utterance(self, seq: int, event_id: str, payload: AgentUtterance) -> None:
        if payload.purpose == "readback" and payload.proposal_id is not None:
            self.readbacks.setdefault(event_id, _Readback(seq, event_id, payload.proposal_id))

    def _intent_revised(self, seq: int, event_id: str, payload: IntentRevised) -> None:
        self._revisions.append(_Revised(seq, event_id, payload.revision))

    def _proposal_made(self, seq: int, event_id: str, payload: ProposalMade) -> None:
        proposal = _Proposal(
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
        self.expirations[payload.proposal_id].append(_Expiry(seq, event_id, payload.proposal_id))

    def _lookup_started(self, seq: int, event_id: str, payload: LookupStarted) -> None:
        lookup = _LookupStart(seq, event_id, payload.attempt_id, payload.attempt, payload.revision)
        self.lookup_starts_by_revision[lookup.revision].append(lookup)
        self.lookup_start_by_attempt.setdefault(lookup.attempt_id, lookup)

    def _lookup_succeeded(self, seq: int, event_id: str, payload: LookupSucceeded) -> None:
        success = _LookupSuccess(seq, event_id, payload.attempt_id, payload.options)
        self.lookup_successes.setdefault(event_id, success)

    def _lookup_failed(self, seq: int, event_id: str, payload: LookupFailed) -> None:
        failure = _LookupFailure(seq, event_id, payload.attempt_id)
        self.lookup_failures.append(failure)
        self.lookup_failure_by_attempt.setdefault(failure.attempt_id, failure)

    def _commit_started(self, seq: int, event_id: str, payload: CommitStarted) -> None:
        started = _CommitStart(
            seq,
            event_id,
            payload.attempt_id,
            payload.revision,
            payload.proposal_id,
            payload.confirmation_event_id,
            payload.args,
            payload.args_hash,
        )
        self.commit_starts.append(started)
        self.commit_start_by_attempt.setdefault(started.attempt_id, started)
        if started.proposal_id is not None:
            self.commit_starts_by_proposal[started.proposal_id].append(started)

    def _commit_succeeded(self, seq: int, event_id: str, payload: CommitSucceeded) -> None:
        receipt = payload.receipt
        success = _CommitSuccess(
            seq,
            event_id,
            payload.attempt_id,
            receipt.execution_id,
            receipt.idempotency_key,
            payload.replayed,
        )
        self._commit_successes.append(success)
        self.commit_success_by_attempt.setdefault(success.attempt_id, success)

    def _agent_interrupted(self, seq: int, event_id: str, payload: AgentInterrupted) -> None:
        self.interruptions.append(_Interruption(seq, event_id, payload.utterance_event_id))

    def _run_ended(self, seq: int, event_id: str, payload: RunEnded) -> None:
        if self.ended is None:
            self.ended = _End(seq, event_id, payload.reason_kind, payload.reason)

    def _late_results(self) -> dict[str, _LookupFailure]:
        """Lookup successes (by event id) for attempts that had already failed, with the failure."""
        late: dict[str, _LookupFailure] = {}
        if not self.lookup_failure_by_attempt:
            return late
        for success in self.lookup_successes.values():
            failure = self.lookup_failure_by_attempt.get(success.attempt_id)
            if failure is not None and failure.seq < success.seq:
                late[success.id] = failure
        return late

    def _failures_by_revision(self) -> dict[int, _LookupFailure]:
        first: dict[int, _LookupFailure] = {}
        for failure in self.lookup_failures:
            started = self.lookup_start_by_attempt.get(failure.attempt_id)
            if started is not None:
                first.setdefault(started.revision, failure)
        return first

    def confirmation_of(self, started: _CommitStart) -> _Understanding | None:
        if started.confirmation_event_id is None:
            return None
        return self.understood.get(started.confirmation_event_id)


def _first_after(records: Iterable[L], seq: int) -> L | None:
    for record in records:
        if record.seq > seq:
            return record
    return None


@dataclass(frozen=True, slots=True)
class _Finding:
    state: AssertionState
    supporting: list[str]
    contradicting: list[str]
    reason: str


def _lacking(reason: str) -> _Finding:
    return _Finding(AssertionState.NO_EVIDENCE, [], [], reason)


class _Tally:
    """Per-item outcomes of one assertion: any contradiction outweighs any gap."""

    def __init__(self) -> None:
        self.supporting: list[str] = []
        self.contradicting: list[str] = []
        self.contradictions: list[str] = []
        self.gaps: list[str] = []

    def support(self, *records: _Located | None) -> None:
        for record in records:
            if record is not None:
                self.supporting.append(record.id)

    def contradict(self, reason: str, *records: _Located | None) -> None:
        self.contradictions.append(reason)
        for record in records:
            if record is not None:
                self.contradicting.append(record.id)

    def lack(self, reason: str) -> None:
        self.gaps.append(reason)

    def finding(self, supported: str) -> _Finding:
        if self.contradictions:
            state, reason = AssertionState.CONTRADICTED, _first_of(self.contradictions)
        elif self.gaps:
            state, reason = AssertionState.NO_EVIDENCE, _first_of(self.gaps)
        else:
            state, reason = AssertionState.SUPPORTED, supported
        return _Finding(state, self.supporting, self.contradicting, reason)


def _first_of(reasons: list[str]) -> str:
    more = len(reasons) - 1
    return reasons[0] if not more else f"{reasons[0]} (and {more} more like it)"


def _superseded_proposal_expired(log: _Log) -> _Finding:
    tally, superseded = _Tally(), 0
    for made in log.proposals:
        revised = log.revisions.first_above(made.revision)
        if revised is None:
            continue
        superseded += 1
        pid, newer = made.proposal_id, revised.revision
        # A proposal made after a newer revision already existed was stale from birth.
        since = max(made.seq, revised.seq)
        commit = _first_after(log.commit_starts_by_proposal.get(pid, ()), since)
        if commit is not None:
            tally.contradict(
                f"Proposal {pid} was committed by {commit.id} after revision {newer} "
                f"({revised.id}) superseded it.",
                revised,
                commit,
                log.commit_success_by_attempt.get(commit.attempt_id),
            )
            continue
        # An expiry before the correction (an interrupted readback) also removed its authority.
        expired = _first_after(log.expirations.get(pid, ()), made.seq)
        if expired is None:
            tally.lack(
                f"Expected a proposal.expired for {pid} once revision {newer} ({revised.id}) "
                "superseded it."
            )
        else:
            tally.support(made, revised, expired)
    if not superseded:
        return _lacking(
            "Expected a proposal superseded by a later intent revision; none was corrected."
        )
    return tally.finding(
        f"Every superseded proposal expired ({superseded} in all) and none was committed."
    )


def _commit_uses_latest_revision(log: _Log) -> _Finding:
    if not log.executions:
        return _lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    tally = _Tally()
    for execution in log.executions:
        started, success = execution.events
        if started is None:
            tally.contradict(f"Receipt {success.id} has no tool.commit.started.", success)
            continue
        latest = log.revisions.latest_before(started.seq)
        made = log.proposal_by_id.get(started.proposal_id) if started.proposal_id else None
        if latest is None or latest.revision != started.revision:
            current = f"revision {latest.revision}" if latest else "no revision at all"
            tally.contradict(
                f"{started.id} commits revision {started.revision} while the latest is {current}.",
                started,
                success,
                latest,
            )
        elif made is None or made.seq > started.seq or made.revision != started.revision:
            tally.contradict(
                f"{started.id} commits {started.proposal_id or 'no proposal'}, which is not an "
                f"earlier proposal of revision {started.revision}.",
                started,
                success,
                made,
            )
        elif made.args_hash != started.args_hash or made.args != started.args:
            tally.contradict(
                f"{started.id} sends arguments that differ from proposal {started.proposal_id}.",
                started,
                success,
                made,
            )
        else:
            tally.support(latest, made, started, success)
    return tally.finding(
        "Every execution carries the latest intent revision and its proposal's arguments."
    )


def _confirmation_problem(
    log: _Log,
    started: _CommitStart,
    confirmation: _Understanding | None,
    made: _Proposal | None,
) -> tuple[str, _Revised | None] | None:
    """Why a commit's confirmation is not explicit (with any correction that shows it), or None."""
    if confirmation is None:
        return f"{started.id} names no caller.understood as its confirmation.", None
    kind = confirmation.kind
    if kind is not UnderstandingKind.CONFIRM:
        return f"{started.id} rests on {confirmation.id}, a {kind} turn, not a confirm.", None
    if made is None:
        return f"{started.id} names no proposal.made that {confirmation.id} could confirm.", None
    if not made.seq < confirmation.seq < started.seq:
        return (
            f"Confirmation {confirmation.id} does not fall between proposal "
            f"{made.proposal_id} ({made.id}) and commit {started.id}.",
            None,
        )
    revised = log.revisions.between(made.seq, confirmation.seq)
    if revised is not None:
        return (
            f"Revision {revised.revision} ({revised.id}) came between proposal "
            f"{made.proposal_id} and confirmation {confirmation.id}.",
            revised,
        )
    return None


def _commit_confirmed_explicitly(log: _Log) -> _Finding:
    if not log.executions:
        return _lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    tally = _Tally()
    for execution in log.executions:
        started, success = execution.events
        if started is None:
            tally.contradict(f"Receipt {success.id} has no tool.commit.started.", success)
            continue
        confirmation = log.confirmation_of(started)
        made = log.proposal_by_id.get(started.proposal_id) if started.proposal_id else None
        problem = _confirmation_problem(log, started, confirmation, made)
        if problem is None:
            tally.support(made, confirmation, started, success)
        else:
            reason, correction = problem
            tally.contradict(reason, started, success, confirmation, correction)
    return tally.finding(
        "Every execution rests on an explicit confirm given after its proposal, "
        "with no correction in between."
    )


def _awaits_confirmation(log: _Log) -> _Finding:
    if not log.proposals:
        return _lacking("Expected a proposal.made awaiting confirmation; none was prepared.")
    tally = _Tally()
    for execution in log.executions:
        tally.contradict(
            f"{execution.succeeded.id} executed while the proposal awaited confirmation.",
            *execution.events,
        )
    if log.ended is None:
        tally.lack("Expected run.ended with the proposal still unexecuted.")
    elif not tally.contradictions:
        tally.support(log.proposals[-1], log.ended)
    return tally.finding("A proposal was prepared and the run ended with nothing executed.")


def _positive_talk_not_confirmation(log: _Log) -> _Finding:
    if not log.positives:
        return _lacking("Expected a caller.understood of kind positive; none was recorded.")
    tally = _Tally()
    for started in log.commit_starts:
        confirmation = log.confirmation_of(started)
        if confirmation is None or confirmation.kind is not UnderstandingKind.CONFIRM:
            basis = (
                f"the {confirmation.kind} turn {confirmation.id}"
                if confirmation
                else "no confirmation at all"
            )
            tally.contradict(f"{started.id} commits on {basis}.", started, confirmation)
    if log.ended is None:
        tally.lack("Expected run.ended with no commit resting on positive talk.")
    elif not tally.contradictions:
        positive_ids = {positive.id for positive in log.positives}
        blocks = [
            block
            for block in log.commit_blocks
            if positive_ids.intersection(block.rests_on)
            or block.confirmation_event_id in positive_ids
        ]
        tally.support(*log.positives, *blocks, log.ended)
    return tally.finding("Positive talk never led to a commit, and the run ended.")


def _lookup_failure_recorded(log: _Log) -> _Finding:
    if not log.lookup_failures:
        return _lacking("Expected a tool.lookup.failed; no lookup failed.")
    tally = _Tally()
    late = log.late_results
    # Late results are rare, so the proposals are only scanned when there is one.
    for made in log.proposals if late else ():
        grounded = made.grounded_on
        if grounded is None or grounded not in late:
            continue
        success, failure = log.lookup_successes[grounded], late[grounded]
        tally.contradict(
            f"Proposal {made.proposal_id} rests on {success.id}, a result for "
            f"lookup {success.attempt_id} that had already failed ({failure.id}).",
            failure,
            success,
            made,
        )
    for failed in log.lookup_failures:
        attempt_id = failed.attempt_id
        started = log.lookup_start_by_attempt.get(attempt_id)
        if started is None:
            tally.lack(f"Expected the tool.lookup.started of failed lookup {attempt_id}.")
            continue
        retry = next(
            (
                later
                for later in log.lookup_starts_by_revision.get(started.revision, ())
                if later.seq > failed.seq and later.attempt > started.attempt
            ),
            None,
        )
        if retry is None:
            tally.lack(
                f"Expected a retry after lookup {attempt_id} failed ({failed.id}); it is missing."
            )
        else:
            tally.support(started, failed, retry)
    return tally.finding("Each failed lookup was recorded and retried as a separate attempt.")


def _read_retried_at_most_once(log: _Log) -> _Finding:
    if not log.lookup_starts_by_revision:
        return _lacking("Expected a tool.lookup.started; no lookup ran.")
    tally = _Tally()
    for revision, starts in log.lookup_starts_by_revision.items():
        tally.support(*starts)
        if len(starts) > 2:
            tally.contradict(
                f"Revision {revision} started {len(starts)} lookups; one retry is the limit.",
                *starts[2:],
            )
    return tally.finding("No revision's lookup was retried more than once.")


def _grounding_problem(log: _Log, made: _Proposal, success: _LookupSuccess | None) -> str | None:
    """Why a proposal is not grounded on a timely, successful lookup, or None."""
    pid = made.proposal_id
    if made.grounded_on is None:
        return f"Proposal {pid} ({made.id}) rests on no lookup result."
    if success is None or success.seq > made.seq:
        return f"Proposal {pid} rests on {made.grounded_on}, not an earlier lookup result."
    attempt_id = success.attempt_id
    started = log.lookup_start_by_attempt.get(attempt_id)
    if started is None or started.revision != made.revision:
        return f"Proposal {pid} rests on lookup {attempt_id}, not one for its revision."
    if attempt_id in log.lookup_failure_by_attempt:
        return f"Proposal {pid} rests on lookup {attempt_id}, which had failed."
    if not any(option_grounds(option, made.args) for option in success.options):
        return f"Proposal {pid} offers {made.args}, which lookup {attempt_id} did not return."
    return None


def _no_invented_result(log: _Log) -> _Finding:
    if not log.proposals:
        return _lacking("Expected a proposal.made; none was prepared.")
    tally = _Tally()
    for made in log.proposals:
        grounded = made.grounded_on
        success = log.lookup_successes.get(grounded) if grounded else None
        problem = _grounding_problem(log, made, success)
        if problem is None:
            tally.support(success, made)
        else:
            failure = log.lookup_failure_by_revision.get(made.revision)
            tally.contradict(problem, made, success, failure)
    return tally.finding("Every proposal rests on a successful, timely lookup that returned it.")


def _interruption_expires_proposal(log: _Log) -> _Finding:
    tally, interrupted = _Tally(), 0
    for interruption in log.interruptions:
        readback = log.readbacks.get(interruption.utterance_event_id)
        if readback is None:
            continue
        pid = readback.proposal_id
        commits = log.commit_starts_by_proposal.get(pid, [])
        # A readback cut into after its proposal was already committed has nothing to expire.
        if any(started.seq < interruption.seq for started in commits):
            continue
        interrupted += 1
        commit = _first_after(commits, interruption.seq)
        if commit is not None:
            tally.contradict(
                f"Proposal {pid} was committed by {commit.id} after its readback was "
                f"interrupted ({interruption.id}).",
                interruption,
                commit,
                log.commit_success_by_attempt.get(commit.attempt_id),
            )
            continue
        expired = _first_after(log.expirations.get(pid, ()), interruption.seq)
        if expired is None:
            tally.lack(
                f"Expected a proposal.expired for {pid} after its readback was interrupted "
                f"({interruption.id})."
            )
        else:
            tally.support(readback, interruption, expired)
    if not interrupted:
        return _lacking("Expected an agent.interrupted during a readback; none was recorded.")
    return tally.finding(
        f"Every interrupted proposal expired ({interrupted} in all) and none was committed."
    )


def _single_execution(log: _Log) -> _Finding:
    if not log.executions:
        return _lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    tally = _Tally()
    by_proposal: defaultdict[str, list[_Execution]] = defaultdict(list)
    by_key: defaultdict[str, list[_Execution]] = defaultdict(list)
    produced_at: dict[str, int] = {}
    for execution in log.executions:
        success = execution.succeeded
        tally.support(success)
        by_key[success.idempotency_key].append(execution)
        produced_at.setdefault(success.execution_id, success.seq)
        if execution.started is not None and execution.started.proposal_id is not None:
            by_proposal[execution.started.proposal_id].append(execution)
    for what, groups in (("proposal", by_proposal), ("idempotency key", by_key)):
        for name, group in groups.items():
            if len(group) > 1:
                tally.contradict(
                    f"{len(group)} executions share {what} {name}.",
                    *(record for execution in group for record in execution.events),
                )
    for replay in log.replays:
        tally.support(replay)
        execution_id = replay.execution_id
        original = produced_at.get(execution_id)
        if original is None or original > replay.seq:
            tally.contradict(
                f"Replay {replay.id} returns execution {execution_id}, which no earlier "
                "execution produced.",
                replay,
            )
    return tally.finding(
        f"{len(log.executions)} execution(s), one per proposal and idempotency key; "
        f"{len(log.replays)} repeat(s) returned the original receipt."
    )


_CHECKS: dict[AssertionKind, Callable[[_Log], _Finding]] = {
    AssertionKind.SUPERSEDED_PROPOSAL_EXPIRED: _superseded_proposal_expired,
    AssertionKind.COMMIT_USES_LATEST_REVISION: _commit_uses_latest_revision,
    AssertionKind.COMMIT_CONFIRMED_EXPLICITLY: _commit_confirmed_explicitly,
    AssertionKind.AWAITS_CONFIRMATION: _awaits_confirmation,
    AssertionKind.POSITIVE_TALK_NOT_CONFIRMATION: _positive_talk_not_confirmation,
    AssertionKind.LOOKUP_FAILURE_RECORDED: _lookup_failure_recorded,
    AssertionKind.READ_RETRIED_AT_MOST_ONCE: _read_retried_at_most_once,
    AssertionKind.NO_INVENTED_RESULT: _no_invented_result,
    AssertionKind.INTERRUPTION_EXPIRES_PROPOSAL: _interruption_expires_proposal,
    AssertionKind.SINGLE_EXECUTION: _single_execution,
}


def _judge(assertion: Assertion, log: _Log) -> AssertionResult:
    finding = _CHECKS[assertion.kind](log)
    return AssertionResult(
        id=assertion.id,
        kind=assertion.kind,
        description=assertion.description,
        state=finding.state,
        supporting=list(dict.fromkeys(finding.supporting)),
        contradicting=list(dict.fromkeys(finding.contradicting)),
        reason=finding.reason,
    )


def _ids_text(ids: list[str]) -> str:
    shown = ", ".join(ids[:_IDS_IN_REASON])
    more = len(ids) - _IDS_IN_REASON
    return f"{shown} and {more} more" if more > 0 else shown


def _verdict(results: list[AssertionResult], ended: _End | None) -> tuple[Verdict, ReasonKind, str]:
    contradicted = [r for r in results if r.state is AssertionState.CONTRADICTED]
    if contradicted:
        named = "; ".join(f"{r.id} by {_ids_text(r.contradicting)}" for r in contradicted)
        return Verdict.FAIL, "contradicted", f"Contradicted: {named}."
    if ended is None:
        return (
            Verdict.INCONCLUSIVE,
            "run_incomplete",
            "The run has not ended (no run.ended yet), so nothing contradicts it but "
            "nothing is proven.",
        )
    if ended.reason_kind != "completed":
        return (
            Verdict.INCONCLUSIVE,
            "run_abandoned",
            f"The run ended {ended.reason_kind} ({ended.reason}) instead of "
            "completing; an unfinished run is never a PASS.",
        )
    missing = [r for r in results if r.state is AssertionState.NO_EVIDENCE]
    if missing:
        named = "; ".join(f"{r.id}: {r.reason}" for r in missing)
        return Verdict.INCONCLUSIVE, "missing_event", f"No evidence for {named}"
    return Verdict.PASS, "all_supported", f"All {len(results)} assertions are supported."


def _evaluate(contract: Contract, events: Sequence[Event]) -> Evaluation:
    log = _Log(events)
    results = [_judge(assertion, log) for assertion in contract.assertions]
    verdict, reason_kind, reason = _verdict(results, log.ended)
    return Evaluation(
        evaluator_version=EVALUATOR_VERSION,
        contract_id=contract.id,
        contract_version=contract.version,
        verdict=verdict,
        reason_kind=reason_kind,
        reason=reason,
        assertions=results,
    )


def _evaluator_error(contract: Contract, error: Exception) -> Evaluation:
    try:
        contract_id, version = str(contract.id), int(contract.version)
        detail = f"{type(error).__name__}: {error}"[:300]
    except Exception:  # a contract too broken to read still gets a verdict
        contract_id, version, detail = "unknown", 0, type(error).__name__
    return Evaluation(
        evaluator_version=EVALUATOR_VERSION,
        contract_id=contract_id,
        contract_version=version,
        verdict=Verdict.INCONCLUSIVE,
        reason_kind="evaluator_error",
        reason=f"The evaluator could not read this input ({detail}); it proves nothing.",
        assertions=[],
    )


def evaluate(contract: Contract, events: Sequence[Event]) -> Evaluation:
    """Judge every assertion of contract against the ordered events; never raises."""
    try:
        return _evaluate(contract, events)
    except Exception as error:  # the live panel and report import must always get a verdict
        return _evaluator_error(contract, error)
