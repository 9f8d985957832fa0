"""The picker's "play it K times": K > 1 starts a trial group of K headless typed runs in the
server's background, owned like a run, and the trials page shows them finishing, then the rate."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.test import AsyncClient, Client

from lab.events.models import Run, TrialGroup
from lab.runs.ownership import token_digest
from lab.web import trial_player

FORM = {"scenario": "correction", "channel": "typed"}
RUN_BOUND_S = 120
CARD = re.compile(r'<article class="card scenario" id="scenario-([\w-]+)">(.*?)</article>', re.S)


class Gate:
    """Stands in front of play_headless: a trial plays only once the test lets it, and the
    test hears when it has played, so every check rests on the runs' own state."""

    def __init__(self, play: Callable[..., Awaitable[None]]) -> None:
        self.play = play
        self.allowed = asyncio.Semaphore(0)
        self.played: asyncio.Queue[Run] = asyncio.Queue()

    async def __call__(self, run: Run, **kwargs: Any) -> None:
        await self.allowed.acquire()
        await self.play(run, **kwargs)
        await self.played.put(run)

    async def let_one_play(self) -> Run:
        self.allowed.release()
        return await asyncio.wait_for(self.played.get(), RUN_BOUND_S)


def _trial_cells(html: str) -> list[str]:
    """Each trial cell's verdict, or "pending" for one not finished yet."""
    cells = re.findall(r'<td class="trial" data-trial="\d+" data-verdict="(\w*)"([^>]*)>', html)
    return ["pending" if 'data-finished="false"' in rest else verdict for verdict, rest in cells]


@pytest.mark.django_db(transaction=True)
async def test_three_repeats_play_in_the_background_and_the_page_follows_them_to_the_rate(
    fast_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(trial_player.play_headless)
    monkeypatch.setattr(trial_player, "play_headless", gate)
    user = await User.objects.acreate(username="ada")
    client = AsyncClient()
    await client.aforce_login(user)

    started = await client.post("/runs/", {**FORM, "repeat": "3"})
    assert started.status_code == 302
    group = await TrialGroup.objects.aget()
    assert started["Location"] == f"/trials/{group.id}/"
    runs = [run async for run in Run.objects.filter(trial_group=group).order_by("trial_index")]
    assert [(r.scenario_id, r.trial_index, r.channel, r.mode) for r in runs] == [
        ("correction", k, "typed", "guarded") for k in (1, 2, 3)
    ]
    # Owned by the caller's session and by the signed-in user, as a run from the picker is.
    owner_token = await database_sync_to_async(lambda: client.session["lab.owner"])()
    assert {r.owner_hash for r in runs} == {token_digest(owner_token)}
    assert {r.owner_user_id for r in runs} == {user.id}
    task = trial_player.trials_playing(group.id)
    assert task is not None and not task.done()

    page = (await client.get(started["Location"])).content.decode()
    progress = f"/trials/{group.id}/progress/"
    assert f'hx-get="{progress}" hx-trigger="every 1s" hx-swap="outerHTML"' in page
    assert "<strong>0 of 3</strong> finished" in page
    assert _trial_cells(page) == ["pending"] * 3
    assert '<p id="trials-summary" hidden>' in page

    first = await gate.let_one_play()
    assert first.trial_index == 1
    fragment = (await client.get(progress)).content.decode()
    assert fragment.lstrip().startswith('<section class="card trials" id="trials"')
    assert "<strong>1 of 3</strong> finished" in fragment
    assert _trial_cells(fragment) == ["PASS", "pending", "pending"]
    assert 'hx-trigger="every 1s"' in fragment

    for _ in range(2):
        await gate.let_one_play()
    await asyncio.wait_for(task, RUN_BOUND_S)
    assert trial_player.trials_playing(group.id) is None
    done = (await client.get(progress)).content.decode()
    # Every trial finished: no trigger, so the page stops polling, and the rate is shown.
    assert "hx-trigger" not in done and 'data-done="true"' in done
    assert "trials-progress" not in done
    assert _trial_cells(done) == ["PASS"] * 3
    assert '<td class="pass-rate">3/3</td>' in done
    assert "[44%, 100%]" in done
    assert "pass^3: <strong>1/1</strong> scenarios" in done

    # Another of the user's sessions sees the group; a stranger sees neither page nor fragment.
    other = AsyncClient()
    await other.aforce_login(user)
    assert (await other.get(f"/trials/{group.id}/")).status_code == 200
    stranger = AsyncClient()
    assert (await stranger.get(f"/trials/{group.id}/")).status_code == 404
    assert (await stranger.get(progress)).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("repeat", ["0", "21", "x", "2.5", ""])
def test_a_repeat_outside_1_to_20_is_a_400_naming_the_field(repeat: str) -> None:
    response = Client().post("/runs/", {**FORM, "repeat": repeat})
    assert response.status_code == 400
    assert "The run could not start: repeat: " in response.content.decode()
    assert not TrialGroup.objects.exists() and not Run.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"scenario": "teleport", "channel": "typed"}, "unknown scenario"),
        ({"scenario": "free", "channel": "typed"}, "the free call has no scripted caller"),
        ({"scenario": "correction", "channel": "voice"}, "repeated runs are typed"),
        ({**FORM, "agent": "demo/reference"}, "repeated runs play the lab's own agent"),
    ],
)
def test_a_repeat_the_lab_cannot_play_headless_is_a_400_that_says_why(
    form: dict[str, str], says: str
) -> None:
    response = Client().post("/runs/", {**form, "repeat": "3"})
    assert response.status_code == 400
    assert says in html.unescape(response.content.decode()).lower()
    assert not TrialGroup.objects.exists() and not Run.objects.exists()


