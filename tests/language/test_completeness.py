from __future__ import annotations

import pytest

from lab.language.completeness import transcript_signal
from lab.language.understanding import understand


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        ("Actually, make that Thursday afternoon.", "complete"),
        ("Book me Tuesday at 9:30.", "complete"),
        ("Yes, confirm.", "complete"),
        ("No.", "complete"),
        ("Refund order 4512 for twenty dollars.", "complete"),
        ("I want to book Tuesday morning and", "incomplete"),
        ("Tuesday, um,", "incomplete"),
        ("Um", "incomplete"),
        ("Refund order 4512 for twenty", "incomplete"),
        ("I'd like to book on", "incomplete"),
        ("I would like to book an appointment.", "unknown"),
        ("Okay.", "unknown"),
        ("", "unknown"),
    ],
)
def test_the_words_signal_a_finished_turn_or_not(text, signal):
    assert transcript_signal(text, understand(text)) == signal
