"""The bot's audio as a phone line plays it (pure, every time handed in)."""

from __future__ import annotations

import pytest

from lab.connectors.phone_speech import BotMisbehaved, BotSpeech

TENTH = b"\x10\x27" * 1600  # 0.1 s of loud 16 kHz PCM16


def test_a_late_chunk_leaves_a_gap_on_the_line_but_not_in_what_is_heard() -> None:
    speech = BotSpeech()
    speech.audio(TENTH, 0.0)
    speech.audio(TENTH, 0.3)
    stretch = speech.finished_stretch(1.5, gap_s=0.7)
    assert stretch is not None
    assert len(stretch.pcm) == 3200 * 4 and stretch.gaps_ms == 200
    assert bytes(stretch.sent) == TENTH * 2


def test_marks_play_where_they_sit_and_clear_acknowledges_the_rest_at_once() -> None:
    speech = BotSpeech()
    speech.audio(TENTH * 10, 0.0)  # a second, all at once: it plays until 1.0
    speech.mark("half", 0.0)
    speech.audio(TENTH * 10, 0.0)
    speech.mark("end", 0.0)
    assert speech.due_marks(0.5) == [] and speech.due_marks(1.0) == ["half"]
    assert speech.clear(1.2) == ["end"]
    stretch = speech.finished_stretch(3.0, gap_s=0.7)
    assert stretch is not None and stretch.cleared
    assert len(stretch.sent) == len(stretch.pcm) == round(1.2 * 32000)


def test_audio_far_ahead_of_real_time_is_refused() -> None:
    speech = BotSpeech(max_ahead_s=1.0)
    speech.audio(TENTH * 15, 0.0)
    with pytest.raises(BotMisbehaved, match="ahead of real time"):
        speech.audio(TENTH, 0.0)
