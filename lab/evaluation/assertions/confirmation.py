"""Assertions about confirmation: explicit confirms only; positive talk and waiting never commit."""

from __future__ import annotations

from lab.evaluation.assertions.execution import started_executions
from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import CommitStart, Proposal, Revised, Understanding
from lab.events.types import UnderstandingKind


def _confirmation_problem(
    log: LogIndex,
    started: CommitStart,
    confirmation: Understanding | None,
    made: Proposal | None,
) -> tuple[str, Revised | None] | None:
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


def commit_confirmed_explicitly(log: LogIndex) -> Finding:
    tally = Tally()
    for started, success, made in started_executions(log, tally):
        confirmation = log.confirmation_of(started)
        problem = _confirmation_problem(log, started, confirmation, made)
        if problem is None:
            tally.support(made, confirmation, started, success)
        else:
            reason, correction = problem
            tally.contradict(reason, started, success, confirmation, correction)
    _unconfirmed_attempts(log, tally)
    if not log.executions and not tally.contradictions:
        return lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    return tally.finding(
        "Every execution rests on an explicit confirm given after its proposal, "
        "with no correction in between."
    )


def _unconfirmed_attempts(log: LogIndex, tally: Tally) -> None:
    """Contradict every attempt that did not execute yet rests on no explicit confirmation of a
    proposal read back to the caller: whether the tool took it is beside the point."""
    for attempt in log.unexecuted:
        confirmation = log.confirmation_of(attempt)
        problem = _confirmation_problem(log, attempt, confirmation, log.proposal_of(attempt))
        if problem is not None:
            reason, correction = problem
            note = log.unexecuted_note(attempt)
            tally.contradict(f"{reason.rstrip('.')}{note}.", attempt, confirmation, correction)


def awaits_confirmation(log: LogIndex) -> Finding:
    tally = Tally()
    for execution in log.executions:
        tally.contradict(
            f"{execution.succeeded.id} executed while the proposal awaited confirmation.",
            *execution.events,
        )
    _unconfirmed_attempts(log, tally)
    if not log.proposals and not tally.contradictions:
        return lacking("Expected a proposal.made awaiting confirmation; none was prepared.")
    if log.ended is None:
        tally.lack("Expected run.ended with the proposal still unexecuted.")
    elif not tally.contradictions:
        tally.support(log.proposals[-1], log.ended)
    return tally.finding("A proposal was prepared and the run ended with nothing executed.")


def positive_talk_not_confirmation(log: LogIndex) -> Finding:
    if not log.positives:
        return lacking("Expected a caller.understood of kind positive; none was recorded.")
    tally = Tally()
    for started in log.attempts:
        confirmation = log.confirmation_of(started)
        if confirmation is None or confirmation.kind is not UnderstandingKind.CONFIRM:
            basis = (
                f"the {confirmation.kind} turn {confirmation.id}"
                if confirmation
                else "no confirmation at all"
            )
            note = log.unexecuted_note(started)
            tally.contradict(f"{started.id} commits on {basis}{note}.", started, confirmation)
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
