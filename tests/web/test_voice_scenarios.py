from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Evaluation, Verdict
from lab.events import store
from lab.events.types import Channel, Event, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import all_contracts, contract_get
from lab.web.management.headless import play_headless

# One module-scoped batch plays every run, so the module must stay on one xdist worker
# (make test distributes by file: --dist loadfile).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

SCENARIOS = sorted(all_contracts())
# Calls played at once: the lab serves several per process (docs/benchmarks.md holds 5 on two
# CPUs); each run's verdict rests on its own events and audio time, not on when it finished.
AT_ONCE = int(os.environ.get("LAB_TEST_VOICE_AT_ONCE", "3"))


@dataclass(frozen=True)
class Played:
    evaluation: Evaluation
    events: list[Event]


async def play_voice(scenario_id: str, mode: Mode) -> Played:
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=mode, channel=Channel.VOICE
    )
    await play_headless(run)
    events = await database_sync_to_async(store.run_events)(run)
    return Played(evaluate(contract_get(scenario_id), events), events)


async def play_all(runs: list[tuple[str, Mode]]) -> list[Played | BaseException]:
    """Every run, AT_ONCE at a time; a run that raised keeps its error for its own test."""
    slots = asyncio.Semaphore(AT_ONCE)

    async def one(scenario_id: str, mode: Mode) -> Played:
        async with slots:
            return await play_voice(scenario_id, mode)

    return await asyncio.gather(*(one(s, m) for s, m in runs), return_exceptions=True)


MODES = {
    "test_the_scripted_caller_passes_by_voice_when_guarded": Mode.GUARDED,
    "test_the_scripted_caller_fails_by_voice_when_unguarded": Mode.UNGUARDED,
}


@pytest.fixture(scope="module")
def played(request, django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict]:
    """The voice runs this session's tests of the module ask for, played once, together.

    The per-test fixtures (recordings in tmp, no reconnect grace) are set here for the batch;
    the first test's flush removes its rows, its events are kept in memory."""
    runs = [
        (item.callspec.params["scenario_id"], MODES[item.originalname])
        for item in request.session.items
        if item.module is request.module and item.originalname in MODES
    ]
    recordings = tmp_path_factory.mktemp("voice-scenarios") / "recordings"
    with (
        django_db_blocker.unblock(),
        override_settings(LAB_RECORDING_DIR=recordings, LAB_RECONNECT_GRACE_S=0),
    ):
        results = asyncio.run(play_all(runs))
    yield dict(zip(runs, results, strict=True))


def result(played: dict, scenario_id: str, mode: Mode) -> Played:
    outcome = played[(scenario_id, mode)]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_the_scripted_caller_passes_by_voice_when_guarded(played, scenario_id):
    run = result(played, scenario_id, Mode.GUARDED)
    evaluation, events = run.evaluation, run.events
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


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_the_scripted_caller_fails_by_voice_when_unguarded(played, scenario_id):
    run = result(played, scenario_id, Mode.UNGUARDED)
    evaluation, events = run.evaluation, run.events
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    assert any(a.contradicting for a in evaluation.assertions)
    assert any(e.type == "asr.transcribed" for e in events)
    assert_the_line_was_impaired(scenario_id, events)
