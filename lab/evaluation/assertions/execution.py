"""Assertions about execution: one execution per proposal and key; replays return it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import CommitStart, CommitSuccess, Execution, Proposal


def started_executions(
    log: LogIndex, tally: Tally
) -> Iterator[tuple[CommitStart, CommitSuccess, Proposal | None]]:
    """Each execution with its start and the proposal it names; a receipt with no recorded start
    is contradicted on the tally and skipped."""
    for execution in log.executions:
        started, success = execution.events
        if started is None:
            tally.contradict(f"Receipt {success.id} has no tool.commit.started.", success)
            continue
        made = log.proposal_by_id.get(started.proposal_id) if started.proposal_id else None
        yield started, success, made


def single_execution(log: LogIndex) -> Finding:
    if not log.executions:
        return lacking("Expected an executed tool.commit.succeeded; nothing was executed.")
    tally = Tally()
    by_proposal: defaultdict[str, list[Execution]] = defaultdict(list)
    by_key: defaultdict[str, list[Execution]] = defaultdict(list)
    produced_at: dict[str, int] = {}
    for execution in log.executions:
        success = execution.succeeded
        tally.support(success)
        by_key[success.idempotency_key].append(execution)
        # A write runs within its attempt: one whose answer was lost is reconciled later, and a
        # replay between the two still returns an execution made before it.
        made = execution.started.seq if execution.started is not None else success.seq
        produced_at.setdefault(success.execution_id, made)
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
    for started in log.open_commits:
        tally.lack(
            f"Commit {started.attempt_id} ({started.id}) has no recorded outcome, so the sandbox "
            "may hold an execution the log does not show."
        )
    return tally.finding(
        f"{len(log.executions)} execution(s), one per proposal and idempotency key; "
        f"{len(log.replays)} repeat(s) returned the original receipt."
    )


def commit_outcome_recorded(log: LogIndex) -> Finding:
    """Every commit attempt's outcome is in the log, a write in flight when the call ended too
    (reconciled from the sandbox): an outcome left unknown is a write nobody can account for."""
    if not log.commit_starts:
        return lacking("Expected a commit attempt; none was made.")
    tally = Tally()
    for started in log.commit_starts:
        settled = log.commits_settled.get(started.attempt_id)
        if settled is not None:
            tally.support(started, settled)
        elif log.ended is not None:
            tally.contradict(
                f"The run ended with commit {started.attempt_id} ({started.id}) unsettled: "
                "nothing in the log says whether the write ran.",
                started,
                log.ended,
            )
        else:
            tally.lack(f"Commit {started.attempt_id} ({started.id}) has no outcome yet.")
    return tally.finding(f"All {len(log.commit_starts)} commit attempt(s) have a recorded outcome.")


def one_commit_per_confirmation(log: LogIndex) -> Finding:
    """Each go-ahead starts one write. A further attempt on it is only a retry, on the same key,
    of a write the agent was told may have run; any other is a second write, blocked or not."""
    if not log.attempts:
        return lacking("Expected a commit attempt; none was made.")
    tally = Tally()
    last: dict[str, CommitStart] = {}
    for attempt in log.attempts:
        tally.support(attempt)
        go_ahead = attempt.confirmation_event_id
        if go_ahead is None:
            continue  # resting on no confirmation is commit_confirmed_explicitly's to judge
        earlier = last.get(go_ahead)
        last[go_ahead] = attempt
        why = None if earlier is None else _second_write(log, earlier, attempt)
        if earlier is not None and why is not None:
            tally.contradict(
                f"Commit {attempt.attempt_id} ({attempt.id}) is a second write on go-ahead "
                f"{go_ahead}: {why}.",
                earlier,
                attempt,
            )
    return tally.finding(f"{len(log.attempts)} commit attempt(s), one write per go-ahead.")


def _second_write(log: LogIndex, earlier: CommitStart, again: CommitStart) -> str | None:
    """Why `again` is a second write after `earlier` on the same go-ahead (None: a retry)."""
    unknown = log.answered_unknown.get(earlier.attempt_id)
    settled = log.commits_settled.get(earlier.attempt_id)
    if unknown is None or unknown.seq > again.seq:
        if settled is None or settled.seq > again.seq:
            return f"sent while {earlier.attempt_id} ({earlier.id}) was still in flight"
        return f"sent after {earlier.attempt_id} ({earlier.id}) had its answer"
    if again.idempotency_key is None or again.idempotency_key != earlier.idempotency_key:
        return f"a retry of {earlier.attempt_id} ({earlier.id}) on a new idempotency key"
    return None