@pytest.mark.django_db
def test_one_repeat_is_a_live_run_as_before() -> None:
    response = Client().post("/runs/", {**FORM, "repeat": "1"})
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.id}/"
    assert run.trial_group_id is None and run.status == Run.Status.ACTIVE


@pytest.mark.django_db
def test_a_busy_lab_refuses_more_repeats_with_a_429_and_makes_no_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trial_player, "MAX_PLAYING", 0)
    response = Client().post("/runs/", {**FORM, "repeat": "3"})
    assert response.status_code == 429
    assert "already repeating 0 scenarios" in response.content.decode()
    assert not TrialGroup.objects.exists() and not Run.objects.exists()


@pytest.mark.django_db
def test_each_scripted_card_offers_the_repeat_count_and_the_free_call_does_not() -> None:
    page = Client().get("/").content.decode()
    card = re.compile(
        r'<article class="card scenario" id="scenario-([\w-]+)">(.*?)</article>', re.S
    )
    cards = card.findall(page)
    offers = {card: 'name="repeat" value="1" min="1" max="20"' in body for card, body in cards}
    assert offers.pop("free") is False
    assert offers and all(offers.values())


@pytest.mark.django_db(transaction=True)
async def test_repeats_keep_the_cards_gate_and_grounding_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    played: asyncio.Queue[Run] = asyncio.Queue()

    async def record(run: Run, **kwargs: Any) -> None:
        await played.put(run)

    monkeypatch.setattr(trial_player, "play_headless", record)
    form = {**FORM, "repeat": "2", "unguarded": "on", "ungrounded": "on"}
    started = await AsyncClient().post("/runs/", form)
    assert started.status_code == 302
    group = await TrialGroup.objects.aget()
    runs = [run async for run in Run.objects.filter(trial_group=group).order_by("trial_index")]
    assert [(r.mode, r.ungrounded, r.channel) for r in runs] == [("unguarded", True, "typed")] * 2
    in_order = [await asyncio.wait_for(played.get(), RUN_BOUND_S) for _ in runs]
    assert [r.id for r in in_order] == [r.id for r in runs]


@pytest.mark.django_db
def test_the_start_endpoint_still_takes_only_a_post() -> None:
    assert Client().get("/runs/").status_code == 405
