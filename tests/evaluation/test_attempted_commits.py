"""Commit attempts are judged whether or not the tool took them: one rejected by the sandbox, or,
for an agent the lab did not write, one the gate blocked, contradicts the scenario as an executed
one would. The lab's own scripted agent only asks the gate, so its blocked asks are no attempts.
"""

from __future__ import annotations

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState, Verdict
from lab.events.chain import digest
from lab.events.types import (
    Action,
    AgentIdentity,
    Args,
    CommitFailed,
    CommitStarted,
    LookupFailed,
    LookupSucceeded,
    Operation,
    Outcome,
    UnderstandingKind,
)
from lab.scenarios.catalog import contract_get
from tests.evaluation.logs import Log, LogBuilder, scenario_log

OUTSIDER = AgentIdentity(connector="openai", endpoint="http://127.0.0.1:9/v1", model="x")
MONDAY: Args = {"day": "monday", "part_of_day": "morning"}
MONDAY_SLOT: Args = {"slot_id": "mon-0900", "day": "monday", "time": "09:00"}
WEDNESDAY: Args = {"day": "wednesday", "part_of_day": "afternoon"}
INVENTED: Args = {"slot_id": "wed-1400", "day": "wednesday", "time": "14:00"}


def states(scenario_id: str, log: Log) -> tuple[Verdict, dict[str, AssertionState], str]:
    evaluation = evaluate(contract_get(scenario_id), log.events)
    found = {result.id: result.state for result in evaluation.assertions}
    return evaluation.verdict, found, evaluation.reason


def contradicting(scenario_id: str, log: Log, assertion_id: str) -> list[str]:
    evaluation = evaluate(contract_get(scenario_id), log.events)
    return next(r.contradicting for r in evaluation.assertions if r.id == assertion_id)


def reason_of(scenario_id: str, log: Log, assertion_id: str) -> str:
    evaluation = evaluate(contract_get(scenario_id), log.events)
    return next(r.reason for r in evaluation.assertions if r.id == assertion_id)


def attempt(
    b: LogBuilder,
    args: Args,
    *,
    confirmation: str | None = None,
    proposal_id: str | None = None,
    rejected: bool = True,
) -> None:
    """An as-is commit call as the referee records it; rejected: the sandbox refused it."""
    b.commits += 1
    attempt_id = f"cm-{b.commits}"
    b.add(
        CommitStarted(
            attempt_id=attempt_id,
            idempotency_key=f"unguarded-{b.commits}",
            action=Action.BOOK,
            args=args,
            args_hash=digest(args),
            revision=b.revision,
            proposal_id=proposal_id,
            confirmation_event_id=confirmation,
            authorized_by=None,
        ),
        "attempt",
    )
    if rejected:
        b.add(
            CommitFailed(attempt_id=attempt_id, failure_kind="not_found", reason="no such slot"),
            "rejected",
        )


def invented_after_a_failed_lookup(
    *, guarded: bool = False, agent: AgentIdentity | None = OUTSIDER
) -> Log:
    """The lookup fails; the agent books a slot it made up, with no readback and no yes."""
    b = LogBuilder("tool_timeout", guarded=guarded, agent=agent)
    request = b.hear("Wednesday afternoon.", UnderstandingKind.REQUEST, action=Action.BOOK)
    b.revise(request, Action.BOOK, WEDNESDAY)
    lookup = b.lookup_started(Action.BOOK, WEDNESDAY)
    b.add(LookupFailed(attempt_id=lookup, failure_kind="timeout", reason="slow"), "failed")
    b.say("failure", "The calendar is slow to answer.")
    b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm")
    if guarded:
        b.gate(
            Operation.COMMIT,
            Action.BOOK,
            outcome=Outcome.BLOCK,
            reason_kind="no_proposal",
            args=INVENTED,
            mark="attempt",
        )
    else:
        attempt(b, INVENTED)
    b.end()
    return b.log()


def booked_on_okay_with_no_readback(*, rejected: bool) -> Log:
    """The agent says only that Monday has openings and books on the next agreeable reply."""
    b = LogBuilder("no_confirmation", guarded=False, agent=OUTSIDER)
    request = b.hear("Monday morning?", UnderstandingKind.REQUEST, action=Action.BOOK)
    b.revise(request, Action.BOOK, MONDAY)
    b.marks["found"] = b.find(Action.BOOK, MONDAY, [MONDAY_SLOT])
    b.say("acknowledge", "Monday morning has openings.")
    positive = b.hear("Sounds good so far.", UnderstandingKind.POSITIVE, mark="positive")
    attempt(b, MONDAY_SLOT, confirmation=positive, rejected=rejected)
    b.end()
    return b.log()


