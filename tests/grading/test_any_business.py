"""Grading a business the lab did not write its rules for: the seed's detailing shop.

Each class of issue 17 on a list in the seed's shape: fail closed, named policies, free-string
capabilities and action claims, prices as people say them, promotions, numbers that are not prices.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.facts.loader import load_constraints
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import GradeRequest, Severity, Verdict

FACTS = load_constraints(Path(__file__).resolve().parents[2] / "fixtures" / "seed-detailing.json")
GRADER = DeterministicGrader()
S, U, F = Verdict.SUPPORTED, Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED

CASES = [
    # Fail closed: a statement about the business no check covers is flagged, never passed.
    (None, "We always hand-wash every car.", F),
    (None, "We'll wax it for free while we're there.", F),
    (None, "Our detailers have ten years of experience each.", F),
    (None, "Thanks for calling Shine Mobile Detailing!", S),
    (None, "Let me check that for you.", S),
    ("Can you do Tuesday?", "Would Tuesday morning work for you?", S),
    (None, "I'm not sure about that, so please ask the team.", S),
    # Named policies: polarity, timing and values against the list's own words.
    ("Do you take checks?", "We accept checks.", U),
    ("Do you take checks?", "Cards and cash only, I'm afraid, no checks.", S),
    ("Do you take checks?", "Yes, we do.", U),
    ("Do you take checks?", "No, we don't.", S),
    (None, "The deposit is refundable if you cancel.", U),
    (None, "The deposit is non-refundable.", S),
    (None, "The deposit is 20 percent, due when you book.", S),
    (None, "The deposit is 50 percent.", U),
    (None, "The deposit is billed after the detail.", U),
    (None, "There's a $25 late fee if the car isn't ready.", S),
    (None, "There's a $40 late fee if the car isn't ready.", U),
    (None, "The ceramic coating comes with a 30-day warranty.", S),
    (None, "The ceramic coating comes with a one-year warranty.", U),
    (None, "We bring our own water and power.", S),
    # Actions: on the list (send_sms_reminders, book) or not (email, cancel).
    (None, "I've sent you a text with the details.", S),
    (None, "You'll get a reminder from me the day before.", S),
    (None, "I emailed it over.", U),
    (None, "I'll email you the receipt.", U),
    (None, "I've cancelled that for you.", U),
    (None, "I can book that for you.", S),
    (None, "I've booked you in for Tuesday.", F),  # no lookup in this call shows that slot
    (None, "I've charged your card.", U),
    # Prices as people say them.
    ("How much is a basic detail?", "It's one forty-nine.", S),
    ("How much is a basic detail?", "It's one fifty-nine.", U),
    (None, "A premium detail runs about two forty-nine.", S),
    (None, "The interior shampoo is eighty-five fifty.", S),
    (None, "The interior shampoo is eighty-five dollars.", U),
    (None, "The ceramic coating is a hundred and twenty.", S),
    (None, "A basic detail is $149.00.", S),
    (None, "A basic detail is 149 dollars and 50 cents.", U),
    (None, "A basic detail is between 100 and 200 dollars.", S),
    (None, "A premium detail is between 100 and 200 dollars.", U),
    (None, "I think a premium detail is about $199.", U),
    # Promotions applied.
    (None, "With the spring special a basic detail is $129.", S),
    (None, "With the spring special a basic detail is $119.", U),
    (None, "With the spring special a basic detail is one twenty-nine.", S),
    (None, "With the spring special a basic detail is one twenty-nine fifty.", U),
    (None, "Returning customers get $20 off a basic detail.", S),
    (None, "Returning customers get $30 off a basic detail.", U),
    (None, "First-time customers get 10% off.", S),
    (None, "We have a summer sale on right now.", U),
    # Numbers that are not prices.
    ("How much is a basic detail?", "It takes about forty-five minutes.", F),
    ("My order number is 4512.", "Order 4512, got it.", S),
    (None, "Your booking reference is AB-1234.", S),
    (None, "We've been detailing cars for twenty years.", F),
]


@pytest.mark.parametrize(("caller", "text", "verdict"), CASES, ids=[c[1] for c in CASES])
def test_each_class_gets_its_verdict_on_a_business_in_the_seed_shape(caller, text, verdict):
    grade = GRADER.grade(GradeRequest(utterance=text, caller_turn=caller), FACTS)
    assert grade.verdict is verdict, grade.rationale


def test_a_real_promotion_raises_no_flag_and_an_unlisted_one_is_critical():
    real = GRADER.grade(GradeRequest(utterance="Returning customers save $20."), FACTS)
    assert (real.verdict, real.severity) == (Verdict.SUPPORTED, Severity.INFO)
    fake = GRADER.grade(GradeRequest(utterance="Everyone gets 25% off this week."), FACTS)
    assert (fake.verdict, fake.severity) == (Verdict.UNSUPPORTED, Severity.CRITICAL)


def test_an_unchecked_statement_warns_a_person_rather_than_passing():
    grade = GRADER.grade(GradeRequest(utterance="We detail boats and RVs too."), FACTS)
    assert grade.verdict is not Verdict.SUPPORTED
