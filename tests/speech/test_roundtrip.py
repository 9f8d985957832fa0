"""Piper speaks each scenario caller line; faster-whisper must hear what matters in it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lab.audio.frames import SAMPLE_RATE, split_frames
from lab.audio.vad import Endpointer, SpeechEnd
from lab.events.types import Args, UnderstandingKind
from lab.language.understanding import understand
from lab.scenarios.catalog import all_contracts
from lab.speech.asr import transcribe
from lab.speech.tts import synthesize

ORDER = ("4512", "four five one two", "4 5 1 2")
POSITIVE_ONLY = ("yes", "confirm")

# Each line: groups of which one alternative must be heard, and words that must not be.
LINES: dict[str, tuple[list[tuple[str, ...]], tuple[str, ...]]] = {
    "Hi, I'd like to book an appointment for Tuesday morning.": (
        [("tuesday",), ("morning",), ("appointment",)],
        POSITIVE_ONLY,
    ),
    "Actually, make that Thursday afternoon.": (
        [("actually",), ("thursday",), ("afternoon",)],
        ("tuesday",),
    ),
    "Yes, book it.": ([("yes",), ("book",)], ()),
    "Can you find me a slot on Monday morning?": ([("monday",), ("morning",)], POSITIVE_ONLY),
    "Monday morning, please.": ([("monday",), ("morning",)], POSITIVE_ONLY),
    "Sounds good so far.": ([("good",)], POSITIVE_ONLY),
    "Hmm, maybe.": ([("maybe",)], POSITIVE_ONLY),
    "I need an appointment on Wednesday afternoon.": (
        [("wednesday",), ("afternoon",)],
        POSITIVE_ONLY,
    ),
    "Book me something Tuesday morning, please.": ([("tuesday",), ("morning",)], POSITIVE_ONLY),
    "Wait, no. Friday morning instead.": ([("no",), ("friday",), ("morning",)], POSITIVE_ONLY),
    "Yes, confirm.": ([("yes",), ("confirm",)], ()),
    # Whisper writes piper's "Mm-hmm." as "MMM." (full window) or "M M." (the short one); it must
    # stay an acknowledgement, never a yes.
    "Mm-hmm.": ([("mmm", "mm", "m m", "mm hmm", "mhm", "hmm", "uh huh")], POSITIVE_ONLY),
    "I'd like Thursday morning, please.": ([("thursday",), ("morning",)], POSITIVE_ONLY),
    "I want a refund on order number four five one two, forty dollars.": (
        [("refund",), ("order",), ORDER, ("40", "forty"), ("dollars",)],
        POSITIVE_ONLY,
    ),
    "Actually, make that twenty five dollars.": (
        [("actually",), ("25", "twenty five"), ("dollars",)],
        ("40", "forty"),
    ),
    "Yes, confirm the refund.": ([("yes",), ("confirm",), ("refund",)], ()),
    "I'd like Thursday afternoon, please.": (
        [("thursday",), ("afternoon",)],
        POSITIVE_ONLY,
    ),
    "I'd like Tuesday morning, please.": ([("tuesday",), ("morning",)], POSITIVE_ONLY),
    "Sounds good.": ([("good",)], POSITIVE_ONLY),
    "How much is a basic tune-up?": ([("how much",), ("tune",)], POSITIVE_ONLY),
    "Are you open on Saturday?": ([("open",), ("saturday",)], POSITIVE_ONLY),
    "Can I get my money back if I cancel?": ([("money back",), ("cancel",)], POSITIVE_ONLY),
    "Can you put me through to your manager?": ([("manager",)], POSITIVE_ONLY),
    "How much is a frame respray?": ([("how much",), ("frame",)], POSITIVE_ONLY),
    "So that's nine, yes?": ([("nine", "9")], ()),
    "Hello? Did that go through?": ([("through",)], POSITIVE_ONLY),
    "Actually, can you make that Friday morning instead?": (
        [("actually",), ("friday",), ("morning",)],
        POSITIVE_ONLY,
    ),
}

REQUEST, CORRECTION = UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION
CONFIRM, POSITIVE = UnderstandingKind.CONFIRM, UnderstandingKind.POSITIVE
QUESTION, UNSUPPORTED = UnderstandingKind.QUESTION, UnderstandingKind.UNSUPPORTED

# What the scenarios need the agent to understand from each line as heard.
MEANINGS: dict[str, tuple[UnderstandingKind, Args]] = {
    # A check-in while the booking is written asks for nothing and confirms nothing.
    "Hello? Did that go through?": (UNSUPPORTED, {}),
    # A recap after the booking is no new confirmation of anything.
    "So that's nine, yes?": (POSITIVE, {}),
    "Actually, can you make that Friday morning instead?": (
        CORRECTION,
        {"day": "friday", "part_of_day": "morning"},
    ),
    "Hi, I'd like to book an appointment for Tuesday morning.": (
        REQUEST,
        {"day": "tuesday", "part_of_day": "morning"},
    ),
    "Actually, make that Thursday afternoon.": (
        CORRECTION,
        {"day": "thursday", "part_of_day": "afternoon"},
    ),
    "Yes, book it.": (CONFIRM, {}),
    "Can you find me a slot on Monday morning?": (
        REQUEST,
        {"day": "monday", "part_of_day": "morning"},
    ),
    "Monday morning, please.": (REQUEST, {"day": "monday", "part_of_day": "morning"}),
    "Sounds good so far.": (POSITIVE, {}),
    "Hmm, maybe.": (POSITIVE, {}),
    "I need an appointment on Wednesday afternoon.": (
        REQUEST,
        {"day": "wednesday", "part_of_day": "afternoon"},
    ),
    "Book me something Tuesday morning, please.": (
        REQUEST,
        {"day": "tuesday", "part_of_day": "morning"},
    ),
    "Wait, no. Friday morning instead.": (
        CORRECTION,
        {"day": "friday", "part_of_day": "morning"},
    ),
    "Yes, confirm.": (CONFIRM, {}),
    "Mm-hmm.": (POSITIVE, {}),
    "I'd like Thursday morning, please.": (
        REQUEST,
        {"day": "thursday", "part_of_day": "morning"},
    ),
    "I want a refund on order number four five one two, forty dollars.": (
        REQUEST,
        {"order_number": "4512", "amount_cents": 4000},
    ),
    "Actually, make that twenty five dollars.": (CORRECTION, {"amount_cents": 2500}),
    "Yes, confirm the refund.": (CONFIRM, {}),
    "I'd like Thursday afternoon, please.": (
        REQUEST,
        {"day": "thursday", "part_of_day": "afternoon"},
    ),
    "I'd like Tuesday morning, please.": (REQUEST, {"day": "tuesday", "part_of_day": "morning"}),
    "Sounds good.": (POSITIVE, {}),
    "How much is a basic tune-up?": (QUESTION, {}),
    "Are you open on Saturday?": (QUESTION, {}),
    # A refund request with nothing to refund yet; the agent answers the policy question.
    "Can I get my money back if I cancel?": (UnderstandingKind.QUESTION, {}),
    "Can you put me through to your manager?": (UNSUPPORTED, {}),
    "How much is a frame respray?": (QUESTION, {}),
}


def normalized(text: str) -> str:
    """Lowercase words and digits, '$40' as '40 dollars', '4,512' as '4512', space-padded."""
    text = text.lower().replace("-", " ")
    text = re.sub(r"\$(\d+)", r"\1 dollars", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"[^a-z0-9']+", " ", text)
    return f" {' '.join(text.split())} "


def hears(heard: str, phrase: str) -> bool:
    return f" {phrase} " in heard


def as_the_lab_hears(speech: bytes) -> bytes:
    """The one segment the endpointer cuts from the line spoken between two pauses, as the voice
    path hands it to recognition (pre-roll and the silence up to the turn's end included)."""
    pause = b"\0" * SAMPLE_RATE
    endpointer = Endpointer()
    frames = split_frames(pause + speech + pause)
    ends = [e for f in frames for e in endpointer.push(f) if isinstance(e, SpeechEnd)]
    assert len(ends) == 1
    return ends[0].pcm


def test_every_scripted_caller_line_has_an_expectation_here() -> None:
    said = {line.say for contract in all_contracts().values() for line in contract.caller}

    assert said <= set(LINES)
    assert set(MEANINGS) == set(LINES)


def test_normalized_reads_money_and_grouped_digits_as_words_and_plain_digits() -> None:
    assert normalized("Order number 4,512, $40.") == " order number 4512 40 dollars "
    assert normalized("Twenty-five dollars!") == " twenty five dollars "


@pytest.mark.models
@pytest.mark.parametrize("line", list(LINES))
def test_a_spoken_caller_line_keeps_its_key_words_and_its_meaning(line: str) -> None:
    required, forbidden = LINES[line]

    text = transcribe(as_the_lab_hears(synthesize(line))).text

    heard = normalized(text)
    for alternatives in required:
        assert any(hears(heard, a) for a in alternatives), (alternatives, heard)
    for word in forbidden:
        assert not hears(heard, word), (word, heard)
    understood = understand(text)
    assert (understood.kind, understood.args) == MEANINGS[line], text


@pytest.mark.models
def test_a_conversation_cut_by_the_vad_transcribes_segment_by_segment() -> None:
    lines = ["Actually, make that Thursday afternoon.", "Yes, confirm."]
    pause = b"\0" * (SAMPLE_RATE * 2)
    rng = np.random.default_rng(5)
    clean = np.frombuffer(pause + pause.join(synthesize(line) for line in lines) + pause, "<i2")
    noisy = clean + rng.standard_normal(clean.size) * 328
    pcm = np.clip(noisy, -32768, 32767).astype("<i2").tobytes()

    endpointer = Endpointer()
    ends = [e for f in split_frames(pcm) for e in endpointer.push(f) if isinstance(e, SpeechEnd)]

    heard = [normalized(transcribe(end.pcm).text) for end in ends]
    assert len(heard) == 2
    assert all(hears(heard[0], w) for w in ("thursday", "afternoon"))
    assert all(hears(heard[1], w) for w in ("yes", "confirm"))
