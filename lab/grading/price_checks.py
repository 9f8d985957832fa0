"""Checking a quoted price: against the service it prices, a count or total, or the words used.

Pure. Where the words have two meanings ("eleven fifty": $11.50 or $1,150) the meaning nearest
the listed figure is the one the agent chose; it is supported only if it is the listed figure
(or a listed promotion's), and every other meaning is no excuse.
"""

from __future__ import annotations

import math

from lab.facts.schema import ConstraintList, Service, format_cents
from lab.grading.claims import PriceClaim
from lab.grading.judge import Judge
from lab.grading.schema import Category, ClaimFinding, Verdict

# An approximate price within this share of the listed one is a rounding for a human to judge.
APPROXIMATE_SHARE = 0.1


def check_price(claim: PriceClaim, facts: ConstraintList) -> ClaimFinding:
    if claim.counts:
        return _total(claim, facts)
    if claim.service is not None:
        return _service_price(claim, facts.service(claim.service), facts)
    meanings = claim.meanings or (claim.cents,)
    kin = [facts.service(s) for s in claim.kin]
    candidates = kin or list(facts.services)
    said = format_cents(claim.cents)
    judge = Judge(f"price {said}", Category.PRICE, tuple(s.id for s in candidates))
    matching = [(s, m) for m in meanings for s in candidates if s.price_cents == m]
    if matching:
        service, cents = matching[0]
        why = f"{format_cents(cents)} is the listed price of the {service.name}."
        return judge(Verdict.SUPPORTED, why, 0.7, refs=(service.id,))
    near = [s for s in candidates if _near(meanings, s.price_cents)]
    if claim.approximate and (near or not kin):
        # "Most people spend about $200": a hedged sum no service is named for.
        why = f"An approximate {said} pricing no listed service exactly; a human should judge it."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    if kin:
        listed = ", ".join(f"{s.name} {format_cents(s.price_cents)}" for s in kin)
        why = f"Quoted {said} matches no listed price of the services its words name ({listed})."
        return judge(Verdict.UNSUPPORTED, why, 0.85)
    return judge(Verdict.UNSUPPORTED, f"No service on the price list costs {said}.", 0.85)


def _service_price(claim: PriceClaim, service: Service, facts: ConstraintList) -> ClaimFinding:
    listed_cents = service.price_cents
    cents = nearest(claim.meanings or (claim.cents,), listed_cents)
    said, listed = format_cents(cents), format_cents(listed_cents)
    judge = Judge(f"{service.name} price {said}", Category.PRICE, (service.id,))
    if cents == listed_cents:
        return judge(Verdict.SUPPORTED, f"Matches the listed {service.name} price of {said}.", 0.95)
    for promotion in facts.promotions:
        applies = not promotion.services or service.id in promotion.services
        promoted = promotion.price_cents
        if promotion.percent_off:
            promoted = round(listed_cents * (100 - promotion.percent_off) / 100)
        if promotion.amount_off_cents:
            promoted = listed_cents - promotion.amount_off_cents
        if applies and claim.discounted and promoted == cents:
            why = f"Matches the {service.name} price after {promotion.id}."
            return judge(Verdict.SUPPORTED, why, 0.85, refs=(service.id, promotion.id))
    if claim.approximate and _near((cents,), listed_cents):
        why = f"An approximate {said} for the listed {listed}; a human should judge it."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    why = f"Quoted {said} conflicts with the listed {service.name} price of {listed}."
    return judge(Verdict.UNSUPPORTED, why, 0.95)


def _total(claim: PriceClaim, facts: ConstraintList) -> ClaimFinding:
    """ "Two drain cleanings would be $300": the amount against count times the listed price."""
    parts = [(facts.service(s), n) for s, n in claim.counts]
    target = sum(service.price_cents * n for service, n in parts)
    cents = nearest(claim.meanings or (claim.cents,), target)
    items = " + ".join(f"{n} x {service.name}" if n > 1 else service.name for service, n in parts)
    said, listed = format_cents(cents), format_cents(target)
    judge = Judge(f"{items} price {said}", Category.PRICE, tuple(s.id for s, _ in parts))
    if cents == target:
        return judge(Verdict.SUPPORTED, f"{items} at the listed prices is {listed}.", 0.9)
    if claim.approximate and _near((cents,), target):
        why = f"An approximate {said} for {items}, listed at {listed}; a human should judge it."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    return judge(Verdict.UNSUPPORTED, f"{items} at the listed prices is {listed}, not {said}.", 0.9)


def nearest(meanings: tuple[int, ...], target: int) -> int:
    """The meaning nearest target by ratio: the one a speaker quoting that figure chose."""
    if target in meanings:
        return target
    return min(meanings, key=lambda m: abs(math.log(max(m, 1) / max(target, 1))))


def _near(meanings: tuple[int, ...], listed: int) -> bool:
    return any(abs(m - listed) <= APPROXIMATE_SHARE * listed for m in meanings)
