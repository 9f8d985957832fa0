"""Assertions about barge-in: an interrupted readback's proposal expires uncommitted."""

from __future__ import annotations

from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import first_after


def interruption_expires_proposal(log: LogIndex) -> Finding:
    tally, interrupted = Tally(), 0
    for interruption in log.interruptions:
        readback = log.readbacks.get(interruption.utterance_event_id)
        if readback is None:
            continue
        pid = readback.proposal_id
        commits = log.attempts_by_proposal.get(pid, [])
        # A readback cut into after its proposal was already committed has nothing to expire.
        if any(started.seq < interruption.seq for started in commits):
            continue
        interrupted += 1
        commit = first_after(commits, interruption.seq)
        if commit is not None:
            tally.contradict(
                f"Proposal {pid} was committed by {commit.id} after its readback was "
                f"interrupted ({interruption.id}){log.unexecuted_note(commit)}.",
                interruption,
                commit,
                log.commit_success_by_attempt.get(commit.attempt_id),
            )
            continue
        # Expired after this readback was said: at this cut, or at the cut of an earlier
        # sentence of the same offer (a streamed readback is several utterances, one cut each).
        expired = first_after(log.expirations.get(pid, ()), readback.seq)
        if expired is None:
            tally.lack(
                f"Expected a proposal.expired for {pid} after its readback was interrupted "
                f"({interruption.id})."
            )
        else:
            tally.support(readback, interruption, expired)
    if not interrupted:
        return lacking("Expected an agent.interrupted during a readback; none was recorded.")
    return tally.finding(
        f"Every interrupted proposal expired ({interrupted} in all) and none was committed."
    )


def readback_heard_out(log: LogIndex) -> Finding:
    """A readback the caller only acknowledges plays on uncut, and its proposal is booked."""
    if not log.readbacks:
        return lacking("Expected a readback; none was made.")
    tally = Tally()
    for interruption in log.interruptions:
        readback = log.readbacks.get(interruption.utterance_event_id)
        if readback is not None:
            tally.contradict(
                f"The readback {readback.id} was cut ({interruption.id}) although the caller "
                "only acknowledged it.",
                readback,
                interruption,
            )
    first = min(log.readbacks.values(), key=lambda readback: readback.seq)
    pid = first.proposal_id
    commits = log.commit_starts_by_proposal.get(pid, [])
    if commits:
        tally.support(first, commits[0])
    else:
        tally.lack(f"Expected the acknowledged proposal {pid} to be booked; it never was.")
    return tally.finding(
        f"The readback of {pid} played on through the acknowledgement; {pid} was booked."
    )
