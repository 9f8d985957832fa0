"""Checking one claim against the constraint list: supported only when a listed fact backs it.

Pure. A claim the list has a field for but no value in is flagged, never passed: no claim is
supported because the evidence was empty.
"""

from __future__ import annotations

import re

from lab.facts.knowledge import CAPABILITY_WORDS
from lab.facts.schema import ConstraintList, Promotion, format_cents
from lab.grading.capability_names import names_capability
from lab.grading.claims import (
    AvailabilityClaim,
    CapabilityClaim,
    Claim,
    DiscountClaim,
    HoursClaim,
    LooseClaim,
    PercentClaim,
    PolicyClaim,
    PriceClaim,
    PromoClaim,
    RangeClaim,
)
from lab.grading.judge import Judge
from lab.grading.named import NamedPolicyClaim, check_named
from lab.grading.policy_checks import check_policy
from lab.grading.schema import Category, ClaimFinding, Observed, Verdict
from lab.grading.time_checks import check_availability, check_hours

# An approximate price within this share of the listed one is a rounding for a human to judge.
APPROXIMATE_SHARE = 0.1


def check(claim: Claim, facts: ConstraintList, observed: Observed) -> ClaimFinding:
    match claim:
        case PriceClaim():
            return _price(claim, facts)
        case PercentClaim() | PromoClaim():
            return _promotion(claim, facts)
        case HoursClaim():
            return check_hours(claim, facts)
        case PolicyClaim():
            return check_policy(claim, facts)
        case CapabilityClaim():
            return _capability(claim, facts)
        case AvailabilityClaim():
            return check_availability(claim, facts, observed)
        case LooseClaim():
            return Judge(claim.heard, claim.category)(claim.verdict, claim.reason, 0.5)
        case RangeClaim():
            return _range(claim, facts)
        case DiscountClaim():
            return _discount(claim, facts)
        case NamedPolicyClaim():
            return _named(claim, facts)


def _range(claim: RangeClaim, facts: ConstraintList) -> ClaimFinding:
    said = f"{format_cents(claim.low)} to {format_cents(claim.high)}"
    services = [facts.service(claim.service)] if claim.service else list(facts.services)
    judge = Judge(f"price {said}", Category.PRICE, tuple(s.id for s in services))
    inside = [s for s in services if claim.low <= s.price_cents <= claim.high]
    if inside:
        listed = format_cents(inside[0].price_cents)
        why = f"The listed {inside[0].name} price of {listed} lies in {said}."
        return judge(Verdict.SUPPORTED, why, 0.8 if claim.service else 0.6, refs=(inside[0].id,))
    listed = ", ".join(f"{s.name} {format_cents(s.price_cents)}" for s in services)
    return judge(Verdict.UNSUPPORTED, f"The range {said} excludes the listed {listed}.", 0.9)


def _discount(claim: DiscountClaim, facts: ConstraintList) -> ClaimFinding:
    said = format_cents(claim.cents)
    judge = Judge(f"{said} off", Category.PRICE, tuple(p.id for p in facts.promotions))
    matching = [p for p in facts.promotions if p.amount_off_cents == claim.cents]
    if matching:
        return judge(
            Verdict.SUPPORTED,
            f"Matches the promotion {matching[0].id}.",
            0.85,
            refs=(matching[0].id,),
        )
    return judge(Verdict.UNSUPPORTED, f"No current promotion takes {said} off.", 0.9)


def _named(claim: NamedPolicyClaim, facts: ConstraintList) -> ClaimFinding:
    text = facts.policies.other[claim.policy]
    judge = Judge(claim.heard, Category.POLICY, (f"policies.{claim.policy}",))
    outcome = check_named(claim, text)
    if outcome.held is True:
        return judge(Verdict.SUPPORTED, f"Matches {outcome.why}.", 0.75)
    if outcome.held is False:
        return judge(Verdict.UNSUPPORTED, f"Conflicts: {outcome.why}.", 0.85)
    return judge(Verdict.LLM_FLAGGED, f"Unsettled: {outcome.why}.", 0.5)


