"""Checking what an agent says of promotions: the amount or percent off, who it is for, and
which services it covers.

Pure. A figure that matches a listed promotion is supported only when the groups and services
the clause names fit that promotion too; otherwise the claim stretches it and is unsupported.
"""

from __future__ import annotations

import re
from datetime import date

from lab.facts.schema import ConstraintList, Promotion, format_cents
from lab.grading.claims import DiscountClaim, PercentClaim, PromoClaim
from lab.grading.eligibility import groups, mismatch
from lab.grading.judge import Judge
from lab.grading.schema import Category, ClaimFinding, Verdict


def check_promotion(
    claim: PercentClaim | PromoClaim | DiscountClaim, facts: ConstraintList, on: date | None = None
) -> ClaimFinding:
    refs = tuple(p.id for p in facts.promotions)
    match claim:
        case PercentClaim():
            judge = Judge(f"{claim.percent}% off", Category.PRICE, refs)
            matching = [p for p in facts.promotions if p.percent_off == claim.percent]
            missing = f"No current promotion gives {claim.percent}% off."
        case DiscountClaim():
            said = format_cents(claim.cents)
            judge = Judge(f"{said} off", Category.PRICE, refs)
            matching = [p for p in facts.promotions if p.amount_off_cents == claim.cents]
            missing = f"No current promotion takes {said} off."
        case PromoClaim():
            judge = Judge(claim.heard, Category.PRICE, refs)
            matching = _named(claim.heard, facts.promotions)
            missing = "No current promotion on the list matches it."
    if not matching:
        return judge(Verdict.UNSUPPORTED, missing, 0.8 if isinstance(claim, PromoClaim) else 0.9)
    reasons = [(p, _misfit(claim, p) or _out_of_dates(p, on)) for p in matching]
    fitting = [p for p, why in reasons if why is None]
    if fitting:
        verb = "Refers to" if isinstance(claim, PromoClaim) else "Matches"
        confidence = 0.7 if isinstance(claim, PromoClaim) else 0.85
        return judge(
            Verdict.SUPPORTED,
            f"{verb} the promotion {fitting[0].id}.",
            confidence,
            refs=(fitting[0].id,),
        )
    promotion, why = reasons[0]
    return judge(
        Verdict.UNSUPPORTED,
        f"The promotion {promotion.id} does not fit: {why}.",
        0.9,
        refs=(promotion.id,),
    )


def _misfit(claim: PercentClaim | PromoClaim | DiscountClaim, promotion: Promotion) -> str | None:
    """Why the clause's groups or services do not fit the promotion, or None when they do."""
    eligible = groups(f"{promotion.eligibility or ''} {promotion.description}")
    wrong = mismatch(groups(claim.clause or claim.heard), eligible)
    if wrong:
        return wrong
    outside = [s for s in claim.services if promotion.services and s not in promotion.services]
    if outside:
        return f"it covers {', '.join(promotion.services)}, not {', '.join(outside)}"
    return None


def _out_of_dates(promotion: Promotion, on: date | None) -> str | None:
    """Why the promotion does not run on the day of the turn, or None (also when unknown)."""
    if on is None:
        return None
    day = on.isoformat()
    if promotion.valid_from and day < promotion.valid_from:
        return f"it starts on {promotion.valid_from}"
    if promotion.valid_until and day > promotion.valid_until:
        return f"it ended on {promotion.valid_until}"
    return None


def _named(heard: str, promotions: tuple[Promotion, ...]) -> list[Promotion]:
    words = re.findall(r"[a-z]+", heard.lower())
    # "referral" names "Refer a friend": words match on their first five letters.
    return [
        p
        for p in promotions
        if any(w.startswith(k[:5]) for k in _keywords(p) for w in words if len(w) >= len(k[:5]))
    ]


def _keywords(promotion: Promotion) -> tuple[str, ...]:
    if promotion.keywords:
        return tuple(k.lower() for k in promotion.keywords)
    text = f"{promotion.description} {promotion.eligibility or ''} {promotion.id}".lower()
    return tuple(w for w in re.findall(r"[a-z]+", text) if len(w) > 4 and w not in _NOT_NAMES)


_NOT_NAMES = frozenset(
    {"promo", "customers", "service", "services", "offer", "first", "every", "discount", "special"}
)
