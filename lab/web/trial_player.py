"""Repeat trials the picker starts: played one after another, headless, on the server's own
event loop, after the request that started them has been answered.

A task on the serving loop (not a thread with a loop of its own) because the runs' sessions,
their channel-layer groups and the live-run registry all belong to that loop, where the
owner's windows watch them. Each task starts in an empty context, so its database calls go
to the thread every headless run uses: one copied from the request would carry the request's
thread-sensitive context, whose executor asgiref shuts down when the request ends, and the
task would get a thread of its own that nothing ever shuts down.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import dataclass, field
from uuid import UUID

from channels.db import database_sync_to_async

from lab.events.models import Run
from lab.runs.trial_players import PLAYER_TTL_S, trial_player_renew
from lab.web.management.headless import play_headless

log = logging.getLogger(__name__)

MAX_REPEAT = 20
# Trial groups one process plays at once; more are refused rather than queued without bound.
MAX_PLAYING = 2


class TrialsBusy(Exception):
    """This process already plays as many trial groups as it may."""


@dataclass(eq=False)
class Slot:
    """A place among the groups this process plays, taken before the group's runs are made."""

    task: asyncio.Task[None] | None = field(default=None, repr=False)
    group_id: UUID | None = None


_SLOTS: list[Slot] = []


def trials_reserve() -> Slot:
    """Take a slot now, on the loop, so two requests at once cannot both take the last one."""
    if len(_SLOTS) >= MAX_PLAYING:
        raise TrialsBusy(
            f"The lab is already repeating {MAX_PLAYING} scenarios; "
            "start this one when one of them has finished."
        )
    slot = Slot()
    _SLOTS.append(slot)
    return slot


def trials_release(slot: Slot) -> None:
    if slot in _SLOTS:
        _SLOTS.remove(slot)


def trials_play(slot: Slot, runs: list[Run], *, owner_token: str, host: str) -> None:
    """Play the runs in order in the background; the slot frees when the last one ends."""
    slot.group_id = runs[0].trial_group_id if runs else None
    slot.task = asyncio.get_running_loop().create_task(
        _play_all(runs, owner_token=owner_token, host=host),
        name=f"trials-{slot.group_id}",
        context=contextvars.Context(),
    )
    slot.task.add_done_callback(lambda _: trials_release(slot))


def trials_playing(group_id: UUID) -> asyncio.Task[None] | None:
    """The task playing this group in this process, if any (tests wait on it)."""
    return next((s.task for s in _SLOTS if s.group_id == group_id), None)


async def _play_all(runs: list[Run], *, owner_token: str, host: str) -> None:
    keeper = asyncio.ensure_future(_keep_lease(runs[0].trial_group_id)) if runs else None
    try:
        for run in runs:
            try:
                await play_headless(run, owner_token=owner_token, host=host)
            except Exception:
                # One trial that could not play must not stop the others; once the lease
                # lapses its cell is ended as abandoned (lab/runs/trial_players.py).
                log.exception(
                    "trial %s of group %s did not play", run.trial_index, run.trial_group_id
                )
    finally:
        if keeper is not None:
            keeper.cancel()


async def _keep_lease(group_id: UUID | None) -> None:
    """Say the group's player is alive while it plays."""
    if group_id is None:
        return
    while True:
        await database_sync_to_async(trial_player_renew)(group_id)
        await asyncio.sleep(PLAYER_TTL_S / 3)
