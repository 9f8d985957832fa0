from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import all_contracts, contract_get
from lab.web.management.commands.runscenarios import play_headless

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]


async def play_voice(scenario_id: str, mode: Mode):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=mode, channel=Channel.VOICE
    )
    await play_headless(run)
    events = await database_sync_to_async(store.run_events)(run)
    return evaluate(contract_get(scenario_id), events), events


@pytest.mark.parametrize("scenario_id", sorted(all_contracts()))
async def test_the_scripted_caller_passes_by_voice_when_guarded(scenario_id):
    evaluation, events = await play_voice(scenario_id, Mode.GUARDED)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    heard = [e.payload.text for e in events if e.type == "caller.utterance"]
    assert heard and all(e.payload.source == "asr" for e in events if e.type == "caller.utterance")
    # An acknowledgement over the agent's speech is recorded, and kept from the agent.
    acknowledged = [e.payload.text for e in events if e.type == "caller.backchannel"]
    assert len(heard) + len(acknowledged) == len(contract_get(scenario_id).caller)
    assert_the_line_was_impaired(scenario_id, events)


def assert_the_line_was_impaired(scenario_id, events):
    """A scenario over an impaired line records, before each line it spoke, what the line did."""
    contract = contract_get(scenario_id)
    impaired = [e.payload for e in events if e.type == "caller.line_impaired"]
    if contract.line is None:
        assert not impaired
        return
    lines = [n for n in range(len(contract.caller)) if contract.line.on(n)]
    # An unguarded run may end before the script does: the lines it reached, in order.
    assert impaired and [record.line for record in impaired] == lines[: len(impaired)]
    for record in impaired:
        kinds = {impairment.kind for impairment in contract.line.on(record.line)}
        assert set(record.kinds) == kinds and record.seed == contract.line.seed
        assert ("packet_loss" in kinds) == (record.frames_lost > 0)
        assert ("jitter" in kinds) == (record.frames_late > 0)
        noise = next((i for i in contract.line.on(record.line) if i.kind == "noise"), None)
        if noise is not None:
            assert abs(record.snr_db - noise.snr_db) < 0.5


@pytest.mark.parametrize("scenario_id", sorted(all_contracts()))
async def test_the_scripted_caller_fails_by_voice_when_unguarded(scenario_id):
    evaluation, events = await play_voice(scenario_id, Mode.UNGUARDED)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    assert any(a.contradicting for a in evaluation.assertions)
    assert any(e.type == "asr.transcribed" for e in events)
    assert_the_line_was_impaired(scenario_id, events)
