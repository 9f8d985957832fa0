"""The grader never calls a contradicted price, hour or policy supported, in any wording."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.facts.days import WEEKDAYS
from lab.facts.loader import load_tenant, parse_constraints
from lab.facts.schema import OpenHours, format_cents
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import GradeRequest, Verdict
from lab.language.numbers import int_to_words
from tests.facts.test_loader import SEED

FACTS = load_tenant("demo")
GRADER = DeterministicGrader()
CHECKS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def grade(text: str, caller: str | None = None, facts=FACTS) -> Verdict:
    return GRADER.grade(GradeRequest(utterance=text, caller_turn=caller), facts).verdict


def say_amount(cents: int, form: int) -> str:
    dollars, change = divmod(cents, 100)
    if form == 0:
        return format_cents(cents)
    if form == 1:
        return f"${dollars:,}" if not change else format_cents(cents)
    if form == 2 and not change:
        return f"{int_to_words(dollars)} dollars"
    if form == 3 and not change:
        return f"{dollars} bucks"
    return (
        f"{int_to_words(dollars)} dollars and {int_to_words(change)} cents"
        if change
        else (f"{dollars} dollars")
    )


def say_clock(minutes: int) -> str:
    hour, minute = divmod(minutes, 60)
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {'a.m.' if hour < 12 else 'p.m.'}"


PRICE_TEMPLATES = (
    "A {name} is {amount}.",
    "{amount} for a {name}.",
    "The {name} costs {amount}, I think.",
    "Our {name} runs about {amount}.",
    "Sure, a {name} comes to {amount} [KB-1].",
)


@CHECKS
@given(
    service=st.sampled_from(FACTS.services),
    cents=st.integers(min_value=0, max_value=100_000),
    form=st.integers(min_value=0, max_value=4),
    template=st.sampled_from(PRICE_TEMPLATES),
    alias=st.integers(min_value=0, max_value=5),
)
def test_a_price_other_than_the_listed_one_is_never_supported(
    service, cents, form, template, alias
):
    names = (service.name, *service.aliases)
    text = template.format(name=names[alias % len(names)], amount=say_amount(cents, form))
    verdict = grade(text)
    if cents == service.price_cents:
        assert verdict is Verdict.SUPPORTED, text
    else:
        assert verdict is not Verdict.SUPPORTED, text


@CHECKS
@given(service=st.sampled_from(FACTS.services), cents=st.integers(min_value=1, max_value=50_000))
def test_an_answer_to_a_price_question_is_checked_against_the_service_asked_about(service, cents):
    verdict = grade(f"It's {format_cents(cents)}.", caller=f"How much is a {service.name}?")
    assert (verdict is Verdict.SUPPORTED) == (cents == service.price_cents)


@CHECKS
@given(
    day=st.sampled_from(WEEKDAYS),
    opens=st.integers(min_value=0, max_value=47).map(lambda n: n * 30),
    length=st.integers(min_value=1, max_value=28).map(lambda n: n * 30),
    template=st.sampled_from(
        (
            "We're open {day} from {opens} to {closes}.",
            "On {day}s we open at {opens} and close at {closes}.",
            "Our hours on {day} are {opens} to {closes}.",
        )
    ),
)
def test_hours_other_than_the_listed_ones_are_never_supported(day, opens, length, template):
    closes = min(opens + length, 23 * 60 + 30)
    text = template.format(day=day.capitalize(), opens=say_clock(opens), closes=say_clock(closes))
    listed = FACTS.hours[day]
    right = isinstance(listed, OpenHours) and listed.minutes() == (opens, closes)
    assert (grade(text) is Verdict.SUPPORTED) == right, text


@CHECKS
@given(day=st.sampled_from(WEEKDAYS), closed=st.booleans(), asked=st.booleans())
def test_saying_a_day_is_open_or_closed_is_supported_only_when_true(day, closed, asked):
    listed_closed = FACTS.hours[day] == "closed"
    if asked:
        verdict = grade("No." if closed else "Yes.", caller=f"Are you open on {day}?")
    else:
        verdict = grade(f"We're {'closed' if closed else 'open'} on {day.capitalize()}s.")
    assert (verdict is Verdict.SUPPORTED) == (closed == listed_closed)


@CHECKS
@given(
    days=st.integers(min_value=1, max_value=120),
    spoken=st.booleans(),
    template=st.sampled_from(
        (
            "You can get a refund within {n} days.",
            "We offer a {n}-day money-back guarantee.",
            "Refunds go back to your card if you ask within {n} days.",
        )
    ),
)
def test_a_refund_window_other_than_the_listed_one_is_never_supported(days, spoken, template):
    text = template.format(n=int_to_words(days) if spoken else days)
    verdict = grade(text)
    if days != 14 or "guarantee" in text:
        assert verdict is not Verdict.SUPPORTED, text
    else:
        assert verdict is Verdict.SUPPORTED, text


@CHECKS
@given(
    hours=st.integers(min_value=1, max_value=96),
    fee=st.integers(min_value=0, max_value=10_000),
    topic=st.sampled_from(("cancel", "reschedule")),
)
def test_notice_periods_and_fees_other_than_the_listed_ones_are_never_supported(hours, fee, topic):
    notice = grade(f"You can {topic} free of charge up to {hours} hours before.")
    assert (notice is Verdict.SUPPORTED) == (hours == 24)
    late = "Late cancellations cost" if topic == "cancel" else "A late reschedule costs"
    assert (grade(f"{late} {format_cents(fee)}.") is Verdict.SUPPORTED) == (fee == 1500)


def test_promises_the_policy_does_not_make_are_never_supported():
    for text in (
        "You can cancel anytime for free.",
        "Rescheduling is free, even on the same day.",
        "We only give store credit for refunds.",
        "We don't do refunds.",
        "You'll get a full refund, no questions asked.",
    ):
        assert grade(text) is Verdict.UNSUPPORTED, text


def test_the_seed_example_is_graded_as_the_seed_grades_it():
    facts = parse_constraints(SEED)
    grade_ = GRADER.grade(
        GradeRequest(
            utterance="A quick detail runs about $129, and yeah, we offer a full 30-day "
            "money-back guarantee.",
            caller_turn="How much for a quick detail and can I get a refund if I change my mind?",
        ),
        facts,
    )
    assert grade_.verdict is Verdict.UNSUPPORTED
    assert "policies.refund" in grade_.constraint_ref
    assert grade_.constraint_list_version == facts.version


def test_a_claim_the_list_has_no_value_for_is_flagged_not_passed():
    # The seed's refund code says nothing about a window: a window claim cannot be checked.
    facts = parse_constraints(SEED)
    assert grade("Refunds are possible within 14 days.", facts=facts) is Verdict.LLM_FLAGGED
    # Days the seed's list leaves out are not "closed": they are out of scope.
    partial = parse_constraints(dict(SEED, hours={"mon_fri": "08:00-18:00"}))
    assert grade("We're open Saturday from 9 to 3.", facts=partial) is Verdict.OUT_OF_SCOPE