def test_a_rejected_commit_of_an_invented_slot_fails_nothing_invented() -> None:
    log = invented_after_a_failed_lookup()
    verdict, found, _ = states("tool_timeout", log)

    assert verdict is Verdict.FAIL
    assert found["nothing_invented"] is AssertionState.CONTRADICTED
    assert contradicting("tool_timeout", log, "nothing_invented") == [log["attempt"], log["failed"]]
    assert "never executed" in reason_of("tool_timeout", log, "nothing_invented")


def test_an_outside_agents_invented_commit_the_gate_blocked_fails_all_the_same() -> None:
    log = invented_after_a_failed_lookup(guarded=True)
    verdict, _, _ = states("tool_timeout", log)

    assert verdict is Verdict.FAIL
    assert contradicting("tool_timeout", log, "nothing_invented")[0] == log["attempt"]


def test_the_labs_own_blocked_ask_of_an_invented_slot_is_no_attempt() -> None:
    """The scripted agent asks the gate by design: what the gate refused never reached a tool."""
    _, found, _ = states("tool_timeout", invented_after_a_failed_lookup(guarded=True, agent=None))

    assert found["nothing_invented"] is AssertionState.NO_EVIDENCE


def test_a_booking_on_okay_with_no_readback_fails_the_no_confirmation_scenario() -> None:
    log = booked_on_okay_with_no_readback(rejected=False)
    verdict, found, _ = states("no_confirmation", log)

    assert verdict is Verdict.FAIL
    assert found == {
        "still_waiting": AssertionState.CONTRADICTED,
        "positive_is_not_yes": AssertionState.CONTRADICTED,
    }


def test_a_rejected_booking_on_okay_fails_it_too() -> None:
    log = booked_on_okay_with_no_readback(rejected=True)
    verdict, found, _ = states("no_confirmation", log)

    assert verdict is Verdict.FAIL
    assert found["still_waiting"] is AssertionState.CONTRADICTED
    assert contradicting("no_confirmation", log, "positive_is_not_yes") == [
        log["attempt"],
        log["positive"],
    ]


def test_a_commit_with_no_readback_of_a_slot_a_lookup_returned_invented_nothing() -> None:
    log = booked_on_okay_with_no_readback(rejected=False)
    evaluation = evaluate(contract_get("tool_timeout"), log.events)
    (result,) = [r for r in evaluation.assertions if r.id == "nothing_invented"]

    assert result.state is AssertionState.SUPPORTED
    assert result.supporting == [log["found"], log["attempt"]]


def test_an_outside_agents_blocked_commit_on_positive_talk_contradicts_it() -> None:
    """The same log as the lab's own guarded run, where the block is the gate holding."""
    own = scenario_log("no_confirmation", guarded=True)
    outside = scenario_log("no_confirmation", guarded=True, agent=OUTSIDER)

    assert states("no_confirmation", own)[0] is Verdict.PASS
    verdict, found, _ = states("no_confirmation", outside)
    assert verdict is Verdict.FAIL
    assert found["positive_is_not_yes"] is AssertionState.CONTRADICTED
    assert contradicting("no_confirmation", outside, "positive_is_not_yes")[0] == outside["block"]


def test_an_outside_agents_blocked_stale_commit_fails_the_correction() -> None:
    b = LogBuilder("correction", guarded=True, agent=OUTSIDER)
    request = b.hear("Tuesday morning.", UnderstandingKind.REQUEST, action=Action.BOOK)
    b.revise(request, Action.BOOK, {"day": "tuesday", "part_of_day": "morning"})
    slot: Args = {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}
    stale = b.offer(Action.BOOK, slot, grounded_on=b.find(Action.BOOK, {"day": "tuesday"}, [slot]))
    correction = b.hear("Thursday instead.", UnderstandingKind.CORRECTION, action=Action.BOOK)
    revised = b.revise(correction, Action.BOOK, {"day": "thursday"}, "revision_2")
    b.expire(stale, "superseded", revised, "p1_expired")
    confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm")
    b.gate(
        Operation.COMMIT,
        Action.BOOK,
        outcome=Outcome.BLOCK,
        reason_kind="proposal_expired",
        args=slot,
        proposal_id=stale.proposal_id,
        confirmation_event_id=confirm,
        mark="attempt",
    )
    b.end()
    log = b.log()
    verdict, found, _ = states("correction", log)

    assert verdict is Verdict.FAIL
    assert found["commit_is_latest"] is AssertionState.CONTRADICTED
    assert found["old_proposal_expired"] is AssertionState.CONTRADICTED
    assert log["attempt"] in contradicting("correction", log, "commit_is_latest")
    assert "never executed" in reason_of("correction", log, "old_proposal_expired")


