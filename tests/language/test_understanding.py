from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.events.types import Action, Args, UnderstandingKind
from lab.language.numbers import int_to_words
from lab.language.understanding import BOOK_KEYS, REFUND_KEYS, understand

REQUEST = UnderstandingKind.REQUEST
CORRECTION = UnderstandingKind.CORRECTION
CONFIRM = UnderstandingKind.CONFIRM
POSITIVE = UnderstandingKind.POSITIVE
DECLINE = UnderstandingKind.DECLINE
UNSUPPORTED = UnderstandingKind.UNSUPPORTED
UNCLEAR = UnderstandingKind.UNCLEAR
BOOK = Action.BOOK
REFUND = Action.REFUND

TUESDAY_MORNING = {"day": "tuesday", "part_of_day": "morning"}
THURSDAY_AFTERNOON = {"day": "thursday", "part_of_day": "afternoon"}
FRIDAY_MORNING = {"day": "friday", "part_of_day": "morning"}
REFUND_4512_40 = {"order_number": "4512", "amount_cents": 4000}

Case = tuple[str, UnderstandingKind, Action | None, Args]

# The scripted caller's lines, scenario by scenario.
SCRIPTED: list[Case] = [
    (
        "Hi, I'd like to book an appointment for Tuesday morning.",
        REQUEST,
        BOOK,
        TUESDAY_MORNING,
    ),
    ("Actually, make that Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("Yes, book it.", CONFIRM, BOOK, {}),
    (
        "Can you find me a slot on Monday morning?",
        REQUEST,
        BOOK,
        {"day": "monday", "part_of_day": "morning"},
    ),
    ("Sounds good so far.", POSITIVE, None, {}),
    ("Hmm, maybe.", POSITIVE, None, {}),
    (
        "I need an appointment on Wednesday afternoon.",
        REQUEST,
        BOOK,
        {"day": "wednesday", "part_of_day": "afternoon"},
    ),
    ("Book me something Tuesday morning, please.", REQUEST, BOOK, TUESDAY_MORNING),
    ("Wait, no. Friday morning instead.", CORRECTION, BOOK, FRIDAY_MORNING),
    ("Yes, confirm.", CONFIRM, None, {}),
    (
        "I'd like Thursday morning, please.",
        REQUEST,
        BOOK,
        {"day": "thursday", "part_of_day": "morning"},
    ),
    (
        "I want a refund on order number four five one two, forty dollars.",
        REQUEST,
        REFUND,
        REFUND_4512_40,
    ),
    ("Actually, make that twenty five dollars.", CORRECTION, REFUND, {"amount_cents": 2500}),
    ("Yes, confirm the refund.", CONFIRM, REFUND, {}),
]

# The same lines as Whisper tiny.en writes them.
WHISPERED: list[Case] = [
    (
        "Hi, I'd like to book an appointment for Tuesday morning.",
        REQUEST,
        BOOK,
        TUESDAY_MORNING,
    ),
    ("Actually make that Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("Yes, book it.", CONFIRM, BOOK, {}),
    ("I want a refund on order number 4512, $40.", REQUEST, REFUND, REFUND_4512_40),
    ("Refined order number 4,512.", REQUEST, REFUND, {"order_number": "4512"}),
    ("Refund order number for 5.1 to.", REQUEST, REFUND, {"order_number": "4512"}),
    ("Actually, make that $25.", CORRECTION, REFUND, {"amount_cents": 2500}),
    ("Wait, no, Friday morning instead.", CORRECTION, BOOK, FRIDAY_MORNING),
    ("Sounds good so far.", POSITIVE, None, {}),
    ("Hmm. Maybe.", POSITIVE, None, {}),
    ("Yes. Confirm.", CONFIRM, None, {}),
    (" Yes, book it!", CONFIRM, BOOK, {}),
    ("[BLANK_AUDIO]", UNCLEAR, None, {}),
]

# Everything else: typed forms, ASR forms and the cases that must not be confused.
UTTERANCES: list[Case] = [
    # Requests
    ("Tuesday morning", REQUEST, BOOK, TUESDAY_MORNING),
    ("tues morning", REQUEST, BOOK, TUESDAY_MORNING),
    ("TUESDAY, MORNING.", REQUEST, BOOK, TUESDAY_MORNING),
    ("Thurs afternoon?", REQUEST, BOOK, THURSDAY_AFTERNOON),
    ("Mon. at 10", REQUEST, BOOK, {"day": "monday", "time": "10:00"}),
    ("I'd like to book an appointment.", REQUEST, BOOK, {}),
    ("Book an appointment.", REQUEST, BOOK, {}),
    ("Do you have any availability?", REQUEST, BOOK, {}),
    ("Can you book me in for Tuesdays?", REQUEST, BOOK, {"day": "tuesday"}),
    ("Tuesday's fine.", REQUEST, BOOK, {"day": "tuesday"}),
    ("Friday in the morning", REQUEST, BOOK, FRIDAY_MORNING),
    ("Friday a.m.", REQUEST, BOOK, FRIDAY_MORNING),
    ("Thursday p.m.", REQUEST, BOOK, THURSDAY_AFTERNOON),
    ("I am free on Thursday", REQUEST, BOOK, {"day": "thursday"}),
    ("Tonight, please.", REQUEST, BOOK, {"part_of_day": "evening"}),
    ("Tuesday at 930 am", REQUEST, BOOK, {"day": "tuesday", "time": "09:30"}),
    ("Tuesday at 9.30", REQUEST, BOOK, {"day": "tuesday", "time": "09:30"}),
    ("Friday at noon", REQUEST, BOOK, {"day": "friday", "time": "12:00"}),
    ("Wednesday at two o'clock", REQUEST, BOOK, {"day": "wednesday", "time": "14:00"}),
    (
        "Tuesday at 7 in the evening",
        REQUEST,
        BOOK,
        {"day": "tuesday", "part_of_day": "evening", "time": "19:00"},
    ),
    ("2pm Tuesday", REQUEST, BOOK, {"day": "tuesday", "time": "14:00"}),
    ("Yes, Tuesday morning.", REQUEST, BOOK, TUESDAY_MORNING),
    ("Yes, book it for Friday.", REQUEST, BOOK, {"day": "friday"}),
    ("I want a refund.", REQUEST, REFUND, {}),
    ("Can I get my money back?", REQUEST, REFUND, {}),
    ("I want a re-fund, order 4512.", REQUEST, REFUND, {"order_number": "4512"}),
    ("Refunds for order number 4512 please", REQUEST, REFUND, {"order_number": "4512"}),
    ("Please refund order #4512.", REQUEST, REFUND, {"order_number": "4512"}),
    ("It's for order 4512.", REQUEST, REFUND, {"order_number": "4512"}),
    ("Order No. 4512, $40.", REQUEST, REFUND, REFUND_4512_40),
    ("My order number is 4512.", REQUEST, REFUND, {"order_number": "4512"}),
    (
        "Refund order number forty five twelve, 40 bucks.",
        REQUEST,
        REFUND,
        REFUND_4512_40,
    ),
    (
        "Refund order number four five one two for forty dollars.",
        REQUEST,
        REFUND,
        REFUND_4512_40,
    ),
    (
        "I want a refund on order #4512 for $25.50",
        REQUEST,
        REFUND,
        {"order_number": "4512", "amount_cents": 2550},
    ),
    (
        "My order number is 4512 and I want twenty dollars back.",
        REQUEST,
        REFUND,
        {"order_number": "4512", "amount_cents": 2000},
    ),
    ("Forty dollars.", REQUEST, REFUND, {"amount_cents": 4000}),
    ("25.00", REQUEST, REFUND, {"amount_cents": 2500}),
    ("Refund for 4512.", REQUEST, REFUND, {"order_number": "4512"}),
    ("Refund, Tuesday morning.", REQUEST, REFUND, {}),
    # Corrections
    ("No, Friday morning.", CORRECTION, BOOK, FRIDAY_MORNING),
    ("Nope, Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("No, instead Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("Make it Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("Change it to Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    ("Sorry, I meant Thursday.", CORRECTION, BOOK, {"day": "thursday"}),
    ("I'd rather have Thursday.", CORRECTION, BOOK, {"day": "thursday"}),
    ("Can I get Thursday instead?", CORRECTION, BOOK, {"day": "thursday"}),
    ("How about Friday?", CORRECTION, BOOK, {"day": "friday"}),
    ("Yes, but make that Friday.", CORRECTION, BOOK, {"day": "friday"}),
    ("yes but Friday", CORRECTION, BOOK, {"day": "friday"}),
    ("Not Tuesday but Thursday.", CORRECTION, BOOK, {"day": "thursday"}),
    ("Thursday, not Tuesday.", CORRECTION, BOOK, {"day": "thursday"}),
    ("I can't do Tuesday, Wednesday works.", CORRECTION, BOOK, {"day": "wednesday"}),
    ("Tuesday morning, no, Thursday afternoon.", CORRECTION, BOOK, THURSDAY_AFTERNOON),
    (
        "Thursday afternoon instead of Tuesday morning.",
        CORRECTION,
        BOOK,
        THURSDAY_AFTERNOON,
    ),
    (
        "Not on Tuesday morning, Thursday afternoon.",
        CORRECTION,
        BOOK,
        THURSDAY_AFTERNOON,
    ),
    ("Actually, 3pm.", CORRECTION, BOOK, {"time": "15:00"}),
    ("Actually, make that 25.00.", CORRECTION, REFUND, {"amount_cents": 2500}),
    ("Make it forty bucks.", CORRECTION, REFUND, {"amount_cents": 4000}),
    (
        "Actually, twenty-five dollars and fifty cents.",
        CORRECTION,
        REFUND,
        {"amount_cents": 2550},
    ),
    ("Actually, the order number is 4513.", CORRECTION, REFUND, {"order_number": "4513"}),
    # Explicit confirmations
    ("yes", CONFIRM, None, {}),
    ("Yeah.", CONFIRM, None, {}),
    ("Yep, go ahead.", CONFIRM, None, {}),
    ("Yes please.", CONFIRM, None, {}),
    ("I confirm.", CONFIRM, None, {}),
    ("Confirm.", CONFIRM, None, {}),
    ("Go ahead.", CONFIRM, None, {}),
    ("Please do.", CONFIRM, None, {}),
    ("Do it.", CONFIRM, None, {}),
    ("Book it.", CONFIRM, BOOK, {}),
    ("Book the appointment.", CONFIRM, BOOK, {}),
    ("Confirm the booking.", CONFIRM, BOOK, {}),
    ("That's right, book it.", CONFIRM, BOOK, {}),
    ("Correct, go ahead.", CONFIRM, None, {}),
    ("That's correct.", CONFIRM, None, {}),
    ("Perfect, book it.", CONFIRM, BOOK, {}),
    ("Okay, go ahead.", CONFIRM, None, {}),
    ("No problem, go ahead.", CONFIRM, None, {}),
    ("Go ahead with the refund.", CONFIRM, REFUND, {}),
    ("Yes, refund it.", CONFIRM, REFUND, {}),
    ("Absolutely.", CONFIRM, None, {}),
    # Positive talk that confirms nothing
    ("Okay.", POSITIVE, None, {}),
    ("ok", POSITIVE, None, {}),
    ("Alright.", POSITIVE, None, {}),
    ("Sure.", POSITIVE, None, {}),
    ("Sure, maybe.", POSITIVE, None, {}),
    ("That could work.", POSITIVE, None, {}),
    ("I guess.", POSITIVE, None, {}),
    ("Probably.", POSITIVE, None, {}),
    ("Sounds good.", POSITIVE, None, {}),
    ("Great!", POSITIVE, None, {}),
    ("Nice.", POSITIVE, None, {}),
    ("I think so.", POSITIVE, None, {}),
    ("Let me think.", POSITIVE, None, {}),
    ("Right.", POSITIVE, None, {}),
    ("Mm-hmm.", POSITIVE, None, {}),
    ("Thank you.", POSITIVE, None, {}),
    ("Yes, I think so, maybe.", POSITIVE, None, {}),
    ("Yes, book it, I guess.", POSITIVE, BOOK, {}),
    ("Yeah, probably, go ahead.", POSITIVE, None, {}),
    ("Hmm, yes.", POSITIVE, None, {}),
    ("Yes, wait.", POSITIVE, None, {}),
    ("Yes, but I'm not sure.", POSITIVE, None, {}),
    # Declines
    ("No.", DECLINE, None, {}),
    ("no thanks", DECLINE, None, {}),
    ("Don't book it.", DECLINE, BOOK, {}),
    ("Do not book anything.", DECLINE, BOOK, {}),
    ("I don't want a refund.", DECLINE, REFUND, {}),
    ("Not yet.", DECLINE, None, {}),
    ("Cancel that.", DECLINE, None, {}),
    ("Never mind.", DECLINE, None, {}),
    ("Stop.", DECLINE, None, {}),
    ("That's not right.", DECLINE, None, {}),
    ("Yes, no, wait.", DECLINE, None, {}),
    ("No, don't confirm.", DECLINE, None, {}),
    # Unsupported
    ("Can you cancel my subscription?", UNSUPPORTED, None, {}),
    ("Transfer me to a person.", UNSUPPORTED, None, {}),
    ("I want to talk to a manager.", UNSUPPORTED, None, {}),
    ("What's the weather on Tuesday?", UNSUPPORTED, None, {}),
    ("I need to change my address.", UNSUPPORTED, None, {}),
    ("Reschedule my appointment to Friday.", UNSUPPORTED, None, {}),
    ("Cancel my booking on Tuesday.", UNSUPPORTED, None, {}),
    ("Where is my order?", UNSUPPORTED, None, {}),
    ("Can you tell me a joke?", UNSUPPORTED, None, {}),
    ("I need help with my bill.", UNSUPPORTED, None, {}),
    # Unclear
    ("", UNCLEAR, None, {}),
    ("uh", UNCLEAR, None, {}),
    (".", UNCLEAR, None, {}),
    ("Um, so", UNCLEAR, None, {}),
    ("Good morning.", UNCLEAR, None, {}),
    ("Hello?", UNCLEAR, None, {}),
    ("Wait.", UNCLEAR, None, {}),
    ("Hmm.", UNCLEAR, None, {}),
    ("I'm not sure.", UNCLEAR, None, {}),
    ("I don't know.", UNCLEAR, None, {}),
    ("Could you repeat that?", UNCLEAR, None, {}),
    ("Refined.", UNCLEAR, None, {}),
]


def check(case: Case) -> None:
    text, kind, action, args = case
    understood = understand(text)
    assert (understood.kind, understood.action, understood.args) == (kind, action, args)


@pytest.mark.parametrize("case", SCRIPTED, ids=lambda case: case[0])
def test_it_understands_every_scripted_caller_line(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", WHISPERED, ids=lambda case: case[0])
def test_it_understands_the_scripted_lines_as_whisper_writes_them(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", UTTERANCES, ids=lambda case: case[0])
def test_it_understands_what_callers_say(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(
    ("text", "heard"),
    [
        (
            "I want a refund on order number four five one two, forty dollars.",
            {"order_number": "four five one two", "amount_cents": "forty dollars"},
        ),
        (
            "I want a refund on order number 4512, $40.",
            {"order_number": "4512", "amount_cents": "$40"},
        ),
        ("Refined order number 4,512.", {"order_number": "4,512"}),
        ("Refund order number for 5.1 to.", {"order_number": "for 5.1 to"}),
        ("Actually, make that twenty-five dollars.", {"amount_cents": "twenty-five dollars"}),
        ("Tuesday, MORNING.", {"day": "Tuesday", "part_of_day": "MORNING"}),
        ("Thurs p.m.", {"day": "Thurs", "part_of_day": "p.m."}),
        (
            "Half past two in the afternoon.",
            {"part_of_day": "afternoon", "time": "Half past two"},
        ),
        ("At 930 am.", {"time": "930 am"}),
    ],
)
def test_it_keeps_the_fragment_each_value_was_heard_as(text: str, heard: dict[str, str]) -> None:
    assert understand(text).heard == heard


@pytest.mark.parametrize(
    ("text", "time"),
    [
        ("at 9:30", "09:30"),
        ("at 9.30", "09:30"),
        ("930 am", "09:30"),
        ("nine thirty", "09:30"),
        ("nine oh five", "09:05"),
        ("ten forty five", "10:45"),
        ("two p.m.", "14:00"),
        ("2 PM", "14:00"),
        ("7:00 PM", "19:00"),
        ("half past two in the afternoon", "14:30"),
        ("quarter to ten", "09:45"),
        ("a quarter past one", "13:15"),
        ("ten past nine", "09:10"),
        ("twenty to three", "14:40"),
        ("at 3", "15:00"),
        ("at 7", "07:00"),
        ("at 12", "12:00"),
        ("at 12 am", "00:00"),
        ("twelve noon", "12:00"),
        ("noon", "12:00"),
        ("at 14:30", "14:30"),
        ("at 1430", "14:30"),
        ("two o'clock", "14:00"),
        ("at 9 in the evening", "21:00"),
        ("Friday evening at 7:30", "19:30"),
        ("Tuesday afternoon at 3", "15:00"),
        ("Tuesday morning at 6", "06:00"),
        ("eleven in the morning", "11:00"),
        # A voice reading "2:00 PM" digit by digit, as Whisper writes it heard by phone.
        ("at 2 0 0 PM", "14:00"),
        ("at 2-0-0-pm", "14:00"),
        ("9 3 0 am", "09:30"),
    ],
)
def test_it_reads_a_time_in_twenty_four_hours(text: str, time: str) -> None:
    assert understand(text).args["time"] == time


@pytest.mark.parametrize(
    "text",
    ["I want two appointments", "that one", "at 25:00", "9 30", "two to four", "2 0 0"],
)
def test_it_reads_no_time_from_a_number_that_is_not_one(text: str) -> None:
    assert "time" not in understand(text).args


@given(st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59))
def test_any_clock_time_with_am_or_pm_reads_back(hour: int, minute: int) -> None:
    said = f"at {(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
    assert understand(said).args["time"] == f"{hour:02d}:{minute:02d}"


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=59))
def test_any_time_said_in_words_with_a_part_of_the_day_reads_back(hour: int, minute: int) -> None:
    minutes = f"oh {int_to_words(minute)}" if minute < 10 else int_to_words(minute)
    said = f"Tuesday at {int_to_words(hour)} {minutes} in the evening"
    assert understand(said).args["time"] == f"{hour % 12 + 12:02d}:{minute:02d}"


@given(
    st.sampled_from(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]),
    st.sampled_from([str.lower, str.upper, str.title]),
    st.sampled_from(["", ",", ".", "?", "!"]),
)
def test_any_weekday_is_read_however_it_is_written(day: str, case: object, mark: str) -> None:
    assert callable(case)
    understood = understand(f"How about {case(day)}{mark}")
    assert understood.args == {"day": day}


CONFIRMATIONS = ["yes", "yes, book it", "go ahead", "confirm", "book it", "yes please"]
HEDGES = ["maybe", "I think", "probably", "I guess", "hmm", "not sure", "so far", "might"]


@given(st.sampled_from(CONFIRMATIONS), st.sampled_from(HEDGES), st.booleans())
def test_a_hedged_confirmation_is_never_a_confirmation(
    confirmation: str, hedge: str, hedge_first: bool
) -> None:
    said = f"{hedge}, {confirmation}." if hedge_first else f"{confirmation}, {hedge}."
    assert understand(said).kind is POSITIVE


@pytest.mark.parametrize(
    "text",
    ["Sounds good so far.", "Hmm, maybe.", "Okay.", "Great.", "Sounds good.", "That works."],
)
def test_positive_talk_is_never_a_confirmation(text: str) -> None:
    assert understand(text).kind is POSITIVE


@given(
    st.sampled_from(["monday", "tuesday", "friday"]),
    st.sampled_from(["morning", "afternoon", "evening"]),
)
def test_asking_to_book_a_slot_is_a_request_not_a_confirmation(day: str, part: str) -> None:
    understood = understand(f"Book me something {day} {part}, please.")
    assert (understood.kind, understood.args) == (REQUEST, {"day": day, "part_of_day": part})


def test_an_unsupported_request_carries_nothing_to_act_on() -> None:
    understood = understand("Can you reschedule my Tuesday morning appointment to Friday?")
    assert (understood.kind, understood.action, understood.args) == (UNSUPPORTED, None, {})
    assert understood.cue == "reschedule"


def test_a_refund_keeps_only_refund_values() -> None:
    understood = understand("Refund order 4512 from my Tuesday morning visit, $40.")
    assert (understood.action, understood.args) == (REFUND, REFUND_4512_40)


def test_an_understanding_cannot_be_changed_after_the_fact() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        understand("yes").kind = DECLINE  # type: ignore[misc]


@given(st.text(max_size=80))
def test_any_text_is_understood_with_each_value_traced_to_its_fragment(text: str) -> None:
    understood = understand(text)
    assert understood.heard.keys() == understood.args.keys()
    assert all(fragment in text for fragment in understood.heard.values())
    allowed = {Action.BOOK: BOOK_KEYS, Action.REFUND: REFUND_KEYS, None: ()}[understood.action]
    assert set(understood.args) <= set(allowed)
    if understood.args:
        assert understood.kind in (REQUEST, CORRECTION)


@pytest.mark.parametrize(
    "text",
    [
        "Can I get my money back if I cancel?",
        "What happens if I cancel?",
        "Do you give refunds if I reschedule?",
        "Is there a fee if I'm late?",
        "What happens if I don't show up?",
    ],
)
def test_asking_what_would_happen_if_is_a_policy_question_not_a_request_or_a_no(text: str) -> None:
    understood = understand(text)
    assert (understood.kind, understood.action) == (UnderstandingKind.QUESTION, None)
    assert understood.cue_kind == "business_fact" and understood.args == {}


@pytest.mark.parametrize(
    ("text", "kind", "action"),
    [
        ("Can I get a refund for order 4512?", REQUEST, REFUND),
        ("I want my money back", REQUEST, REFUND),
        ("Can I cancel?", DECLINE, None),
    ],
)
def test_the_act_itself_is_still_asked_for_or_declined(
    text: str, kind: UnderstandingKind, action: Action | None
) -> None:
    understood = understand(text)
    assert (understood.kind, understood.action) == (kind, action)
