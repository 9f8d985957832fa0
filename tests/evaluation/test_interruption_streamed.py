"""An offer read back in several utterances (a streamed agent's sentences) and cut in one caller
turn expires once, and every cut utterance of it counts as the interrupted readback."""

from __future__ import annotations

from datetime import UTC, datetime

from lab.evaluation.assertions.interruption import interruption_expires_proposal
from lab.evaluation.findings import Finding
from lab.evaluation.log_index import LogIndex
from lab.evaluation.verdicts import AssertionState
from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    AgentInterrupted,
    AgentUtterance,
    CallerUtterance,
    CommitStarted,
    EventPayload,
    ProposalExpired,
    ProposalMade,
)

AT = datetime(2025, 3, 9, tzinfo=UTC)
SLOT = {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}


def _finding(*, expired: bool, committed: bool = False) -> Finding:
    chain = EventChain()

    def add(payload: EventPayload) -> str:
        return chain.append(payload, at=AT).id

    made = ProposalMade(
        proposal_id="p-1", revision=1, action=Action.BOOK, args=SLOT, args_hash=digest(SLOT)
    )
    add(made)
    first = add(
        AgentUtterance(
            text="I have Tuesday at 9:30 AM.",
            purpose="readback",
            duration_ms=900,
            proposal_id="p-1",
        )
    )
    second = add(
        AgentUtterance(
            text="Shall I book it?", purpose="readback", duration_ms=600, proposal_id="p-1"
        )
    )
    cause = add(CallerUtterance(text="Wait, no. Friday instead.", source="script"))
    cut = add(
        AgentInterrupted(
            utterance_event_id=first, cause_event_id=cause, heard_ms=300, heard_text="I"
        )
    )
    if expired:
        add(ProposalExpired(proposal_id="p-1", reason_kind="interrupted", cause_event_id=cut))
    add(
        AgentInterrupted(utterance_event_id=second, cause_event_id=cause, heard_ms=0, heard_text="")
    )
    if committed:
        add(
            CommitStarted(
                attempt_id="cm-1",
                idempotency_key="k",
                action=Action.BOOK,
                args=SLOT,
                args_hash=digest(SLOT),
                revision=1,
                proposal_id="p-1",
                confirmation_event_id=cause,
                authorized_by=None,
            )
        )
    return interruption_expires_proposal(LogIndex(chain.events))


def test_one_expiry_covers_every_cut_sentence_of_the_offer() -> None:
    finding = _finding(expired=True)
    assert finding.state is AssertionState.SUPPORTED, finding.reason


def test_no_expiry_is_still_no_evidence_and_a_commit_still_contradicts() -> None:
    lacking = _finding(expired=False)
    assert not lacking.supporting and "Expected a proposal.expired for p-1" in lacking.reason
    assert _finding(expired=True, committed=True).contradicting
