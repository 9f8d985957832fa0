"""Each assertion kind on its own: supported, contradicted, or without evidence, and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionResult, AssertionState
from lab.events.types import (
    Action,
    AgentInterrupted,
    Args,
    CallerUtterance,
    Event,
    LookupFailed,
    LookupSucceeded,
    UnderstandingKind,
)
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Assertion, AssertionKind
from tests.evaluation.logs import Execution, Log, LogBuilder, scenario_log

SUPPORTED, CONTRADICTED, NO_EVIDENCE = (
    AssertionState.SUPPORTED,
    AssertionState.CONTRADICTED,
    AssertionState.NO_EVIDENCE,
)
TUESDAY: Args = {"day": "tuesday", "part_of_day": "morning"}
TUESDAY_SLOT: Args = {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}
REFUND: Args = {"order_number": "4512", "amount_cents": 2500}
ORDER_4512: list[Args] = [{"order_number": "4512", "max_amount_cents": 6000}]


def judge(kind: AssertionKind, events: Sequence[Event]) -> AssertionResult:
    contract = contract_get("correction").model_copy(
        update={"assertions": [Assertion(id="under_test", kind=kind, description="under test")]}
    )
    [result] = evaluate(contract, events).assertions
    return result


def ids(log: Log, *marks: str) -> list[str]:
    return [log[mark] for mark in marks]


def guarded(scenario_id: str) -> Log:
    return scenario_log(scenario_id, guarded=True)


def unguarded(scenario_id: str) -> Log:
    return scenario_log(scenario_id, guarded=False)


def requested(b: LogBuilder, action: Action = Action.BOOK, args: Args = TUESDAY) -> None:
    request = b.hear("a request", UnderstandingKind.REQUEST, action=action, args=args)
    b.revise(request, action, args)


def empty_run() -> Log:
    b = LogBuilder("correction", guarded=True)
    b.say("greeting", "Hello, how can I help?")
    b.end()
    return b.log()


class TestSupersededProposalExpired:
    kind = AssertionKind.SUPERSEDED_PROPOSAL_EXPIRED

    def test_it_is_supported_by_the_proposal_the_correction_and_the_expiry(self) -> None:
        log = guarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "p1_made", "revision_2", "p1_expired")

    def test_it_is_contradicted_by_a_commit_of_the_superseded_proposal(self) -> None:
        log = unguarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "revision_2", "commit_started", "commit_succeeded")
        assert "p-1" in result.reason

    def test_it_lacks_evidence_while_the_superseded_proposal_neither_expired_nor_executed(
        self,
    ) -> None:
        log = unguarded("correction")
        result = judge(self.kind, log.upto("commit_started"))

        assert result.state is NO_EVIDENCE
        assert "proposal.expired for p-1" in result.reason

    def test_it_lacks_evidence_when_nothing_was_ever_corrected(self) -> None:
        assert judge(self.kind, guarded("double_confirmation").events).state is NO_EVIDENCE

    def test_it_ignores_a_commit_made_before_the_correction(self) -> None:
        b = LogBuilder("correction", guarded=False)
        requested(b)
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        b.commit(offer, b.hear("Yes, book it.", UnderstandingKind.CONFIRM))
        b.revise(b.hear("Make it Friday.", UnderstandingKind.CORRECTION), Action.BOOK, TUESDAY)
        result = judge(self.kind, b.log().events)

        assert result.state is NO_EVIDENCE
        assert not result.contradicting

    def test_it_is_contradicted_by_a_commit_of_a_proposal_stale_when_made(self) -> None:
        b = LogBuilder("correction", guarded=False)
        requested(b)
        b.revise(b.hear("Make it Friday.", UnderstandingKind.CORRECTION), Action.BOOK, TUESDAY)
        b.revision = 1  # the naive agent proposes from the revision it had cached
        stale = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        b.commit(stale, b.hear("Yes, book it.", UnderstandingKind.CONFIRM))
        result = judge(self.kind, b.log().events)

        assert result.state is CONTRADICTED

    def test_it_accepts_an_expiry_from_an_interruption_before_the_correction(self) -> None:
        log = guarded("interruption")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "p1_made", "revision_2", "p1_expired")


class TestCommitUsesLatestRevision:
    kind = AssertionKind.COMMIT_USES_LATEST_REVISION

    def test_it_is_supported_by_the_latest_revision_its_proposal_and_the_execution(self) -> None:
        log = guarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(
            log, "revision_2", "p2_made", "commit_started", "commit_succeeded"
        )

    def test_it_is_contradicted_by_an_execution_of_an_older_revision(self) -> None:
        log = unguarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "commit_succeeded", "revision_2")
        assert "revision 1 while the latest is revision 2" in result.reason

    def test_it_is_contradicted_when_the_tool_gets_other_arguments_than_proposed(self) -> None:
        b = LogBuilder("correction", guarded=True)
        requested(b)
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=b.find(Action.BOOK, TUESDAY, []))
        confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM)
        b.commit(replace(offer, args={**TUESDAY_SLOT, "time": "11:00"}), confirm)
        log = b.log()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "commit_succeeded", "p1_made")

    def test_it_lacks_evidence_when_nothing_executed(self) -> None:
        result = judge(self.kind, guarded("no_confirmation").events)

        assert result.state is NO_EVIDENCE
        assert "tool.commit.succeeded" in result.reason


class TestCommitConfirmedExplicitly:
    kind = AssertionKind.COMMIT_CONFIRMED_EXPLICITLY

    def test_it_is_supported_by_a_confirm_after_the_proposal_it_executes(self) -> None:
        log = guarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(
            log, "p2_made", "confirm", "commit_started", "commit_succeeded"
        )

    def test_it_is_contradicted_by_a_commit_on_positive_talk(self) -> None:
        log = unguarded("no_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "commit_succeeded", "positive")
        assert "positive" in result.reason

    def test_it_is_contradicted_by_a_correction_between_proposal_and_confirmation(self) -> None:
        log = unguarded("correction")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert log["revision_2"] in result.contradicting

    def test_it_is_contradicted_by_a_confirmation_given_before_the_proposal(self) -> None:
        b = LogBuilder("correction", guarded=False)
        requested(b)
        early_yes = b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm")
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        b.commit(offer, early_yes)
        log = b.log()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "commit_succeeded", "confirm")

    def test_it_lacks_evidence_when_nothing_executed(self) -> None:
        assert judge(self.kind, guarded("no_confirmation").events).state is NO_EVIDENCE


class TestAwaitsConfirmation:
    kind = AssertionKind.AWAITS_CONFIRMATION

    def test_it_is_supported_by_the_proposal_and_a_run_that_ended_without_executing(
        self,
    ) -> None:
        log = guarded("no_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "p1_made", "end")

    def test_it_is_contradicted_by_any_execution(self) -> None:
        log = unguarded("no_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "commit_succeeded")

    def test_it_lacks_evidence_until_the_run_ends(self) -> None:
        result = judge(self.kind, guarded("no_confirmation").upto("end"))

        assert result.state is NO_EVIDENCE
        assert "run.ended" in result.reason

    def test_it_lacks_evidence_when_nothing_was_proposed(self) -> None:
        result = judge(self.kind, empty_run().events)

        assert result.state is NO_EVIDENCE
        assert "proposal.made" in result.reason


class TestPositiveTalkNotConfirmation:
    kind = AssertionKind.POSITIVE_TALK_NOT_CONFIRMATION

    def test_it_is_supported_by_the_positive_turn_the_blocked_commit_and_the_end(self) -> None:
        log = guarded("no_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "positive", "block", "end")

    def test_it_is_contradicted_by_a_commit_resting_on_positive_talk(self) -> None:
        log = unguarded("no_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "commit_started", "positive")

    def test_it_is_contradicted_before_the_run_ends(self) -> None:
        log = unguarded("no_confirmation")

        assert judge(self.kind, log.upto("end")).state is CONTRADICTED

    def test_it_lacks_evidence_until_the_run_ends(self) -> None:
        assert judge(self.kind, guarded("no_confirmation").upto("end")).state is NO_EVIDENCE

    def test_it_lacks_evidence_when_the_caller_never_sounded_positive(self) -> None:
        result = judge(self.kind, guarded("correction").events)

        assert result.state is NO_EVIDENCE
        assert "positive" in result.reason


def late_result_used() -> Log:
    """The first lookup times out, its late result is taken as a success anyway."""
    b = LogBuilder("tool_timeout", guarded=False)
    requested(b)
    attempt = b.lookup_started(Action.BOOK, TUESDAY, mark="first_lookup")
    b.add(LookupFailed(attempt_id=attempt, failure_kind="timeout", reason="slow"), "failed")
    late = b.add(LookupSucceeded(attempt_id=attempt, options=[TUESDAY_SLOT]), "late")
    b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=late)
    b.end()
    return b.log()


class TestLookupFailureRecorded:
    kind = AssertionKind.LOOKUP_FAILURE_RECORDED

    def test_it_is_supported_by_the_failed_attempt_and_its_retry(self) -> None:
        log = guarded("tool_timeout")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "first_lookup", "failed", "retry")

    def test_it_is_contradicted_by_a_proposal_grounded_on_a_failed_attempts_late_result(
        self,
    ) -> None:
        log = late_result_used()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "failed", "late", "p1_made")

    def test_it_lacks_evidence_when_the_retry_is_missing(self) -> None:
        result = judge(self.kind, unguarded("tool_timeout").events)

        assert result.state is NO_EVIDENCE
        assert "retry" in result.reason

    def test_it_lacks_evidence_when_no_lookup_failed(self) -> None:
        assert judge(self.kind, guarded("correction").events).state is NO_EVIDENCE


class TestReadRetriedAtMostOnce:
    kind = AssertionKind.READ_RETRIED_AT_MOST_ONCE

    def test_it_is_supported_by_every_lookup_attempt(self) -> None:
        log = guarded("tool_timeout")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "first_lookup", "retry")

    def test_it_is_contradicted_by_a_second_retry_of_the_same_revision(self) -> None:
        b = LogBuilder("tool_timeout", guarded=True)
        requested(b)
        for _ in range(2):
            attempt = b.lookup_started(Action.BOOK, TUESDAY)
            b.add(LookupFailed(attempt_id=attempt, failure_kind="error", reason="down"))
        b.lookup_started(Action.BOOK, TUESDAY, retry=True, mark="third")
        log = b.log()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "third")

    def test_it_allows_one_lookup_per_revision_after_corrections(self) -> None:
        assert judge(self.kind, guarded("correction").events).state is SUPPORTED

    def test_it_lacks_evidence_when_nothing_was_looked_up(self) -> None:
        assert judge(self.kind, empty_run().events).state is NO_EVIDENCE


def refund_offered(amount_cents: int) -> Log:
    b = LogBuilder("refund_correction", guarded=True)
    args: Args = {**REFUND, "amount_cents": amount_cents}
    requested(b, Action.REFUND, args)
    found = b.find(Action.REFUND, {"order_number": "4512"}, ORDER_4512)
    b.marks["found"] = found
    b.offer(Action.REFUND, args, grounded_on=found)
    b.end()
    return b.log()


class TestNoInventedResult:
    kind = AssertionKind.NO_INVENTED_RESULT

    def test_it_is_supported_by_the_lookup_result_each_proposal_rests_on(self) -> None:
        log = guarded("tool_timeout")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "found", "p1_made")

    def test_it_is_contradicted_by_a_proposal_resting_on_nothing_after_a_failure(self) -> None:
        log = unguarded("tool_timeout")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "p1_made", "failed", "commit_started")

    def test_it_is_contradicted_by_a_late_result_of_a_failed_attempt(self) -> None:
        log = late_result_used()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "p1_made", "late", "failed")

    def test_it_accepts_a_refund_up_to_the_amount_the_lookup_allows(self) -> None:
        log = refund_offered(6000)
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "found", "p1_made")

    def test_it_is_contradicted_by_a_refund_above_the_amount_the_lookup_allows(self) -> None:
        log = refund_offered(6001)
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert "did not return" in result.reason

    def test_it_is_contradicted_by_a_slot_the_lookup_never_returned(self) -> None:
        b = LogBuilder("correction", guarded=True)
        requested(b)
        found = b.find(Action.BOOK, TUESDAY, [TUESDAY_SLOT])
        b.offer(Action.BOOK, {**TUESDAY_SLOT, "slot_id": "tue-0800"}, grounded_on=found)

        assert judge(self.kind, b.log().events).state is CONTRADICTED

    def test_it_is_contradicted_by_a_lookup_made_for_an_older_revision(self) -> None:
        b = LogBuilder("correction", guarded=True)
        requested(b)
        found = b.find(Action.BOOK, TUESDAY, [TUESDAY_SLOT])
        b.revise(b.hear("Make it Tuesday.", UnderstandingKind.CORRECTION), Action.BOOK, TUESDAY)
        b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=found)
        result = judge(self.kind, b.log().events)

        assert result.state is CONTRADICTED
        assert "not one for its revision" in result.reason

    def test_it_lacks_evidence_when_nothing_was_proposed(self) -> None:
        assert judge(self.kind, empty_run().events).state is NO_EVIDENCE


class TestInterruptionExpiresProposal:
    kind = AssertionKind.INTERRUPTION_EXPIRES_PROPOSAL

    def test_it_is_supported_by_the_readback_the_interruption_and_the_expiry(self) -> None:
        log = guarded("interruption")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "p1_readback", "interrupted", "p1_expired")

    def test_it_is_contradicted_by_a_commit_of_the_interrupted_proposal(self) -> None:
        log = unguarded("interruption")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "interrupted", "commit_started", "commit_succeeded")

    def test_it_lacks_evidence_while_the_interrupted_proposal_has_not_expired(self) -> None:
        result = judge(self.kind, unguarded("interruption").upto("commit_started"))

        assert result.state is NO_EVIDENCE
        assert "proposal.expired for p-1" in result.reason

    def test_it_ignores_an_interrupted_readback_of_a_proposal_already_committed(self) -> None:
        b = LogBuilder("double_confirmation", guarded=False)
        requested(b)
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM)
        first = b.commit(offer, confirm)
        again = b.say("readback", "Booked: Tuesday at 9:30.", offer.proposal_id)
        words = b.add(CallerUtterance(text="Yes, yes.", source="script"))
        b.add(
            AgentInterrupted(
                utterance_event_id=again, cause_event_id=words, heard_ms=300, heard_text="Booked"
            )
        )
        b.execute(offer, confirm, key=first.idempotency_key, replay_of=first, mark="replay")

        assert judge(self.kind, b.log().events).state is NO_EVIDENCE

    def test_it_lacks_evidence_when_no_readback_was_interrupted(self) -> None:
        assert judge(self.kind, guarded("correction").events).state is NO_EVIDENCE


def two_executions(*, same_key: bool) -> Log:
    """Two different proposals executed, with one idempotency key or with two."""
    b = LogBuilder("correction", guarded=False)
    requested(b)
    first = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
    second = b.offer(Action.BOOK, {**TUESDAY_SLOT, "slot_id": "tue-1100"}, grounded_on=None)
    confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM)
    b.execute(first, confirm, key="k-1")
    b.execute(second, confirm, key="k-1" if same_key else "k-2", mark="second")
    b.end()
    return b.log()


class TestSingleExecution:
    kind = AssertionKind.SINGLE_EXECUTION

    def test_it_is_supported_by_one_execution_and_a_replay_of_its_receipt(self) -> None:
        log = guarded("double_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is SUPPORTED
        assert result.supporting == ids(log, "commit_succeeded", "second_succeeded")

    def test_it_is_contradicted_by_two_executions_of_one_proposal(self) -> None:
        log = unguarded("double_confirmation")
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert "proposal p-1" in result.reason

    def test_it_is_contradicted_by_two_executions_under_one_idempotency_key(self) -> None:
        log = two_executions(same_key=True)
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert "idempotency key k-1" in result.reason
        assert result.contradicting == ids(
            log, "commit_started", "commit_succeeded", "second_started", "second_succeeded"
        )

    def test_it_allows_different_proposals_under_different_keys(self) -> None:
        assert judge(self.kind, two_executions(same_key=False).events).state is SUPPORTED

    def test_it_is_contradicted_by_a_replay_of_an_execution_that_never_happened(self) -> None:
        b = LogBuilder("double_confirmation", guarded=True)
        requested(b)
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM)
        first = b.commit(offer, confirm)
        phantom = Execution("ev-00000", "ev-00000", first.idempotency_key, "ex-404")
        b.execute(offer, confirm, key=first.idempotency_key, replay_of=phantom, mark="replay")
        log = b.log()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "replay_succeeded")
        assert "ex-404" in result.reason

    def test_it_lacks_evidence_when_nothing_executed(self) -> None:
        assert judge(self.kind, guarded("no_confirmation").events).state is NO_EVIDENCE

    def test_it_is_contradicted_by_a_replay_that_comes_before_the_execution_it_names(
        self,
    ) -> None:
        b = LogBuilder("double_confirmation", guarded=False)
        requested(b)
        offer = b.offer(Action.BOOK, TUESDAY_SLOT, grounded_on=None)
        confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM)
        # The builder numbers executions by commit attempt: the second attempt runs ex-2.
        ahead = Execution("", "", "k-1", "ex-2")
        b.execute(offer, confirm, key="k-1", replay_of=ahead, mark="replay")
        b.execute(offer, confirm, key="k-1")
        log = b.log()
        result = judge(self.kind, log.events)

        assert result.state is CONTRADICTED
        assert result.contradicting == ids(log, "replay_succeeded")
