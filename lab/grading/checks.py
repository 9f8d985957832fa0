"""Checking one claim against the constraint list: supported only when a listed fact backs it.

Pure. A claim the list has a field for but no value in is flagged, never passed: no claim is
supported because the evidence was empty.
"""

from __future__ import annotations

from datetime import date

from lab.facts.knowledge import CAPABILITY_WORDS
from lab.facts.schema import ConstraintList, format_cents
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
from lab.grading.promotion_checks import check_promotion
from lab.grading.schema import Category, ClaimFinding, Observed, Verdict
from lab.grading.time_checks import check_availability, check_hours


def check(
    claim: Claim, facts: ConstraintList, observed: Observed, on: date | None = None
) -> ClaimFinding:
    match claim:
        case PriceClaim():
            return check_price(claim, facts)
        case PercentClaim() | PromoClaim() | DiscountClaim():
            return check_promotion(claim, facts, on)
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


def _named(claim: NamedPolicyClaim, facts: ConstraintList) -> ClaimFinding:
    text = facts.policies.other[claim.policy]
    judge = Judge(claim.heard, Category.POLICY, (f"policies.{claim.policy}",))
    outcome = check_named(claim, text)
    if outcome.held is True:
        return judge(Verdict.SUPPORTED, f"Matches {outcome.why}.", 0.75)
    if outcome.held is False:
        return judge(Verdict.UNSUPPORTED, f"Conflicts: {outcome.why}.", 0.85)
    return judge(Verdict.LLM_FLAGGED, f"Unsettled: {outcome.why}.", 0.5)


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
