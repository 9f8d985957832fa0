"""The two grounding scenarios played through the consumer path, grounded and ungrounded."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState, Verdict
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import contract_get
from lab.web.management.headless import play_headless

pytestmark = pytest.mark.django_db(transaction=True)

SCENARIOS = ["facts_before_booking", "uncovered_question"]


async def played(scenario_id: str, *, ungrounded: bool):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED, ungrounded=ungrounded
    )
    await play_headless(run)
    events = await database_sync_to_async(store.run_events)(run)
    return evaluate(contract_get(scenario_id), events), events


@pytest.mark.parametrize("scenario_id", SCENARIOS)
async def test_the_grounded_agent_passes(fast_clock, scenario_id):
    evaluation, events = await played(scenario_id, ungrounded=False)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    assert "ungrounded" not in events[0].payload.model_dump(mode="json")
    assert any(e.type == "retrieval.done" for e in events)


@pytest.mark.parametrize("scenario_id", SCENARIOS)
async def test_the_ungrounded_agent_fails_naming_the_unsupported_turns(fast_clock, scenario_id):
    evaluation, events = await played(scenario_id, ungrounded=True)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    assert events[0].payload.ungrounded is True
    assert not any(e.type == "retrieval.done" for e in events)
    unsupported = {
        e.payload.utterance_event_id
        for e in events
        if e.type == "turn.graded" and e.payload.grade.verdict == "unsupported"
    }
    assert unsupported
    result = next(a for a in evaluation.assertions if a.id == "nothing_unsupported")
    assert result.state is AssertionState.CONTRADICTED
    assert unsupported <= set(result.contradicting)
    assert all(turn in evaluation.reason for turn in sorted(unsupported)[:3])
    orphaned = {
        e.payload.utterance_event_id
        for e in events
        if e.type == "turn.grounding" and e.payload.audit.verdict == "orphan_marker"
    }
    orphans = next(a for a in evaluation.assertions if a.id == "no_orphan_marker")
    assert orphaned <= set(orphans.contradicting)


async def test_require_citation_blocks_the_honest_decline_and_the_fallback_is_spoken(fast_clock):
    _, events = await played("uncovered_question", ungrounded=False)
    blocked = [e for e in events if e.type == "citation.blocked"]
    assert len(blocked) == 1 and blocked[0].payload.reason_kind == "no_marker"


@pytest.mark.django_db
def test_the_ungrounded_switch_is_recorded_on_the_run_and_labelled_on_its_page(client):
    assert 'name="ungrounded"' in client.get("/").content.decode()
    client.post("/runs/", {"scenario": "facts_before_booking", "channel": "typed"})
    client.post(
        "/runs/", {"scenario": "facts_before_booking", "channel": "typed", "ungrounded": "on"}
    )
    plain, flagged = Run.objects.order_by("created_at")
    assert (plain.ungrounded, flagged.ungrounded) == (False, True)
    assert flagged.mode == "guarded"
    assert "Ungrounded mode" in client.get(f"/runs/{flagged.id}/").content.decode()
    assert "Ungrounded mode" not in client.get(f"/runs/{plain.id}/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_runscenarios_ungrounded_fails_and_names_the_turns_on_stderr(capsys, fast_clock):
    with pytest.raises(SystemExit) as exit_info:
        call_command("runscenarios", "--scenario", "uncovered_question", "--ungrounded")
    assert exit_info.value.code == 1
    out, err = capsys.readouterr()
    assert out.strip() == "uncovered_question FAIL"
    assert "nothing_unsupported by ev-" in err
