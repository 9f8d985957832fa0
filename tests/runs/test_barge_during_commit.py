"""The caller speaks while the booking is in flight (barge_during_commit): the line is heard as
it is said, the agent answers it with the write's outcome, and a second write on the one
go-ahead FAILs `one_commit_per_confirmation`, whatever key it carries."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState, Verdict
from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Channel,
    CommitStarted,
    CommitSucceeded,
    Mode,
)
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Assertion, AssertionKind, Contract
from lab.tools.models import Appointment

pytestmark = pytest.mark.django_db(transaction=True)
SCENARIO = "barge_during_commit"


async def played(mode: Mode) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id=SCENARIO, mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get(SCENARIO))
    await session.start()
    await session.play_script()
    return session


@database_sync_to_async
def booked(session: RunSession) -> list[str]:
    return list(Appointment.objects.filter(run=session.run).values_list("slot__slot_id", flat=True))


async def test_the_check_in_is_heard_during_the_write_and_answered_with_its_outcome(fast_clock):
    session = await played(Mode.GUARDED)
    types = [e.type for e in session.events]
    started = types.index("tool.commit.started")
    check_in = next(
        i
        for i, e in enumerate(session.events)
        if isinstance(e.payload, CallerUtterance) and e.payload.text.startswith("Hello?")
    )
    done = types.index("tool.commit.succeeded")
    # Heard (and understood) while the write was in flight, not after it returned.
    assert started < check_in < types.index("caller.understood", check_in) < done
    assert types.count("tool.commit.started") == 1
    # Nothing said between the check-in and the outcome; the receipt answers it.
    said = [
        e.payload.purpose
        for e in session.events[check_in:]
        if isinstance(e.payload, AgentUtterance)
    ]
    assert said == ["receipt"]
    assert await booked(session) == ["wed-1330"]
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_as_is_the_naive_agent_writes_again_on_hearing_the_caller_and_books_twice(
    fast_clock,
):
    session = await played(Mode.UNGUARDED)
    starts = [
        (i, e.payload) for i, e in enumerate(session.events) if isinstance(e.payload, CommitStarted)
    ]
    (first_at, first), (again_at, again) = starts
    check_in = next(
        i
        for i, e in enumerate(session.events)
        if isinstance(e.payload, CallerUtterance) and e.payload.text.startswith("Hello?")
    )
    first_done = next(
        i
        for i, e in enumerate(session.events)
        if isinstance(e.payload, CommitSucceeded) and e.payload.attempt_id == first.attempt_id
    )
    # Sent on hearing the caller, while the first write was still running, as a new request.
    assert first_at < check_in < again_at < first_done
    assert again.confirmation_event_id == first.confirmation_event_id
    assert again.idempotency_key != first.idempotency_key
    assert await booked(session) == ["wed-1330", "wed-1330"]
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "one_write_per_yes by" in evaluation.reason and "booked_once by" in evaluation.reason


async def test_a_slow_write_is_waited_for_past_the_tool_timeout(fast_clock):
    # The write answers 4 s late; the lab's usual wait (1 s here) would call it uncertain.
    fast_clock.LAB_TOOL_TIMEOUT_MS = 1000
    session = await played(Mode.GUARDED)
    types = [e.type for e in session.events]
    assert "tool.commit.uncertain" not in types and types.count("tool.commit.succeeded") == 1
    assert evaluate(session.contract, session.events).verdict is Verdict.PASS


async def test_a_second_write_on_the_go_ahead_fails_on_a_new_key_and_passes_as_a_keyed_retry(
    fast_clock,
):
    # commit_answer_lost: a write whose answer was lost, tried once more on the same go-ahead.
    one_per_yes = Assertion(
        id="one_write_per_yes",
        kind=AssertionKind.ONE_COMMIT_PER_CONFIRMATION,
        description="One write.",
    )
    contract = contract_get("commit_answer_lost")
    contract = contract.model_copy(update={"assertions": [one_per_yes]})
    findings = {}
    for mode in (Mode.GUARDED, Mode.UNGUARDED):
        run = await database_sync_to_async(run_start)(
            scenario_id=contract.id, mode=mode, channel=Channel.TYPED
        )
        session = RunSession(run=run, contract=contract)
        await session.start()
        await session.play_script()
        (findings[mode],) = evaluate(contract, session.events).assertions
        starts = [e for e in session.events if isinstance(e.payload, CommitStarted)]
        assert len(starts) == 2
    # Guarded, the retry reuses the gate's key: the agent finding out, not a second write.
    assert findings[Mode.GUARDED].state is AssertionState.SUPPORTED
    # As-is, the retry mints a new key: a second write, though the sandbox deduped nothing.
    assert findings[Mode.UNGUARDED].state is AssertionState.CONTRADICTED
    assert "on a new idempotency key" in findings[Mode.UNGUARDED].reason


def test_a_write_cue_must_follow_a_confirmation_line() -> None:
    data = contract_get(SCENARIO).model_dump(mode="json")
    data["caller"][1]["means"] = {"kind": "non_confirmation"}
    with pytest.raises(
        ValueError, match="caller line 2 waits for commit_started, but line 1 is not"
    ):
        Contract.model_validate(data)
    data["caller"] = [data["caller"][2]]
    with pytest.raises(
        ValueError, match="caller line 0 waits for commit_started, but it is the first"
    ):
        Contract.model_validate(data)
