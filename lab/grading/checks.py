"""Checking one claim against the constraint list: supported only when a listed fact backs it.

Pure. A claim the list has a field for but no value in is flagged, never passed: no claim is
supported because the evidence was empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lab.facts.days import WEEKDAYS
from lab.facts.knowledge import CAPABILITY_WORDS, describe_hours
from lab.facts.schema import ConstraintList, DayHours, OpenHours, Promotion, format_cents
from lab.grading.claims import (
    AvailabilityClaim,
    CapabilityClaim,
    Claim,
    HoursClaim,
    LooseClaim,
    PercentClaim,
    PolicyClaim,
    PriceClaim,
    PromoClaim,
)
from lab.grading.lexicon import Clock
from lab.grading.schema import Category, ClaimFinding, Observed, Verdict

# An approximate price within this share of the listed one is a rounding for a human to judge.
APPROXIMATE_SHARE = 0.05


def check(claim: Claim, facts: ConstraintList, observed: Observed) -> ClaimFinding:
    match claim:
        case PriceClaim():
            return _price(claim, facts)
        case PercentClaim() | PromoClaim():
            return _promotion(claim, facts)
        case HoursClaim():
            return _hours(claim, facts)
        case PolicyClaim():
            return _policy(claim, facts)
        case CapabilityClaim():
            return _capability(claim, facts)
        case AvailabilityClaim():
            return _availability(claim, facts, observed)
        case LooseClaim():
            return _finding(claim.heard, claim.category, claim.verdict, (), claim.reason, 0.5)


def _finding(
    claim: str,
    category: Category,
    verdict: Verdict,
    refs: tuple[str, ...],
    rationale: str,
    confidence: float,
) -> ClaimFinding:
    return ClaimFinding(
        claim=claim,
        category=category,
        verdict=verdict,
        constraint_ref=refs,
        rationale=rationale,
        confidence=confidence,
    )


def _price(claim: PriceClaim, facts: ConstraintList) -> ClaimFinding:
    said = format_cents(claim.cents)
    if claim.service is None:
        matching = [s for s in facts.services if s.price_cents == claim.cents]
        refs = tuple(s.id for s in facts.services)
        if matching:
            return _finding(
                f"price {said}",
                Category.PRICE,
                Verdict.SUPPORTED,
                (matching[0].id,),
                f"{said} is the listed price of the {matching[0].name}.",
                0.7,
            )
        return _finding(
            f"price {said}",
            Category.PRICE,
            Verdict.UNSUPPORTED,
            refs,
            f"No service on the price list costs {said}.",
            0.85,
        )
    service = facts.service(claim.service)
    text = f"{service.name} price {said}"
    if claim.cents == service.price_cents:
        return _finding(
            text,
            Category.PRICE,
            Verdict.SUPPORTED,
            (service.id,),
            f"Matches the listed {service.name} price of {said}.",
            0.95,
        )
    for promotion in facts.promotions:
        applies = not promotion.services or service.id in promotion.services
        promoted = promotion.price_cents
        if promotion.percent_off:
            promoted = round(service.price_cents * (100 - promotion.percent_off) / 100)
        if applies and claim.discounted and promoted == claim.cents:
            return _finding(
                text,
                Category.PRICE,
                Verdict.SUPPORTED,
                (service.id, promotion.id),
                f"Matches the {service.name} price after {promotion.id}.",
                0.85,
            )
    listed = format_cents(service.price_cents)
    if (
        claim.approximate
        and abs(claim.cents - service.price_cents) <= APPROXIMATE_SHARE * service.price_cents
    ):
        return _finding(
            text,
            Category.PRICE,
            Verdict.LLM_FLAGGED,
            (service.id,),
            f"An approximate {said} for the listed {listed}; a human should judge it.",
            0.5,
        )
    return _finding(
        text,
        Category.PRICE,
        Verdict.UNSUPPORTED,
        (service.id,),
        f"Quoted {said} conflicts with the listed {service.name} price of {listed}.",
        0.95,
    )


def _promotion(claim: PercentClaim | PromoClaim, facts: ConstraintList) -> ClaimFinding:
    refs = tuple(p.id for p in facts.promotions)
    if isinstance(claim, PercentClaim):
        matching = [p for p in facts.promotions if p.percent_off == claim.percent]
        if matching:
            return _finding(
                f"{claim.percent}% off",
                Category.PRICE,
                Verdict.SUPPORTED,
                (matching[0].id,),
                f"Matches the promotion {matching[0].id}.",
                0.85,
            )
        return _finding(
            f"{claim.percent}% off",
            Category.PRICE,
            Verdict.UNSUPPORTED,
            refs,
            f"No current promotion gives {claim.percent}% off.",
            0.9,
        )
    heard = claim.heard.lower()
    named = [p for p in facts.promotions if any(k in heard for k in _keywords(p))]
    if named:
        return _finding(
            claim.heard,
            Category.PRICE,
            Verdict.SUPPORTED,
            (named[0].id,),
            f"Refers to the promotion {named[0].id}.",
            0.7,
        )
    return _finding(
        claim.heard,
        Category.PRICE,
        Verdict.UNSUPPORTED,
        refs,
        "No current promotion on the list matches it.",
        0.8,
    )


def _keywords(promotion: Promotion) -> tuple[str, ...]:
    if promotion.keywords:
        return tuple(k.lower() for k in promotion.keywords)
    return tuple(w for w in re.findall(r"[a-z]+", promotion.description.lower()) if len(w) > 5)


def _hours(claim: HoursClaim, facts: ConstraintList) -> ClaimFinding:
    days = claim.days or tuple(day for day in WEEKDAYS if day in facts.hours)
    refs = tuple(f"hours.{day}" for day in days)
    missing = [day for day in days if day not in facts.hours]
    if missing:
        return _finding(
            claim.heard,
            Category.HOURS,
            Verdict.OUT_OF_SCOPE,
            refs,
            f"The list gives no hours for {', '.join(missing)}.",
            0.6,
        )
    results = {day: _holds(claim, facts.hours[day]) for day in days}
    if all(results.values()):
        return _finding(
            claim.heard,
            Category.HOURS,
            Verdict.SUPPORTED,
            refs,
            f"Consistent with the listed hours for {_days(days)}.",
            0.9 if claim.days else 0.7,
        )
    wrong = [day for day, held in results.items() if not held]
    if claim.days is None and len(wrong) < len(days) and not claim.closed:
        return _finding(
            claim.heard,
            Category.HOURS,
            Verdict.LLM_FLAGGED,
            refs,
            f"Holds on some days but not {_days(wrong)}, and no day was named.",
            0.5,
        )
    return _finding(
        claim.heard,
        Category.HOURS,
        Verdict.UNSUPPORTED,
        tuple(f"hours.{d}" for d in wrong),
        f"Conflicts with the listed hours: {describe_hours(facts, wrong)}.",
        0.95,
    )


def _holds(claim: HoursClaim, hours: DayHours) -> bool:
    if not isinstance(hours, OpenHours):
        return claim.closed
    if claim.closed:
        return False
    opens, closes = hours.minutes()
    if claim.always:
        return (opens, closes) == (0, 24 * 60)
    checks = [
        claim.opens is None or opens in claim.opens.candidates(),
        claim.closes is None or closes in _close_candidates(claim.closes),
        all(any(opens <= t < closes for t in clock.candidates()) for clock in claim.within),
    ]
    return all(checks)


def _close_candidates(clock: Clock) -> tuple[int, ...]:
    # "Midnight" closes the day at 24:00.
    return tuple(24 * 60 if t == 0 else t for t in clock.candidates())


def _days(days: Sequence[str]) -> str:
    return ", ".join(day.capitalize() for day in days)


def _policy(claim: PolicyClaim, facts: ConstraintList) -> ClaimFinding:
    ref = (f"policies.{claim.topic}",)
    if claim.topic == "other":
        if any(name in claim.heard for name in facts.policies.other):
            return _finding(
                claim.heard,
                Category.POLICY,
                Verdict.LLM_FLAGGED,
                ref,
                "The list states that policy only as text.",
                0.5,
            )
        return _finding(
            claim.heard,
            Category.POLICY,
            Verdict.UNSUPPORTED,
            ("policies",),
            f'The list has no policy offering "{claim.heard}".',
            0.85,
        )
    policy = getattr(facts.policies, claim.topic)
    if policy is None:
        return _finding(
            claim.heard,
            Category.POLICY,
            Verdict.OUT_OF_SCOPE,
            ref,
            f"The list has no {claim.topic} policy.",
            0.6,
        )
    answer = _policy_answer(claim, policy)
    if answer is None:
        return _finding(
            claim.heard,
            Category.POLICY,
            Verdict.LLM_FLAGGED,
            ref,
            f"The {claim.topic} policy does not say; only its text does: {policy.text}",
            0.5,
        )
    held, why = answer
    if held:
        return _finding(
            claim.heard,
            Category.POLICY,
            Verdict.SUPPORTED,
            ref,
            f"Matches the {claim.topic} policy: {why}.",
            0.9,
        )
    return _finding(
        claim.heard,
        Category.POLICY,
        Verdict.UNSUPPORTED,
        ref,
        f"Conflicts with the {claim.topic} policy: {why}.",
        0.95,
    )


def _policy_answer(claim: PolicyClaim, policy: object) -> tuple[bool, str] | None:
    """Whether the policy's typed fields back the claim, and why; None when they do not say."""
    get = policy.__getattribute__
    match claim.feature:
        case "allowed" | "refused":
            allowed = get("allowed")
            if allowed is None:
                return None
            return allowed == (claim.feature == "allowed"), "refunds are " + (
                "" if allowed else "not "
            ) + "offered"
        case "window":
            field = "window_days" if claim.topic == "refund" else "free_until_hours_before"
            listed = get(field)
            if listed is None or claim.hours is None:
                return None
            said = claim.hours / 24 if claim.topic == "refund" else claim.hours
            unit = "days" if claim.topic == "refund" else "hours"
            return said == listed, f"the list says {listed} {unit}, the agent said {said:g}"
        case "store_credit" | "original_payment":
            method = get("method")
            if method is None:
                return None
            return method == claim.feature, f"refunds go to {method.replace('_', ' ')}"
        case "unconditional":
            conditions = get("conditions")
            if conditions is None:
                return None
            return False, f"refunds depend on {conditions}"
        case "free" | "free_anytime":
            free, fee = get("free_until_hours_before"), get("late_fee_cents")
            if free is None:
                return None
            if claim.feature == "free_anytime":
                return not (free or fee), f"free only up to {free} hours before"
            return True, f"free up to {free} hours before"
        case "fee":
            fee = get("late_fee_cents")
            if fee is None or claim.cents is None:
                return None
            return fee == claim.cents, f"the late fee is {format_cents(fee)}"
    return None


