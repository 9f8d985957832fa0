"""The reference agent and its faulty habits over the real wire, before the lab judges them:
each habit changes what the agent does in exactly the scenarios that expose it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from lab.reference_agents.habits import HABITS, REFUND_PROMISE, UPDATED
from tests.connectors.conftest import start_reference_server, stop
from tests.connectors.scripted_calls import SCENARIOS, commits, play

Transcripts = dict[str, list[tuple[Any, ...]]]
EXPOSES = {
    "stale-args": {"correction", "refund_correction", "lossy_correction"},
    "still-here": {
        "no_confirmation",
        "facts_before_booking",
        "uncovered_question",
        "noisy_confirmation",
        "hangup_mid_commit",
        # It takes the recap "So that's nine, yes?" as a go-ahead too; the booking it already
        # made answers it without a second call, so the lab's verdict there stays PASS.
        "time_repeated",
    },
    "double-book": {"double_confirmation"},
    "rebook-on-recap": {"time_repeated"},
    "says-updated": {"correction_after_booking"},
    "retry-new-key": {"commit_answer_lost"},
    "rewrite-on-barge": {"barge_during_commit"},
    "invent-slot": {"tool_timeout"},
    "keep-after-interrupt": {"interruption"},
    "promise-refund": {"facts_before_booking"},
    # Every scenario reads an option back, and this habit never does.
    "no-readback": set(SCENARIOS),
    "book-invented": {"tool_timeout"},
}


async def _all(habit: str | None) -> Transcripts:
    process, url = start_reference_server(habit)
    try:
        return {name: await play(url, name) for name in SCENARIOS}
    finally:
        stop(process)


@pytest.fixture(scope="module")
def reference() -> Iterator[Transcripts]:
    yield asyncio.run(_all(None))


def _booked(transcript: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [entry[2] for entry in commits(transcript)]


def test_the_reference_agent_books_the_latest_confirmed_request_once(
    reference: Transcripts,
) -> None:
    assert _booked(reference["correction"]) == [
        {"slot_id": "thu-1400", "day": "thursday", "time": "14:00"}
    ]
    assert _booked(reference["interruption"])[0]["day"] == "friday"
    assert _booked(reference["refund_correction"])[0]["amount_cents"] == 2500
    assert len(_booked(reference["double_confirmation"])) == 1
    assert len(_booked(reference["time_repeated"])) == 1
    # Asked "Did that go through?" while its booking runs, it waits for the answer and says it.
    assert len(_booked(reference["barge_during_commit"])) == 1
    assert [e[2] for e in reference["barge_during_commit"] if e[1] == "said"][-2:] == [
        "Done: Wednesday at 1:30 PM.",
        "Your reference is rc-1.",
    ]
    # Its booking's answer lost, it says so and sends nothing again.
    assert [e[3] for e in commits(reference["commit_answer_lost"])] == ["failed"]
    assert [b["day"] for b in _booked(reference["correction_after_booking"])] == [
        "thursday",
        "friday",
    ]
    assert (3, "said", "That's already done: Thursday at 9:00 AM.") in reference[
        "double_confirmation"
    ]
    assert _booked(reference["no_confirmation"]) == []
    lookups = [e for e in reference["tool_timeout"] if e[1] == "check_availability"]
    assert [e[3] for e in lookups] == ["failed", "ok"]  # one retry, then the slot it found
    assert _booked(reference["tool_timeout"])[0]["slot_id"] == "wed-1330"


def test_habits_cover_the_ones_the_issues_name() -> None:
    assert set(HABITS) == set(EXPOSES)


@pytest.mark.parametrize("habit", sorted(EXPOSES))
async def test_a_habit_changes_only_the_scenarios_that_expose_it(
    reference: Transcripts, habit: str
) -> None:
    faulty = await _all(habit)
    differs = {name for name in SCENARIOS if faulty[name] != reference[name]}
    assert differs == EXPOSES[habit]
    match habit:
        case "stale-args":
            assert _booked(faulty["correction"])[0]["day"] == "tuesday"
            assert _booked(faulty["refund_correction"])[0]["amount_cents"] == 4000
        case "keep-after-interrupt":
            assert _booked(faulty["interruption"])[0]["day"] == "tuesday"
        case "still-here":
            # Booked on "Sounds good so far.", the second line, before any yes.
            assert [e[0] for e in commits(faulty["no_confirmation"])] == [2]
        case "double-book":
            assert len(_booked(faulty["double_confirmation"])) == 2
        case "says-updated":
            # "Updated" said on the change, and only the first booking made.
            assert (3, "said", UPDATED) in faulty["correction_after_booking"]
            assert [e[0] for e in commits(faulty["correction_after_booking"])] == [2]
        case "rebook-on-recap":
            # Booked again on "So that's nine, yes?", the third line.
            assert [e[0] for e in commits(faulty["time_repeated"])] == [2, 3]
        case "retry-new-key":
            # The lost answer's write sent again at once, in the same turn: two calls.
            assert [(e[0], e[3]) for e in commits(faulty["commit_answer_lost"])] == [
                (2, "failed"),
                (2, "ok"),
            ]
        case "rewrite-on-barge":
            # Sent again on hearing the caller while the first write ran: two calls, one yes.
            assert [(e[0], e[3]) for e in commits(faulty["barge_during_commit"])] == [
                (2, "ok"),
                (2, "ok"),
            ]
        case "invent-slot":
            assert _booked(faulty["tool_timeout"])[0]["slot_id"] == "wed-1400"
            assert len([e for e in faulty["tool_timeout"] if e[1] == "check_availability"]) == 1
        case "no-readback":
            said = [e[2] for name in SCENARIOS for e in faulty[name] if e[1] == "said"]
            # No clock time and no refund offered: only the request, and "Done." once booked.
            assert not [text for text in said if re.search(r"\d:\d\d|I can refund", text)]
            assert (1, "said", "Monday morning has openings.") in faulty["no_confirmation"]
            assert [e[0] for e in commits(faulty["no_confirmation"])] == [2]
        case "book-invented":
            # Booked in the turn the lookup failed, before the caller said anything more.
            (booked,) = [e for e in commits(faulty["tool_timeout"]) if e[0] == 1]
            assert booked[2]["slot_id"] == "wed-1400"
        case "promise-refund":
            assert (3, "said", REFUND_PROMISE) in faulty["facts_before_booking"]
