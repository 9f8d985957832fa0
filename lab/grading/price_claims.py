"""Price claims in one clause: which service each amount prices, counts and totals.

Pure. An amount prices the service named before or after it, else the one the caller asked
about; a number right before a service counts it ("two drain cleanings"), and an amount said as
the total of several services ("together", "comes to") is checked against their sum.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from lab.facts.schema import ConstraintList, Service
from lab.grading import phrases as ph
from lab.grading.claims import AvailabilityClaim, Claim, Context, LooseClaim, PriceClaim
from lab.grading.lexicon import Values
from lab.grading.mentions import counted, kin, promo_words
from lab.grading.phrases import PolicyTopic
from lab.grading.schema import Category, Verdict
from lab.language.numbers import Reading

_FREE_NOUN = re.compile(r"\s+(?!of\b|for\b|with\b|too\b|if\b|when\b|as\b|to\b|and\b|on\b)[a-z]")
_TOTAL = re.compile(
    r"\b(?:total|in\s+total|together|altogether|all\s+in|combined|for\s+both|for\s+all|"
    r"comes?\s+to|come\s+out\s+to|would\s+be|adds?\s+up\s+to)\b"
)
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1}


def take_counts(values: Values, services: tuple[Service, ...]) -> tuple[tuple[str, int], ...]:
    """Numbers said right before a service ("two drain cleanings"): counts, never prices."""
    text, tokens = values.spoken.text, values.spoken.tokens
    counts: list[tuple[str, int]] = []
    for number in sorted(values.numbers, key=lambda r: r.first):
        service = counted(text[tokens[number.end - 1].end :], services)
        if service is not None and 1 < number.value < 100:
            values.numbers.remove(number)
            counts.append((service, number.value))
    return tuple(counts)


def price_claims(
    lower: str,
    topics: list[PolicyTopic],
    values: Values,
    mentions: list[tuple[str, int]],
    context: Context,
    counts: tuple[tuple[str, int], ...],
    facts: ConstraintList,
) -> list[Claim]:
    """The price claims of a clause whose amounts no other claim took."""
    claims: list[Claim] = []
    approximate = bool(ph.HEDGE.search(lower))
    words = promo_words(facts.promotions, facts.services)
    discounted = bool(ph.PROMO.search(lower)) or any(word in lower for word in words)
    amounts = sorted(values.amounts, key=lambda reading: reading.first)
    values.amounts.clear()
    total = _total(lower, mentions, counts, len(amounts))
    related = () if mentions else kin(lower, facts.services)
    for number, amount in enumerate(amounts):
        meanings = values.meanings.get(amount.first, (amount.value,))
        if "refund" in topics and ph.TRANSACTION.search(lower):
            # A refund of a given order: the ledger knows that amount, the price list does not.
            claims.append(AvailabilityClaim(amount.heard, None, None, cents=amount.value))
        elif "refund" in topics:
            reason = "an amount in the refund policy the list does not type"
            claims.append(LooseClaim(amount.heard, Category.POLICY, Verdict.LLM_FLAGGED, reason))
        elif total:
            heard, cents = amount.heard, amount.value
            claims.append(PriceClaim(heard, cents, None, approximate, discounted, meanings, total))
        else:
            service = _service_for(amount, number, amounts, values, mentions, context)
            many = tuple((s, n) for s, n in counts if s == service)
            claims.append(
                PriceClaim(
                    amount.heard,
                    amount.value,
                    service,
                    approximate,
                    discounted,
                    meanings,
                    many,
                    related if service is None else (),
                )
            )
    match = ph.FREE.search(lower)
    # "a massage is free" prices it; "includes a free upgrade" prices the upgrade.
    follows_service = match is not None and any(
        start in (match.end() + 1, match.end()) for _, start in mentions
    )
    if match and _FREE_NOUN.match(lower, match.end()) and not follows_service:
        match = None
    if not amounts and not topics and mentions and match:
        service = next((s for s, start in mentions if start >= match.end()), mentions[0][0])
        service = service if follows_service else mentions[0][0]
        claims.append(PriceClaim(match.group(), 0, service, False, discounted))
    return claims


def _total(
    lower: str,
    mentions: list[tuple[str, int]],
    counts: tuple[tuple[str, int], ...],
    amounts: int,
) -> tuple[tuple[str, int], ...]:
    """The services an amount totals: several named with one amount and a word of totalling."""
    named = list(dict.fromkeys(service for service, _ in mentions))
    if amounts != 1 or len(named) < 2 or not _TOTAL.search(lower):
        return ()
    how_many = dict(counts)
    return tuple((service, how_many.get(service, 1)) for service in named)


def _service_for(
    amount: Reading[int],
    number: int,
    amounts: list[Reading[int]],
    values: Values,
    mentions: list[tuple[str, int]],
    context: Context,
) -> str | None:
    """The service an amount prices: named before it, after it ("$60 for a tune-up"), or asked."""
    tokens = values.spoken.tokens
    starts = [start for _, start in mentions]
    before = bisect_right(starts, tokens[amount.first].start)
    forward = amount.end < len(tokens) and tokens[amount.end].text in ("for", "gets")
    if mentions and (forward or before == 0) and before < len(mentions):
        return mentions[before][0]
    if before:
        return mentions[before - 1][0]
    asked = context.services[::-1]
    # "$60 and $129.50" answers "a tune-up and a full service?" in order.
    if len(asked) == len(amounts) > 1:
        return asked[number]
    return context.services[0] if context.services else None