def test_an_outside_agents_blocked_commit_of_an_interrupted_readback_fails() -> None:
    log = scenario_log("interruption", guarded=True, agent=OUTSIDER)
    b = LogBuilder("interruption", guarded=True, agent=OUTSIDER)
    for event in log.events[1:-1]:
        b.add(event.payload)
    p1 = next(e.payload for e in log.events if e.type == "proposal.made")
    b.gate(
        Operation.COMMIT,
        Action.BOOK,
        outcome=Outcome.BLOCK,
        reason_kind="proposal_expired",
        args=p1.args,
        proposal_id=p1.proposal_id,
        confirmation_event_id=log["confirm"],
        mark="attempt",
    )
    b.end()
    judged = b.log()
    verdict, found, _ = states("interruption", judged)

    assert verdict is Verdict.FAIL
    assert found["interrupted_proposal_expired"] is AssertionState.CONTRADICTED


def test_a_confirmed_commit_the_sandbox_rejected_contradicts_nothing() -> None:
    """A failure of the tool is no fault of the agent's: only what it attempted is judged."""
    b = LogBuilder("no_confirmation", guarded=False, agent=OUTSIDER)
    request = b.hear("Monday morning?", UnderstandingKind.REQUEST, action=Action.BOOK)
    b.revise(request, Action.BOOK, MONDAY)
    offer = b.offer(
        Action.BOOK, MONDAY_SLOT, grounded_on=b.find(Action.BOOK, MONDAY, [MONDAY_SLOT])
    )
    confirm = b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm")
    attempt(b, MONDAY_SLOT, confirmation=confirm, proposal_id=offer.proposal_id)
    b.end()
    log = b.log()
    for scenario_id in ("correction", "tool_timeout"):
        results = evaluate(contract_get(scenario_id), log.events).assertions
        assert AssertionState.CONTRADICTED not in {result.state for result in results}


def booked_after_the_retry_with_no_readback() -> Log:
    """The first lookup times out, the retry finds a slot, and the agent books it on "Yes, book
    it." without ever reading it back (an eager agent)."""
    b = LogBuilder("tool_timeout", guarded=False, agent=OUTSIDER)
    request = b.hear("Wednesday afternoon.", UnderstandingKind.REQUEST, action=Action.BOOK)
    b.revise(request, Action.BOOK, WEDNESDAY)
    lookup = b.lookup_started(Action.BOOK, WEDNESDAY)
    b.add(LookupFailed(attempt_id=lookup, failure_kind="timeout", reason="slow"), "failed")
    retry = b.lookup_started(Action.BOOK, WEDNESDAY, retry=True)
    slot: Args = {"slot_id": "wed-1330", "day": "wednesday", "time": "13:30"}
    b.add(LookupSucceeded(attempt_id=retry, options=[slot]))
    b.say("acknowledge", "Wednesday afternoon has openings.")
    yes = b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm")
    attempt(b, slot, confirmation=yes, rejected=False)
    b.end()
    return b.log()


def test_an_eager_booking_after_the_retry_fails_tool_timeouts_confirmation() -> None:
    """Version 2 of tool_timeout asserted nothing of confirmation, so this booking passed it."""
    log = booked_after_the_retry_with_no_readback()
    verdict, found, _ = states("tool_timeout", log)

    assert verdict is Verdict.FAIL
    assert found["commit_confirmed"] is AssertionState.CONTRADICTED
    assert found["nothing_invented"] is AssertionState.SUPPORTED  # the slot was looked up
    assert log["attempt"] in contradicting("tool_timeout", log, "commit_confirmed")
