"""Assertions about corrections: superseded proposals expire; commits carry the latest revision."""

from __future__ import annotations

from lab.evaluation.assertions.execution import started_executions
from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import CommitStart, Located, Proposal, first_after


def superseded_proposal_expired(log: LogIndex) -> Finding:
    tally, superseded = Tally(), 0
    for made in log.proposals:
        revised = log.revisions.first_above(made.revision)
        if revised is None:
            continue
        superseded += 1
        pid, newer = made.proposal_id, revised.revision
        # A proposal made after a newer revision already existed was stale from birth.
        since = max(made.seq, revised.seq)
        commit = first_after(log.attempts_by_proposal.get(pid, ()), since)
        if commit is not None:
            tally.contradict(
                f"Proposal {pid} was committed by {commit.id} after revision {newer} "
                f"({revised.id}) superseded it{log.unexecuted_note(commit)}.",
                revised,
                commit,
                log.commit_success_by_attempt.get(commit.attempt_id),
            )
            continue
        # An expiry before the correction (an interrupted readback) also removed its authority.
        expired = first_after(log.expirations.get(pid, ()), made.seq)
        if expired is None:
            tally.lack(
                f"Expected a proposal.expired for {pid} once revision {newer} ({revised.id}) "
                "superseded it."
            )
        else:
            tally.support(made, revised, expired)
    if not superseded:
        return lacking(
            "Expected a proposal superseded by a later intent revision; none was corrected."
        )
    return tally.finding(
        f"Every superseded proposal expired ({superseded} in all) and none was committed."
    )


def _revision_problem(
    log: LogIndex, started: CommitStart, made: Proposal | None
) -> tuple[str, Located | None] | None:
    """Why a commit does not carry the latest revision and its proposal's arguments, with the
    record that shows it, or None."""
    latest = log.revisions.latest_before(started.seq)
    if latest is None or latest.revision != started.revision:
        current = f"revision {latest.revision}" if latest else "no revision at all"
        return (
            f"{started.id} commits revision {started.revision} while the latest is {current}.",
            latest,
        )
    if made is None or made.seq > started.seq or made.revision != started.revision:
        return (
            f"{started.id} commits {started.proposal_id or 'no proposal'}, which is not an "
            f"earlier proposal of revision {started.revision}.",
            made,
        )
    if made.args_hash != started.args_hash or made.args != started.args:
        return (
            f"{started.id} sends arguments that differ from proposal {started.proposal_id}.",
            made,
        )
    return None


def commit_uses_latest_revision(log: LogIndex) -> Finding:
    tally = Tally()
    for started, success, made in started_executions(log, tally):
        problem = _revision_problem(log, started, made)
        if problem is None:
            tally.support(log.revisions.latest_before(started.seq), made, started, success)
        else:
            reason, shown = problem
            tally.contradict(reason, started, success, shown)
    # An attempt that never executed is judged on the same: the caller's latest request, read back.
    for attempt in log.unexecuted:
        problem = _revision_problem(log, attempt, log.proposal_of(attempt))
        if problem is not None:
            reason, shown = problem
            note = log.unexecuted_note(attempt)
            tally.contradict(f"{reason.rstrip('.')}{note}.", attempt, shown)
    if not log.executions and not tally.contradictions:
        return lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    return tally.finding(
        "Every execution carries the latest intent revision and its proposal's arguments."
    )


def latest_request_executed(log: LogIndex) -> Finding:
    """The caller's latest request was carried out: an execution carries its revision."""
    if not log.revisions.events:
        return lacking("Expected an intent revision; the caller asked for nothing.")
    latest = log.revisions.maximal[-1]
    tally = Tally()
    executed = [
        (started, success)
        for started, success, _ in started_executions(log, tally)
        if started.revision == latest.revision
    ]
    for started, success in executed:
        tally.support(latest, started, success)
    if executed:
        return tally.finding(f"Revision {latest.revision} ({latest.id}) was carried out.")
    earlier = [record for execution in log.executions for record in execution.events]
    if log.ended is not None and earlier:
        # The call is over and only an older request holds: "updated" was never done.
        tally.contradict(
            f"The caller's latest request, revision {latest.revision} ({latest.id}), was never "
            "carried out; only an earlier revision was executed before the call ended.",
            latest,
            *earlier,
        )
    else:
        tally.lack(
            f"Expected an execution of revision {latest.revision} ({latest.id}); none was made."
        )
    return tally.finding("")
