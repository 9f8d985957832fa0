"""No writer forks a run's chain: appends are fenced on the driver lease and on the last link."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lab.events import store
from lab.events.chain import GENESIS_HASH, chain_event
from lab.events.store import AppendRefused
from lab.events.types import Channel, InputRejected, Mode
from lab.runs.lease import lease_release, lease_renew, lease_take
from lab.runs.services import run_start

pytestmark = pytest.mark.django_db

AT = datetime(2026, 1, 1, tzinfo=UTC)
TTL = 10.0


def an_event(seq: int, prev_hash: str, reason: str = "x"):
    payload = InputRejected(reason_kind="test", reason=reason)
    return chain_event(seq=seq, at=AT, payload=payload, prev_hash=prev_hash)


@pytest.fixture
def run():
    return run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)


def test_only_the_lease_holder_appends(run):
    assert lease_take(run_id=str(run.id), holder="a", ttl_s=TTL)
    first = an_event(1, GENESIS_HASH)
    store.event_append(run=run, event=first, holder="a")
    for holder in ("b", None):
        with pytest.raises(AppendRefused) as refused:
            store.event_append(run=run, event=an_event(2, first.hash), holder=holder)
        assert refused.value.kind == "lease_lost"
    assert [e.seq for e in store.run_events(run)] == [1]


def test_an_event_that_does_not_continue_the_stored_log_is_refused(run):
    first = an_event(1, GENESIS_HASH)
    store.event_append(run=run, event=first)
    forks = [
        an_event(2, GENESIS_HASH),  # links to the wrong event
        an_event(1, GENESIS_HASH, reason="other"),  # a second event 1
        an_event(3, first.hash),  # leaves a gap
    ]
    for fork in forks:
        with pytest.raises(AppendRefused) as refused:
            store.event_append(run=run, event=fork)
        assert refused.value.kind == "chain_conflict"
    assert store.run_events(run) == [first]


def test_a_writer_without_a_lease_appends_only_while_nobody_holds_one(run):
    now = datetime.now(UTC)
    assert lease_take(run_id=str(run.id), holder="a", ttl_s=TTL, now=now - timedelta(seconds=60))
    # a's lease has lapsed: a lease-less tool (a reconciler, say) may write.
    store.event_append(run=run, event=an_event(1, GENESIS_HASH))
    assert lease_take(run_id=str(run.id), holder="a", ttl_s=TTL)
    with pytest.raises(AppendRefused):
        store.event_append(run=run, event=an_event(2, store.run_events(run)[-1].hash))


def test_the_lease_is_taken_by_one_holder_until_it_lapses_or_is_released(run):
    run_id = str(run.id)
    now = datetime.now(UTC)
    assert lease_take(run_id=run_id, holder="a", ttl_s=TTL, now=now)
    assert not lease_take(run_id=run_id, holder="b", ttl_s=TTL, now=now)
    assert lease_take(run_id=run_id, holder="a", ttl_s=TTL, now=now)  # a keeps its own
    later = now + timedelta(seconds=TTL + 1)
    assert lease_take(run_id=run_id, holder="b", ttl_s=TTL, now=later)
    assert not lease_renew(run_id=run_id, holder="a", ttl_s=TTL, now=later)
    lease_release(run_id=run_id, holder="a")  # not a's to release any more
    assert not lease_take(run_id=run_id, holder="c", ttl_s=TTL, now=later)
    lease_release(run_id=run_id, holder="b")
    assert lease_take(run_id=run_id, holder="c", ttl_s=TTL, now=later)


def test_an_ended_run_has_no_driver_and_cannot_be_taken(run):
    run_id = str(run.id)
    assert lease_take(run_id=run_id, holder="a", ttl_s=TTL)
    store.run_mark_ended(run=run)
    run.refresh_from_db()
    assert (run.driver_token, run.driver_expires_at) == ("", None)
    assert not lease_take(run_id=run_id, holder="b", ttl_s=TTL)
