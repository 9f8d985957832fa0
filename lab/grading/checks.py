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
from lab.grading.price_checks import check_price
from lab.grading.schema import Category, ClaimFinding, Observed, Verdict
from lab.grading.time_checks import check_availability, check_hours


def check(claim: Claim, facts: ConstraintList, observed: Observed) -> ClaimFinding:
    match claim:
        case PriceClaim():
            return check_price(claim, facts)
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
