from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings

from lab.audio.frames import BYTES_PER_MS
from lab.speech import tts

READBACK = "I have Tuesday at nine thirty in the morning. Shall I book it?"


def test_sentences_splits_a_reply_at_sentence_ends_only() -> None:
    assert tts.sentences("I have Tuesday at 9.30 in the morning.  Shall I book it? Yes!") == [
        "I have Tuesday at 9.30 in the morning.",
        "Shall I book it?",
        "Yes!",
    ]


def test_sentences_of_blank_text_is_empty() -> None:
    assert tts.sentences("  \n ") == []


def test_chunks_send_the_opening_clause_of_a_reply_ahead_of_the_rest() -> None:
    assert tts.chunks("Just to be sure: Tuesday at two, shall I book it? Thanks.") == [
        "Just to be sure:",
        "Tuesday at two, shall I book it?",
        "Thanks.",
    ]


def test_chunks_keep_a_one_word_opening_with_its_sentence() -> None:
    assert tts.chunks("Done: a Tuesday appointment. Your reference is R-1.") == [
        "Done: a Tuesday appointment.",
        "Your reference is R-1.",
    ]
    assert tts.chunks(" ") == []


@pytest.mark.models
def test_it_yields_one_16_khz_pcm16_clip_per_sentence() -> None:
    clips = list(tts.synthesize_sentences(READBACK))

    assert len(clips) == 2
    for clip, sentence in zip(clips, tts.sentences(READBACK), strict=True):
        assert len(clip) % 2 == 0
        # Roughly 6 to 30 characters of text per second of speech.
        seconds = len(clip) / BYTES_PER_MS / 1000
        assert len(sentence) / 30 < seconds < len(sentence) / 6


@pytest.mark.models
def test_synthesize_is_the_sentences_back_to_back() -> None:
    assert tts.synthesize(READBACK) == b"".join(tts.synthesize_sentences(READBACK))


@pytest.mark.models
def test_the_same_text_gives_the_same_audio_by_default() -> None:
    assert tts.synthesize("Shall I book it?") == tts.synthesize("Shall I book it?")


@pytest.mark.models
def test_with_variation_on_the_voice_differs_from_call_to_call(settings: Settings) -> None:
    settings.LAB_TTS_VARIATION = True

    assert tts.synthesize("Shall I book it?") != tts.synthesize("Shall I book it?")


def test_the_voice_is_named_and_its_files_digested() -> None:
    assert tts.VOICE_NAME == "en_US-joe-medium"
    assert len(tts.voice_files_digest()) == 64
    assert tts.voice_files_digest() == tts.voice_files_digest.__wrapped__()
