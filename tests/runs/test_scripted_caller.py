"""The scripted caller never stalls on a cue an agent may never give, and answers what the agent
asks from the scenario's persona: an eager agent meets the next line and is judged."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.chain import EventChain
from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Channel,
    Event,
    EventPayload,
    Mode,
)
from lab.runs.caller import CUE_BUDGET_S, CUE_WAIT_S, cue_bound_s, latest_asks
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import all_contracts, contract_get
from lab.scenarios.contracts import CallerLine, Contract
from lab.scenarios.persona import Persona
from tests.connectors.outsiders import Habit, Outsider

pytestmark = pytest.mark.django_db(transaction=True)


async def play(
    scenario: str, habit: Habit, mode: Mode = Mode.UNGUARDED, contract: Contract | None = None
) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario, mode=mode, channel=Channel.TYPED
    )
    contract = contract or contract_get(scenario)
    session = RunSession(run=run, contract=contract, agent=Outsider(habit))
    async with asyncio.timeout(60):
        await session.start()
        await session.play_script()
    return session


def of_type(session: RunSession, kind: str) -> list:
    return [event.payload for event in session.events if event.type == kind]


def failed(session: RunSession) -> set[str]:
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    return {r.id for r in evaluation.assertions if r.state == "contradicted"}


async def test_an_agent_that_never_reads_back_meets_the_next_line_and_fails(fast_clock):
    began = time.monotonic()
    session = await play("no_confirmation", "no_readback")
    took = time.monotonic() - began

    (missed,) = of_type(session, "caller.cue_missed")
    assert (missed.line, missed.cue) == (1, "proposal")
    said = [u.text for u in of_type(session, "caller.utterance")]
    assert said == [line.say for line in session.contract.caller]
    (ended,) = of_type(session, "run.ended")
    assert ended.reason_kind == "completed"
    assert failed(session) == {"still_waiting", "positive_is_not_yes"}
    # The bound is on the run's clock: a tenth of real time here, never the old 60 s stall.
    assert took < 20 * fast_clock.LAB_TIME_SCALE + 10


async def test_no_run_waits_more_than_15_s_of_caller_time_for_cues(fast_clock):
    session = await play("correction", "no_readback")

    missed = of_type(session, "caller.cue_missed")
    assert [(m.line, m.cue) for m in missed] == [(1, "proposal"), (2, "proposal")]
    # Scheduling slack is magnified tenfold on the fast clock; each wait is still the bound.
    assert all(CUE_WAIT_S * 1000 <= m.waited_ms < CUE_WAIT_S * 1000 + 1500 for m in missed)
    assert sum(m.waited_ms for m in missed) <= 15_000
    assert {"commit_is_latest", "commit_confirmed"} <= failed(session)


def test_what_the_agents_latest_turn_asks_is_read_across_its_sentences() -> None:
    chain = EventChain()

    def add(payload: EventPayload) -> Event:
        return chain.append(payload, at=datetime.now(UTC))

    add(AgentUtterance(text="What's your name?", purpose="clarify", duration_ms=900))
    add(CallerUtterance(text="Tuesday morning, please.", source="script"))
    add(AgentUtterance(text="Sure.", purpose="acknowledge", duration_ms=400))
    asking = add(AgentUtterance(text="And a phone number?", purpose="clarify", duration_ms=900))
    assert latest_asks(chain.events) == (asking.id, ("phone",))
    add(CallerUtterance(text="My phone number is 555 0142.", source="script"))
    # Answered: nothing the agent said since the caller last spoke asks for anything.
    assert latest_asks(chain.events) is None


def test_a_run_with_many_cued_lines_waits_less_on_each_and_15_s_in_all() -> None:
    for contract in all_contracts().values():
        assert cue_bound_s(contract.caller) == CUE_WAIT_S  # at most three cued lines each
    cued = [CallerLine(say="Yes.", after="proposal")] * 10
    plain = [CallerLine(say="Hello.", after="agent_idle")] * 5
    assert cue_bound_s(cued + plain) * len(cued) == CUE_BUDGET_S == 15.0
    assert cue_bound_s(plain) == CUE_WAIT_S


async def test_a_barge_in_whose_readback_never_comes_is_said_as_a_plain_line(fast_clock):
    session = await play("interruption", "no_readback")

    missed = of_type(session, "caller.cue_missed")
    assert [(m.line, m.cue) for m in missed] == [(1, "readback"), (2, "proposal")]
    said = [u.text for u in of_type(session, "caller.utterance")]
    assert said[1] == "Wait, no. Friday morning instead."
    assert not of_type(session, "agent.interrupted")
    assert [r.args["day"] for r in of_type(session, "intent.revised")] == ["tuesday", "friday"]
    assert "commit_confirmed" in failed(session)


async def test_a_well_behaved_agent_gives_every_cue_and_none_is_missed(fast_clock):
    session = await play("correction", "well_behaved", Mode.GUARDED)

    assert not of_type(session, "caller.cue_missed")
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_the_caller_answers_a_name_from_the_default_persona_and_it_confirms_nothing(
    fast_clock,
):
    session = await play("correction", "asks_name", Mode.GUARDED)

    (answered,) = of_type(session, "caller.persona_answered")
    assert answered.asked == ["name"]
    asked = next(e for e in session.events if e.id == answered.utterance_event_id)
    assert "your name" in asked.payload.text
    said = [u.text for u in of_type(session, "caller.utterance")]
    assert said[1] == "My name is Dana Reyes."
    understood = of_type(session, "caller.understood")[1]
    assert understood.annotated and understood.kind not in ("confirm", "positive")
    assert understood.confirmation != "confirm"
    # The request the agent held is then served: the script goes on and the run passes.
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_a_question_after_the_last_line_is_answered_before_the_run_ends(fast_clock):
    session = await play("correction", "asks_name_after_yes", Mode.GUARDED)

    (answered,) = of_type(session, "caller.persona_answered")
    assert answered.asked == ["name"]
    assert [u.text for u in of_type(session, "caller.utterance")][-1] == "My name is Dana Reyes."
    assert len(of_type(session, "tool.commit.succeeded")) == 1
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_the_scenarios_own_persona_answers_in_its_place(fast_clock):
    contract = contract_get("correction").model_copy(
        update={"persona": Persona(name="Sam Okafor", phone="555 0199")}
    )
    session = await play("correction", "asks_name", Mode.GUARDED, contract=contract)

    said = [u.text for u in of_type(session, "caller.utterance")]
    assert said[1] == "My name is Sam Okafor."