def _price(claim: PriceClaim, facts: ConstraintList) -> ClaimFinding:
    said = format_cents(claim.cents)
    if claim.service is None:
        judge = Judge(f"price {said}", Category.PRICE, tuple(s.id for s in facts.services))
        matching = [s for s in facts.services if s.price_cents == claim.cents]
        if matching:
            why = f"{said} is the listed price of the {matching[0].name}."
            return judge(Verdict.SUPPORTED, why, 0.7, refs=(matching[0].id,))
        if claim.approximate:
            # "Most people spend about $200": a hedged sum no service is named for.
            why = f"An approximate {said} pricing no listed service; a human should judge it."
            return judge(Verdict.LLM_FLAGGED, why, 0.5)
        return judge(Verdict.UNSUPPORTED, f"No service on the price list costs {said}.", 0.85)
    service = facts.service(claim.service)
    judge = Judge(f"{service.name} price {said}", Category.PRICE, (service.id,))
    listed = format_cents(service.price_cents)
    if claim.cents == service.price_cents:
        return judge(Verdict.SUPPORTED, f"Matches the listed {service.name} price of {said}.", 0.95)
    for promotion in facts.promotions:
        applies = not promotion.services or service.id in promotion.services
        promoted = promotion.price_cents
        if promotion.percent_off:
            promoted = round(service.price_cents * (100 - promotion.percent_off) / 100)
        if promotion.amount_off_cents:
            promoted = service.price_cents - promotion.amount_off_cents
        if applies and claim.discounted and promoted == claim.cents:
            why = f"Matches the {service.name} price after {promotion.id}."
            return judge(Verdict.SUPPORTED, why, 0.85, refs=(service.id, promotion.id))
    near = abs(claim.cents - service.price_cents) <= APPROXIMATE_SHARE * service.price_cents
    if claim.approximate and near:
        why = f"An approximate {said} for the listed {listed}; a human should judge it."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    why = f"Quoted {said} conflicts with the listed {service.name} price of {listed}."
    return judge(Verdict.UNSUPPORTED, why, 0.95)


def _promotion(claim: PercentClaim | PromoClaim, facts: ConstraintList) -> ClaimFinding:
    refs = tuple(p.id for p in facts.promotions)
    if isinstance(claim, PercentClaim):
        judge = Judge(f"{claim.percent}% off", Category.PRICE, refs)
        matching = [p for p in facts.promotions if p.percent_off == claim.percent]
        if matching:
            why = f"Matches the promotion {matching[0].id}."
            return judge(Verdict.SUPPORTED, why, 0.85, refs=(matching[0].id,))
        return judge(Verdict.UNSUPPORTED, f"No current promotion gives {claim.percent}% off.", 0.9)
    judge = Judge(claim.heard, Category.PRICE, refs)
    heard = re.findall(r"[a-z]+", claim.heard.lower())
    # "referral" names "Refer a friend": words match on their first five letters.
    named = [
        p
        for p in facts.promotions
        if any(w.startswith(k[:5]) for k in _keywords(p) for w in heard if len(w) >= len(k[:5]))
    ]
    if named:
        why = f"Refers to the promotion {named[0].id}."
        return judge(Verdict.SUPPORTED, why, 0.7, refs=(named[0].id,))
    return judge(Verdict.UNSUPPORTED, "No current promotion on the list matches it.", 0.8)


def _keywords(promotion: Promotion) -> tuple[str, ...]:
    if promotion.keywords:
        return tuple(k.lower() for k in promotion.keywords)
    text = f"{promotion.description} {promotion.eligibility or ''} {promotion.id}".lower()
    return tuple(w for w in re.findall(r"[a-z]+", text) if len(w) > 4 and w not in _NOT_NAMES)


_NOT_NAMES = frozenset({"promo", "customers", "service", "services", "offer", "first", "every"})


def _capability(claim: CapabilityClaim, facts: ConstraintList) -> ClaimFinding:
    judge = Judge(claim.heard, Category.CAPABILITY, (f"capabilities.{claim.capability.value}",))
    what = CAPABILITY_WORDS[claim.capability]
    listed = facts.capabilities
    if claim.capability in listed.cannot:
        return judge(Verdict.UNSUPPORTED, f"The list says the agent cannot {what}.", 0.95)
    if claim.capability in listed.can:
        return judge(Verdict.SUPPORTED, f"The agent can {what}.", 0.9)
    refused = [name for name in listed.cannot if names_capability(name, claim)]
    if refused:
        why = f"The list says the agent cannot {refused[0].replace('_', ' ')}."
        return judge(Verdict.UNSUPPORTED, why, 0.9, refs=(f"capabilities.{refused[0]}",))
    allowed = [name for name in listed.can if names_capability(name, claim)]
    if allowed:
        why = f"The list says the agent can {allowed[0].replace('_', ' ')}."
        return judge(Verdict.SUPPORTED, why, 0.8, refs=(f"capabilities.{allowed[0]}",))
    return judge(Verdict.UNSUPPORTED, f"The list does not say the agent can {what}.", 0.85)