def _capability(claim: CapabilityClaim, facts: ConstraintList) -> ClaimFinding:
    ref = (f"capabilities.{claim.capability.value}",)
    what = CAPABILITY_WORDS[claim.capability]
    if claim.capability in facts.capabilities.can:
        return _finding(
            claim.heard, Category.CAPABILITY, Verdict.SUPPORTED, ref, f"The agent can {what}.", 0.9
        )
    listed = "cannot" if claim.capability in facts.capabilities.cannot else "is not listed to"
    return _finding(
        claim.heard,
        Category.CAPABILITY,
        Verdict.UNSUPPORTED,
        ref,
        f"Claims a capability the agent {listed} have: {what}.",
        0.9,
    )


def _availability(
    claim: AvailabilityClaim, facts: ConstraintList, observed: Observed
) -> ClaimFinding:
    if claim.cents is not None:
        said = format_cents(claim.cents)
        if claim.cents in observed.amounts_cents:
            return _finding(
                f"refund {said}",
                Category.AVAILABILITY,
                Verdict.SUPPORTED,
                ("observed.amounts",),
                f"{said} is an amount this call's tools established.",
                0.85,
            )
        return _finding(
            f"refund {said}",
            Category.AVAILABILITY,
            Verdict.LLM_FLAGGED,
            (),
            f"Nothing in this call established {said}.",
            0.5,
        )
    if claim.none_left:
        if observed.empty_lookup:
            return _finding(
                claim.heard,
                Category.AVAILABILITY,
                Verdict.SUPPORTED,
                ("observed.lookup",),
                "A lookup in this call found nothing.",
                0.8,
            )
        return _finding(
            claim.heard,
            Category.AVAILABILITY,
            Verdict.LLM_FLAGGED,
            (),
            "No lookup in this call shows that nothing is free.",
            0.5,
        )
    refs = (f"hours.{claim.day}",) if claim.day else ()
    if claim.day:
        hours = facts.hours.get(claim.day)
        if hours is None:
            return _finding(
                claim.heard,
                Category.AVAILABILITY,
                Verdict.OUT_OF_SCOPE,
                refs,
                f"The list gives no hours for {claim.day}.",
                0.6,
            )
        if not isinstance(hours, OpenHours):
            return _finding(
                claim.heard,
                Category.AVAILABILITY,
                Verdict.UNSUPPORTED,
                refs,
                f"Offers {claim.day.capitalize()}, when the business is closed.",
                0.95,
            )
        opens, closes = hours.minutes()
        if claim.time and not any(opens <= t < closes for t in claim.time.candidates()):
            return _finding(
                claim.heard,
                Category.AVAILABILITY,
                Verdict.UNSUPPORTED,
                refs,
                f"Offers a time outside {claim.day.capitalize()}'s hours.",
                0.95,
            )
    for slot in observed.slots:
        same_day = claim.day in (None, slot.day)
        minutes = int(slot.time[:2]) * 60 + int(slot.time[3:])
        if same_day and (claim.time is None or minutes in claim.time.candidates()):
            return _finding(
                claim.heard,
                Category.AVAILABILITY,
                Verdict.SUPPORTED,
                (*refs, "observed.slots"),
                f"A lookup in this call offered {slot.day.capitalize()} at {slot.time}.",
                0.9,
            )
    return _finding(
        claim.heard,
        Category.AVAILABILITY,
        Verdict.LLM_FLAGGED,
        refs,
        "No lookup in this call shows that slot.",
        0.5,
    )
