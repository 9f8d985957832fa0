"""Backchannels: acknowledgements as Whisper writes them, and content that is never one."""

from __future__ import annotations

import pytest

from lab.agent.backchannel import is_backchannel


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
