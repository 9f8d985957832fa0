"""Who plays a picker's trial group, and what becomes of its runs once nobody does.

The picker's trials play in a server's background (lab/web/trial_player.py); a server that dies
mid-group would leave the rest of its runs active for ever and its page polling. The player
renews the group's lease as it plays; once the lease lapses, the group's unfinished runs are
ended as abandoned, each with run.ended saying why (fenced like any write: a run some process
still drives keeps going).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from django.utils import timezone

from lab.events import store
from lab.events.chain import GENESIS_HASH, chain_event
from lab.events.models import Run, TrialGroup
from lab.events.store import AppendRefused
from lab.events.types import RunEnded

# How long a group's player may go without renewing before its unfinished runs are abandoned;
# it renews three times as often.
PLAYER_TTL_S = 30.0
ABANDONED = "the server playing this trial group stopped before this trial finished"


def trial_player_renew(group_id: UUID) -> None:
    """The group's player is alive: its lease runs PLAYER_TTL_S from now."""
    until = timezone.now() + timedelta(seconds=PLAYER_TTL_S)
    TrialGroup.objects.filter(pk=group_id).update(player_until=until)


def trials_abandon(group_id: UUID | None = None) -> int:
    """End as abandoned the unfinished runs of the groups (this one, else all) whose player's
    lease has lapsed; returns how many were ended."""
    lapsed = TrialGroup.objects.filter(player_until__lt=timezone.now())
    if group_id is not None:
        lapsed = lapsed.filter(pk=group_id)
    runs = Run.objects.filter(trial_group__in=lapsed, status=Run.Status.ACTIVE)
    return sum(_abandon(run) for run in runs)


def _abandon(run: Run) -> bool:
    events = store.run_events(run)
    ended = chain_event(
        seq=len(events) + 1,
        at=datetime.now(UTC),
        payload=RunEnded(reason_kind="abandoned", reason=ABANDONED),
        prev_hash=events[-1].hash if events else GENESIS_HASH,
    )
    try:
        store.event_append(run=run, event=ended)
    except AppendRefused:
        return False  # a process drives it after all (its lease is live), or it moved on
    store.run_mark_ended(run=run)
    return True
