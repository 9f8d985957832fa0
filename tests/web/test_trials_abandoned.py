"""A picker's trial group whose server died mid-group: once its player's lease has lapsed, its
unfinished runs are ended as abandoned (on reading the progress, or at start-up), the page stops
polling and says why; a group whose player is alive goes on polling."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from lab.events import store
from lab.events.models import Run, TrialGroup
from lab.events.types import Mode, RunEnded
from lab.runs.trial_players import ABANDONED
from lab.runs.trials import trial_runs_create

pytestmark = pytest.mark.django_db


def _group(user: User, *, played: int, lapsed: bool) -> TrialGroup:
    """Three trials of correction; the first `played` ended; the player's lease lapsed or not."""
    runs = trial_runs_create(
        scenario_id="correction",
        trials=3,
        mode=Mode.GUARDED,
        ungrounded=False,
        owner_token="",
        user_id=user.id,
    )
    for run in runs[:played]:
        store.run_mark_ended(run=run)
    group = TrialGroup.objects.get()
    if lapsed:
        group.player_until = timezone.now() - timedelta(seconds=1)
        group.save()
    return group


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_reading_the_progress_of_a_group_whose_player_is_gone_ends_its_trials_and_says_why():
    user = User.objects.create(username="ada")
    group = _group(user, played=1, lapsed=True)
    fragment = _client(user).get(f"/trials/{group.id}/progress/").content.decode()
    assert "hx-trigger" not in fragment and 'data-done="true"' in fragment
    assert "2 trials abandoned:</strong> " + ABANDONED in fragment
    assert fragment.count(f"Abandoned: {ABANDONED}.") == 2
    unplayed = Run.objects.filter(trial_group=group, trial_index__in=(2, 3))
    assert {run.status for run in unplayed} == {Run.Status.ENDED}
    for run in unplayed:
        [ended] = store.run_events(run)
        assert isinstance(ended.payload, RunEnded)
        assert (ended.payload.reason_kind, ended.payload.reason) == ("abandoned", ABANDONED)


def test_a_group_whose_player_is_alive_goes_on_polling():
    user = User.objects.create(username="ada")
    group = _group(user, played=1, lapsed=False)
    fragment = _client(user).get(f"/trials/{group.id}/progress/").content.decode()
    assert 'hx-trigger="every 1s"' in fragment and "abandoned" not in fragment
    assert Run.objects.filter(trial_group=group, status=Run.Status.ACTIVE).count() == 2


def test_a_trial_some_process_still_drives_is_not_abandoned():
    user = User.objects.create(username="ada")
    group = _group(user, played=0, lapsed=True)
    driven = Run.objects.get(trial_group=group, trial_index=1)
    Run.objects.filter(pk=driven.pk).update(
        driver_token="elsewhere", driver_expires_at=timezone.now() + timedelta(seconds=10)
    )
    _client(user).get(f"/trials/{group.id}/progress/")
    statuses = dict(Run.objects.filter(trial_group=group).values_list("trial_index", "status"))
    assert statuses == {1: Run.Status.ACTIVE, 2: Run.Status.ENDED, 3: Run.Status.ENDED}
    assert store.run_events(driven) == []


@pytest.mark.django_db(transaction=True)  # the start-up sweep's reconciliation runs off-thread
def test_start_up_ends_the_trials_of_a_group_whose_player_is_gone():
    user = User.objects.create(username="ada")
    group = _group(user, played=2, lapsed=True)
    out = StringIO()
    call_command("reconcileruns", stdout=out)
    assert "abandoned 1 trial run(s) whose player is gone" in out.getvalue()
    assert not Run.objects.filter(trial_group=group, status=Run.Status.ACTIVE).exists()
