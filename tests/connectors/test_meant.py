"""A scripted line read as meant: one pure test per kind of meaning, each with the lab's reading
agreeing (kept whole, its cue says why) and misreading (the annotation alone is recorded)."""

from __future__ import annotations

from lab.events.types import Action, Confirmation, UnderstandingKind
from lab.language.understanding import Understanding
from lab.referee.meant import as_meant
from lab.scenarios.meaning import CallerMeaning

K = UnderstandingKind
TUESDAY = {"day": "tuesday", "part_of_day": "morning"}


def lab(kind: UnderstandingKind, **fields: object) -> Understanding:
    return Understanding(kind, cue="the words", cue_kind="values", **fields)  # type: ignore[arg-type]


def test_a_request_keeps_the_labs_reading_only_where_it_named_the_same_values():
    meant = CallerMeaning(kind="request", action=Action.BOOK, args=TUESDAY)
    agreeing = lab(K.REQUEST, action=Action.BOOK, args=TUESDAY, heard={"day": "Tuesday"})
    assert as_meant(meant, agreeing) == agreeing
    misread = as_meant(meant, lab(K.REQUEST, action=Action.BOOK, args={"day": "thursday"}))
    assert (misread.kind, misread.action, misread.args) == (K.REQUEST, Action.BOOK, TUESDAY)
    assert misread.heard == {} and misread.cue is None
    # Words the lab took for a question still carry the request the caller meant.
    assert as_meant(meant, lab(K.QUESTION)).args == TUESDAY


def test_a_correction_carries_only_what_it_changes():
    meant = CallerMeaning(kind="correction", action=Action.REFUND, changes={"amount_cents": 2500})
    read = as_meant(meant, lab(K.REQUEST, action=Action.REFUND, args={"amount_cents": 250}))
    assert (read.kind, read.args, read.confirmation) == (
        K.CORRECTION,
        {"amount_cents": 2500},
        Confirmation.NOT_CONFIRM,
    )


def test_a_confirmation_is_explicit_even_in_words_the_lab_missed():
    meant = CallerMeaning(kind="confirmation")
    agreeing = lab(K.CONFIRM, confirmation=Confirmation.CONFIRM)
    assert as_meant(meant, agreeing) == agreeing
    read = as_meant(meant, lab(K.UNCLEAR))
    assert (read.kind, read.confirmation, read.cue_kind) == (
        K.CONFIRM,
        Confirmation.CONFIRM,
        "explicit",
    )


def test_a_non_confirmation_never_confirms_whatever_the_lab_heard():
    meant = CallerMeaning(kind="non_confirmation")
    hedge = lab(K.POSITIVE, confirmation=Confirmation.UNCLEAR)
    assert as_meant(meant, hedge) == hedge
    read = as_meant(meant, lab(K.CONFIRM, confirmation=Confirmation.CONFIRM))
    assert read.kind is K.POSITIVE and read.confirmation is not Confirmation.CONFIRM


def test_an_interruption_corrects_when_it_names_a_change_and_else_only_stops():
    friday = {"day": "friday", "part_of_day": "morning"}
    meant = CallerMeaning(kind="interruption", action=Action.BOOK, changes=friday)
    read = as_meant(meant, lab(K.CONFIRM, confirmation=Confirmation.CONFIRM))
    assert (read.kind, read.args, read.confirmation) == (
        K.CORRECTION,
        friday,
        Confirmation.NOT_CONFIRM,
    )
    stop = as_meant(CallerMeaning(kind="interruption"), lab(K.CONFIRM))
    assert stop.kind is K.DECLINE and not stop.args


def test_a_question_keeps_the_labs_topic_and_never_moves_the_request():
    meant = CallerMeaning(kind="question")
    asked = lab(K.UNSUPPORTED, confirmation=Confirmation.NOT_CONFIRM)
    assert as_meant(meant, asked) == asked
    read = as_meant(meant, lab(K.REQUEST, action=Action.BOOK, args=TUESDAY))
    assert (read.kind, read.action, read.args, read.cue_kind) == (
        K.QUESTION,
        None,
        {},
        "business_fact",
    )


def test_other_moves_nothing():
    meant = CallerMeaning(kind="other")
    read = as_meant(meant, lab(K.CORRECTION, action=Action.BOOK, args=TUESDAY))
    assert (read.kind, read.action, read.args) == (K.UNCLEAR, None, {})
    assert read.confirmation is not Confirmation.CONFIRM
