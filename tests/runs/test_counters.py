"""A session rebuilt from the stored log (another process taking the run over) continues its
numbering: a correction is revision 2, not revision 1 again, and proposals keep distinct ids."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.counters import RunCounters
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get

pytestmark = pytest.mark.django_db(transaction=True)


def payloads(session: RunSession, kind: str) -> list:
    return [event.payload for event in session.events if event.type == kind]


async def test_a_rebuilt_session_continues_revisions_proposals_and_attempts(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    contract = contract_get("correction")
    first = RunSession(run=run, contract=contract)
    await first.start()
    await first.caller_says("I'd like Tuesday morning, please.")
    await first.wait_idle()
    assert [p.revision for p in payloads(first, "intent.revised")] == [1]
    assert [p.proposal_id for p in payloads(first, "proposal.made")] == ["p-1"]

    stored = await database_sync_to_async(store.run_events)(run)
    rebuilt = RunSession(run=run, contract=contract, events=stored)
    await rebuilt.caller_says("Actually, make that Thursday afternoon.")
    await rebuilt.wait_idle()

    assert [p.revision for p in payloads(rebuilt, "intent.revised")] == [1, 2]
    proposals = [p.proposal_id for p in payloads(rebuilt, "proposal.made")]
    assert proposals == ["p-1", "p-2"]
    lookups = [p.attempt_id for p in payloads(rebuilt, "lookup.started")]
    assert len(lookups) == len(set(lookups))
    said = [p.text for p in payloads(rebuilt, "agent.utterance")]
    assert not any("rely on" in text for text in said), said


def test_counters_fold_the_highest_number_each_kind_reached():
    counters = RunCounters()
    assert counters.next("revision") == 1
    assert counters.next("revision") == 2
    assert counters.next("lookup-2") == 1
