"""On a bad line a confirmation the lab did not hear clearly is asked again, never assumed.

The texts are what Whisper writes for "Yes, book it." and for nothing at all through noise,
clipping and lost packets: half a word, a near miss, a hallucinated courtesy.
"""

from __future__ import annotations

import pytest

from lab.events.types import CommitStarted
from tests.language.harness import Call

MISHEARD = [
    "Yes, look it.",
    "Yes, bo-",
    "Yes, but get.",
    "Thank you.",
    "You.",
    "...",
    "Yes, I'm...",
]


@pytest.mark.parametrize("heard", MISHEARD)
def test_a_misheard_confirmation_books_nothing_and_the_readback_is_asked_again(heard: str) -> None:
    call = Call()
    call.say("I'd like Thursday morning, please.")
    said = call.say(heard)
    assert not call.of_type(CommitStarted)
    assert [u.purpose for u in said] == ["reconfirm"]
    assert "Thursday at 9:00 AM, shall I book it?" in said[0].text
    call.say("Yes, book it.")
    assert [c.args["slot_id"] for c in call.of_type(CommitStarted)] == ["thu-0900"]


@pytest.mark.parametrize("heard", ["Yes, look it.", "Thank you.", "Yes, bo-"])
def test_unguarded_the_naive_agent_books_on_an_agreeable_mishearing(heard: str) -> None:
    call = Call(guarded=False)
    call.say("I'd like Thursday morning, please.")
    call.say(heard)
    assert [c.args["slot_id"] for c in call.of_type(CommitStarted)] == ["thu-0900"]
