"""Issue 32: constraint lists as businesses write them, and numbers and hours as people say them.

The list below is written the way a heating and plumbing firm writes one (a split Saturday, an
exception on Thursdays, a price "1,250", policies as objects, a first-time-customer promotion).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.facts.loader import load_constraints, parse_constraints
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import GradeRequest, Verdict

S, U, F = Verdict.SUPPORTED, Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED
GRADER = DeterministicGrader()
WRITTEN = {
    "tenant": "warmhouse",
    "version": "warmhouse_v1",
    "business": "Warmhouse Heating",
    "price_list": [
        {"id": "px_diag", "service": "diagnostic visit", "price_usd": 89.50},
        {"id": "px_drain", "service": "drain cleaning", "price_usd": 150},
        {"id": "px_tuneup", "service": "furnace tune-up", "price_usd": 109.65},
        {"id": "px_heater", "service": "water heater install", "price_usd": "1,250"},
        {"id": "px_boiler", "service": "boiler service", "price_usd": 1062.50},
        {
            "id": "px_flush",
            "service": "tank flush",
            "price_usd": 79,
            "aliases": ["sediment flush", "quick flush"],
        },
    ],
    "hours": {
        "mon_fri": "07:30-17:30",
        "thu": "07:30-20:00",
        "sat": "08:00-12:00, 14:00-17:00",
        "sun": "closed",
    },
    "policies": {
        "after_hours": {"surcharge_usd": 95, "applies": "after 17:30 and on weekends"},
        "cancellation": {"free_until_hours_before": 24, "late_fee_usd": 50},
        "warranty": {"labor_years": 1, "parts_years": 5},
        "diagnostic_fee": "waived_if_you_go_ahead_with_the_repair",
        "deposit": "non-refundable 10 percent deposit on installations",
        "estimates": "free estimates on installations",
        "payment": "due_on_completion_cards_or_check_invoices_net_30_for_businesses",
    },
    "capabilities": ["book_appointment", "dispatch_technician", "email_invoice_copies"],
    "promotions": [
        {
            "id": "welcome",
            "description": "15% off your first visit",
            "percent_off": 15,
            "eligibility": "first-time customers",
        },
        {
            "id": "winter",
            "description": "Winter tune-up special",
            "amount_off_usd": 20,
            "service": "px_tuneup",
            "eligibility": "returning customers",
        },
    ],
}
FACTS = parse_constraints(WRITTEN)
DETAILING = load_constraints(
    Path(__file__).resolve().parents[2] / "fixtures" / "seed-detailing.json"
)


def grade(text: str, caller: str | None = None, facts=FACTS) -> Verdict:
    return GRADER.grade(GradeRequest(utterance=text, caller_turn=caller), facts).verdict


def test_the_seeds_worked_example_is_unsupported():
    assert grade("A quick detail runs about $129.", facts=DETAILING) is U
    assert grade("A quick detail runs about $149.", facts=DETAILING) is S


LISTS = [
    # Aliases name their service; a price is matched to a service by its words, or flagged.
    (None, "A sediment flush is seventy-nine dollars.", S),
    (None, "A quick flush is eighty-nine dollars.", U),
    (None, "A water heater install is $1,250.", S),
    (None, "A water heater install is $1,205.", U),
    (None, "The heater install is about eleven hundred.", U),
    (None, "The flush runs about seventy-nine.", S),
]
NUMBERS = [
    (None, "The furnace tune-up is a hundred nine sixty-five.", S),
    (None, "The furnace tune-up is a hundred nine ninety-five.", U),
    (None, "The boiler service is ten sixty-two fifty.", S),
    (None, "The boiler service is ten sixty-five fifty.", U),
    (None, "The water heater install is twelve fifty.", S),
    (None, "The water heater install is eleven fifty.", U),
    (None, "A water heater install runs between two and three hundred.", U),
    (None, "A water heater install runs between eleven and thirteen hundred.", S),
    (None, "Two drain cleanings would be three hundred.", S),
    (None, "Two drain cleanings would be one fifty.", U),
    (None, "A drain cleaning and a diagnostic visit come to two thirty-nine fifty.", S),
    (None, "A drain cleaning and a diagnostic visit come to two hundred.", U),
    (None, "The diagnostic visit is eighty-nine fifty.", S),
    (None, "The diagnostic visit is ninety-nine fifty.", U),
]
HOURS = [
    (
        None,
        "We're open Monday through Friday seven thirty to five thirty, and till eight on "
        "Thursdays.",
        S,
    ),
    (
        None,
        "We're open Monday through Friday seven thirty to five thirty, and till nine on Thursdays.",
        U,
    ),
    (None, "On Saturdays it's eight to twelve, then again two to five.", S),
    (None, "On Saturdays it's eight to twelve, then again one to five.", U),
    (None, "We're open straight through on Saturdays, so twelve thirty is fine.", U),
    (None, "We're open straight through on Saturdays.", U),
    ("Are you open Saturday at three?", "Yes, we're open at three on Saturday.", S),
    ("Are you open Saturday at one?", "Yes, we're open at one on Saturday.", U),
]


@pytest.mark.parametrize(("caller", "text", "verdict"), LISTS + NUMBERS + HOURS)
def test_lists_numbers_and_hours_as_people_write_and_say_them(caller, text, verdict):
    assert grade(text, caller) is verdict


POLICY_OBJECTS = [
    (None, "There's a $95 surcharge after hours.", S),
    (None, "After hours there's a ninety-five dollar surcharge.", S),
    (None, "There's a $75 surcharge after hours.", U),
    (None, "Free cancellation up to 24 hours before.", S),
    (None, "Free cancellation up to 48 hours before.", U),
    (None, "We never charge for cancellations.", U),
    (None, "If you cancel late there's a $50 fee.", S),
    (None, "If you cancel late there's a $30 fee.", U),
    (None, "You get one year on the labor.", S),
    (None, "You get five years on the labor.", U),
    (None, "Parts are covered for five years.", S),
    (None, "Parts are covered for two years.", U),
    # Restating a string policy passes; stretching its scope does not.
    (None, "The deposit is non-refundable.", S),
    (None, "The deposit is refundable.", U),
    (None, "Estimates on installations are free.", S),
    (None, "Repair estimates are free too.", U),
]
NOT_A_MAGNET = [
    # "diagnostic" names a policy and a service: the price is checked as a price.
    (None, "The diagnostic visit is ninety-nine fifty.", U),
    (None, "The diagnostic fee is waived if you go ahead with the repair.", S),
    (None, "The diagnostic fee is waived even if you don't go ahead.", U),
]
PROMOTIONS = [
    (None, "First-time customers get fifteen percent off.", S),
    (None, "New customers get 15% off their first visit.", S),
    (None, "Returning customers get fifteen percent off too.", U),
    (None, "Seniors get fifteen percent off.", U),
    (None, "Everyone gets fifteen percent off.", U),
    (None, "Returning customers get $20 off a furnace tune-up.", S),
    (None, "First-time customers get $20 off a furnace tune-up.", U),
    (None, "Returning customers get $20 off a drain cleaning.", U),
]


@pytest.mark.parametrize(("caller", "text", "verdict"), POLICY_OBJECTS + NOT_A_MAGNET + PROMOTIONS)
def test_policies_are_read_field_by_field_and_promotions_with_who_and_what(caller, text, verdict):
    assert grade(text, caller) is verdict


def test_durations_are_never_compared_with_a_warrantys_years():
    assert grade("The labor takes about thirty minutes.") is not U


MAGNETS = [
    # Invoices and durations are not the payment policy's; payment claims still are.
    (None, "The job takes about two hours.", F),
    (None, "Payment is due on completion.", S),
    (None, "Payment is due upfront.", U),
    (None, "We don't take checks.", U),
]
CAPABILITIES = [
    (None, "I'm dispatching a technician to your address now.", S),
    (None, "I've dispatched a tech, they'll be there soon.", S),
    (None, "I'll send a technician out this afternoon.", S),
    (None, "I can dispatch a plumber right away.", S),
    (None, "I've emailed a copy of invoice INV-30412.", S),
    (None, "I'm emailing you a copy of the invoice now.", S),
    (None, "I emailed the invoice copy this morning.", S),
    (None, "I'll text you a copy of the invoice.", U),
]


@pytest.mark.parametrize(("caller", "text", "verdict"), MAGNETS + CAPABILITIES)
def test_each_sentence_meets_the_checks_for_what_it_claims_in_the_businesss_words(
    caller, text, verdict
):
    assert grade(text, caller) is verdict


def test_the_scripted_agents_own_goodbye_needs_no_grounding():
    goodbye = "It sounds like we're done, so I'll end the call here. Goodbye."
    assert grade(goodbye) is S


def test_a_promotion_is_checked_against_its_dates_when_the_turn_has_one():
    from datetime import date

    facts = parse_constraints(
        dict(
            WRITTEN,
            promotions=[
                {
                    "id": "spring",
                    "percent_off": 10,
                    "valid_from": "2026-03-01",
                    "valid_until": "2026-05-31",
                }
            ],
        )
    )
    said = "Everyone gets ten percent off this spring."
    on = {
        day: GradeRequest(utterance=said, on=date.fromisoformat(day))
        for day in ("2026-04-02", "2026-07-01")
    }
    assert GRADER.grade(on["2026-04-02"], facts).verdict is S
    assert GRADER.grade(on["2026-07-01"], facts).verdict is U
    assert GRADER.grade(GradeRequest(utterance=said), facts).verdict is S
