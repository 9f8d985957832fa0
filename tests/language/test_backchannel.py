"""Backchannels: acknowledgements as Whisper writes them, and content that is never one."""

from __future__ import annotations

import pytest

from lab.language.backchannel import is_backchannel, words_beyond


@pytest.mark.parametrize(
    "text",
    [
        "Mm-hmm.",
        "MMM.",
        "Mhm.",
        "Hmm-mm",
        "Uh-huh.",
        "uh huh",
        "Oh.",
        "Okay.",
        "OK",
        "Yeah.",
        "Yep!",
        "Right.",
        "Right, right.",
        "Got it.",
        "Okay, got it.",
        "Sure.",
        "All right.",
        "Oh, I see.",
        "Thank you.",
    ],
)
def test_an_acknowledgement_is_a_backchannel(text: str) -> None:
    assert is_backchannel(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "...",
        "No.",
        "Wait.",
        "Wait, no. Friday morning instead.",
        "Friday.",
        "Yes, confirm.",
        "Okay, but make it Thursday.",
        "Sure, what time is that?",
        "Hmm, maybe.",
        "Um",
        "Yeah yeah yeah okay sure",
        "Got it, 9:30?",
        "Right, the second one.",
    ],
)
def test_anything_with_content_is_not(text: str) -> None:
    assert not is_backchannel(text)


def test_words_beyond_the_echo_are_what_the_caller_added() -> None:
    agent = "I have Tuesday at nine. Shall I book it?"
    assert words_beyond("I have Tuesday at nine. Mm-hmm.", agent) == "mmhmm"
    assert words_beyond("I have Tuesday. No, Friday.", agent) == "no friday"
    assert words_beyond("I have Tuesday at nine.", agent) == ""
    assert not is_backchannel(words_beyond("Shall I book it?", agent))
