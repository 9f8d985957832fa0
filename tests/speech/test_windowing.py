from __future__ import annotations

import pytest

from lab.speech.windowing import (
    FULL_WINDOW_FRAMES,
    NEAR_TIE_LOGITS,
    looks_looped,
    near_tie,
    token_budget,
    window_frames,
)


def test_a_short_segment_gets_the_short_window() -> None:
    assert window_frames(audio_ms=2_400, window_ms=15_000) == 1_500


@pytest.mark.parametrize("audio_ms", [7_600, 12_000, 29_000])
def test_a_segment_longer_than_half_the_window_gets_the_full_window(audio_ms: int) -> None:
    assert window_frames(audio_ms=audio_ms, window_ms=15_000) == FULL_WINDOW_FRAMES


@pytest.mark.parametrize("window_ms", [0, 30_000, 45_000])
def test_no_short_window_means_the_full_one(window_ms: int) -> None:
    assert window_frames(audio_ms=1_000, window_ms=window_ms) == FULL_WINDOW_FRAMES


@pytest.mark.parametrize(
    "text",
    [
        "Yes, book it. Yes, book it. Yes, book it.",
        "Are you open on Saturday? Are you open on Saturday?",
        "Sounds sound sound sound good.",
        "N M M M M M",
        "Yes. Yes.",
        "Okay, confirm it. Okay, confirm it.",
    ],
)
def test_a_phrase_said_back_to_back_is_a_loop(text: str) -> None:
    assert looks_looped(text, audio_ms=3_000)


@pytest.mark.parametrize("text", ["No, no, make that Thursday afternoon.", "Yes, yes, book it."])
def test_a_callers_own_repeated_word_is_suspect_and_heard_again(text: str) -> None:
    # The short window cannot tell it from its own "Yes. Yes.": the full window decides.
    assert looks_looped(text, audio_ms=4_000)


@pytest.mark.parametrize(
    "text", ["I want a refund on order number 4512, forty dollars.", "Yes, book it. No.", ""]
)
def test_words_that_never_repeat_back_to_back_are_not_a_loop(text: str) -> None:
    assert not looks_looped(text, audio_ms=4_000)


def test_more_words_than_the_audio_could_hold_is_a_loop() -> None:
    twelve_words = "one two three four five six seven eight nine ten eleven twelve"
    assert looks_looped(twelve_words, audio_ms=1_000)
    assert not looks_looped(twelve_words, audio_ms=3_000)


def test_the_token_budget_grows_with_the_audio() -> None:
    assert token_budget(1_000) < token_budget(4_000) < 64


def test_a_decode_with_one_step_close_to_its_runner_up_is_a_near_tie() -> None:
    # "I'd like to stay morning": " to" led " Tuesday" by 0.07 on a 25 s window.
    assert near_tie([9.1, 8.0, 7.4, 0.07, 5.0])
    assert near_tie([NEAR_TIE_LOGITS - 0.01])


def test_a_decode_whose_every_step_leads_clearly_is_not_a_near_tie() -> None:
    assert not near_tie([NEAR_TIE_LOGITS, 3.5, 12.0])
    assert not near_tie([])
