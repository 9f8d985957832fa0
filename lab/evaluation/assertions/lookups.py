"""Assertions about reads: failures recorded and retried at most once; no invented results."""

from __future__ import annotations

from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import CommitStart, LookupSuccess, Proposal
from lab.events.types import option_grounds


def lookup_failure_recorded(log: LogIndex) -> Finding:
    if not log.lookup_failures:
        return lacking("Expected a tool.lookup.failed; no lookup failed.")
    tally = Tally()
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


def read_retried_at_most_once(log: LogIndex) -> Finding:
    if not log.lookup_starts_by_revision:
        return lacking("Expected a tool.lookup.started; no lookup ran.")
    tally = Tally()
    for revision, starts in log.lookup_starts_by_revision.items():
        tally.support(*starts)
        if len(starts) > 2:
            tally.contradict(
                f"Revision {revision} started {len(starts)} lookups; one retry is the limit.",
                *starts[2:],
            )
    return tally.finding("No revision's lookup was retried more than once.")


def _grounding_problem(log: LogIndex, made: Proposal, success: LookupSuccess | None) -> str | None:
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


def no_invented_result(log: LogIndex) -> Finding:
    if not log.proposals and not log.attempts:
        return lacking("Expected a proposal.made; none was prepared.")
    tally = Tally()
    for made in log.proposals:
        grounded = made.grounded_on
        success = log.lookup_successes.get(grounded) if grounded else None
        problem = _grounding_problem(log, made, success)
        if problem is None:
            tally.support(success, made)
        else:
            failure = log.lookup_failure_by_revision.get(made.revision)
            tally.contradict(problem, made, success, failure)
    # A commit attempt sends the tool values too: with no readback at all, or after a failed
    # lookup, what it sends must still be what a timely lookup of its revision returned. Where
    # proposals were made they carry the support, so an honest run reads as it always did.
    for attempt in log.attempts:
        success = _returned(log, attempt)
        if success is None:
            failure = log.lookup_failure_by_revision.get(attempt.revision)
            tally.contradict(
                f"Commit {attempt.id} sends {attempt.args}, which no timely lookup of revision "
                f"{attempt.revision} returned{log.unexecuted_note(attempt)}.",
                attempt,
                failure,
            )
        elif not log.proposals:
            tally.support(success, attempt)
    if not log.proposals:
        return tally.finding("Every commit sends what a successful, timely lookup returned.")
    return tally.finding("Every proposal rests on a successful, timely lookup that returned it.")


def _returned(log: LogIndex, attempt: CommitStart) -> LookupSuccess | None:
    """The earlier, timely lookup result of the attempt's revision that returned its args."""
    for success in log.lookup_successes.values():
        started = log.lookup_start_by_attempt.get(success.attempt_id)
        if (
            success.seq < attempt.seq
            and started is not None
            and started.revision == attempt.revision
            and success.attempt_id not in log.lookup_failure_by_attempt
            and any(option_grounds(option, attempt.args) for option in success.options)
        ):
            return success
    return None
