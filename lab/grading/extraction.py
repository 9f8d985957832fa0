"""Finding the factual claims in an agent utterance, clause by clause.

Pure and deterministic. A value no claim accounts for (a number, a time, a duration) becomes a
claim of its own that only a human can settle; a bare "yes" or "no" claims what the caller asked.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace
from functools import lru_cache

from lab.agent.numbers import Reading, Token, tokenize
from lab.facts.schema import Service
from lab.grading import phrases as ph
from lab.grading.claims import (
    AvailabilityClaim,
    Claim,
    Context,
    HoursClaim,
    LooseClaim,
    PercentClaim,
    PolicyClaim,
    PolicyFeature,
    PriceClaim,
    PromoClaim,
)
from lab.grading.lexicon import Clock, Duration, Values, read_values
from lab.grading.phrases import PolicyTopic, normal
from lab.grading.promises import capability_claims, policy_claims
from lab.grading.schema import Category, Verdict
from lab.grading.timing import availability_claims, hours_claims

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'$(\[])|\n+")
_FREE_SLOT = re.compile(r"\b(?:is|are)\s+(?:still\s+)?free\b")
_CLAUSE = re.compile(r"\s*;\s*|,?\s+but\s+|,\s+(?:and|while|whereas)\s+")
# Reference and receipt codes such as R-7CD40D35 mix capitals and digits; their digits are no
# amount or time ("9:30AM"-style clock tokens are left alone).
_CODE = re.compile(
    r"\b(?:[A-Z]{1,4}-)?(?![0-9]+(?:AM|PM)\b)(?=[A-Z0-9]{5,}\b)(?=[A-Z0-9]*[0-9])"
    r"(?=[A-Z0-9]*[A-Z])[A-Z0-9]+\b"
)


def extract(utterance: str, caller_turn: str | None, services: tuple[Service, ...]) -> list[Claim]:
    """Every claim in the utterance, in the order said."""
    caller = _context(caller_turn or "", services)
    claims: list[Claim] = []
    named: list[str] = []
    for number, sentence in enumerate(s for s in _SENTENCE.split(utterance.strip()) if s.strip()):
        context = replace(caller, services=(*named, *caller.services))
        found, mentioned = _sentence(sentence, context, services)
        if number == 0 and not found and caller_turn:
            found = _answer(sentence, caller_turn, services)
        claims += found
        named = [*mentioned, *named]
    return claims


def _context(caller_turn: str, services: tuple[Service, ...]) -> Context:
    lower = normal(caller_turn)
    values = read_values(caller_turn)
    return Context(
        services=tuple(service for service, _ in reversed(_mentions(lower, services))),
        days=tuple(day for reading in values.days for day in reading.value),
        asks_hours=bool(ph.HOURS.search(lower)) and not ph.SLOT_OPENING.search(lower),
        topics=tuple(name for name, pattern in ph.TOPICS if pattern.search(lower)),
    )


def _answer(sentence: str, caller_turn: str, services: tuple[Service, ...]) -> list[Claim]:
    """What a bare "yes" or "no" claims: the caller's question, affirmed or denied."""
    lower = normal(sentence.strip())
    question = normal(caller_turn.strip())
    if not (question.endswith("?") or ph.QUESTION_START.search(question)):
        return []
    affirmed = bool(ph.AFFIRM.search(lower))
    if ph.DECLINE.search(lower) or not (affirmed or ph.DENY.search(lower)):
        return []
    asked, _ = _sentence(caller_turn, Context(), services)
    answered: list[Claim] = []
    for claim in asked:
        if affirmed:
            answered.append(claim)
        elif isinstance(claim, HoursClaim) and not (claim.opens or claim.closes or claim.within):
            answered.append(replace(claim, closed=not claim.closed))
        elif isinstance(claim, PolicyClaim) and claim.feature in ("allowed", "refused"):
            feature: PolicyFeature = "refused" if claim.feature == "allowed" else "allowed"
            answered.append(replace(claim, feature=feature))
    heard = f"{sentence.strip()} (to: {caller_turn.strip()})"
    return [replace(claim, heard=heard) for claim in answered]


def _sentence(
    sentence: str, context: Context, services: tuple[Service, ...]
) -> tuple[list[Claim], list[str]]:
    """The claims of one sentence, and the services it names (latest first)."""
    claims: list[Claim] = []
    named: list[str] = []
    before = ""
    for clause in (c for c in _CLAUSE.split(sentence) if c.strip()):
        local = replace(context, services=(*named, *context.services))
        # A clause takes its topic from those before it ("..., but after that it's $15").
        found, mentioned = _clause(clause, before, local, services)
        before += " " + normal(clause)
        claims += found
        named = [*mentioned, *named]
    return claims, named


def _clause(
    clause: str, before: str, context: Context, services: tuple[Service, ...]
) -> tuple[list[Claim], list[str]]:
    lower = normal(clause)
    topics = [name for name, pattern in ph.TOPICS if pattern.search(lower)]
    topics = topics or [name for name, pattern in ph.TOPICS if pattern.search(before)]
    hours_here = bool(ph.HOURS.search(lower)) and not ph.SLOT_OPENING.search(lower)
    hours_before = bool(ph.HOURS.search(before)) and not ph.SLOT_OPENING.search(before)
    mentions = _mentions(lower, services)
    # A clause that names a service talks price, whatever policy the caller asked about.
    topics = topics or ([] if mentions else list(context.topics))
    # "Wednesday at 4 PM is free" offers a slot; "flat repairs are free" prices a service.
    free_slot = bool(_FREE_SLOT.search(lower)) and not mentions
    available = bool(ph.AVAILABILITY.search(lower)) or free_slot
    timely = hours_here or hours_before or available or context.asks_hours
    uncoded = _CODE.sub(" ", clause)
    spoken = tokenize(uncoded)
    values = read_values(uncoded, skip=_identifiers(spoken.tokens), timely=timely)
    claims = capability_claims(clause, lower)
    claims += policy_claims(lower, topics, values, mentions)
    timed = bool(values.times or values.days)
    is_hours = hours_here or ((hours_before or context.asks_hours) and timed and not available)
    if is_hours:
        claims += hours_claims(clause, lower, values, context)
    elif available and (timed or ph.NO_AVAILABILITY.search(lower)):
        claims += availability_claims(clause, lower, values)
    claims += _prices(lower, topics, values, mentions, context)
    claims += _promotions(clause, lower, values)
    claims += _leftovers(values, topics, is_hours, available and timed)
    if not claims:
        claims += _uncovered(clause, lower)
    return claims, [service for service, _ in reversed(mentions)]


def _identifiers(tokens: tuple[Token, ...]) -> set[int]:
    """Tokens that name an order or a reference, which are identifiers, not claims."""
    skip: set[int] = set()
    for index, token in enumerate(tokens):
        if token.text in ph.IDENTIFIER_CUES or (token.text == "number" and index > 0):
            for follower in range(index + 1, min(index + 6, len(tokens))):
                skip.add(follower)
                if tokens[follower].pause_after:
                    break
    return skip


@lru_cache(maxsize=64)
def _service_patterns(services: tuple[Service, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    patterns = []
    for service in services:
        for name in sorted({service.name, *service.aliases}, key=len, reverse=True):
            words = r"[\s-]+".join(re.escape(word) for word in re.split(r"[\s-]+", name.lower()))
            patterns.append((service.id, re.compile(rf"\b{words}(?:s|es)?\b")))
    return tuple(patterns)


def _mentions(lower: str, services: tuple[Service, ...]) -> list[tuple[str, int]]:
    """Services named in lower, by position; the longest name wins where names overlap."""
    taken: list[tuple[int, int, str]] = []
    for service_id, pattern in _service_patterns(services):
        for match in pattern.finditer(lower):
            if all(match.end() <= start or match.start() >= end for start, end, _ in taken):
                taken.append((match.start(), match.end(), service_id))
    return [(service_id, start) for start, _, service_id in sorted(taken)]


def _prices(
    lower: str,
    topics: list[PolicyTopic],
    values: Values,
    mentions: list[tuple[str, int]],
    context: Context,
) -> list[Claim]:
    claims: list[Claim] = []
    approximate = bool(ph.HEDGE.search(lower))
    discounted = bool(ph.PROMO.search(lower)) or "student" in lower
    amounts = sorted(values.amounts, key=lambda reading: reading.first)
    values.amounts.clear()
    for number, amount in enumerate(amounts):
        if "refund" in topics and ph.TRANSACTION.search(lower):
            # A refund of a given order: the ledger knows that amount, the price list does not.
            claims.append(AvailabilityClaim(amount.heard, None, None, cents=amount.value))
        elif "refund" in topics:
            reason = "an amount in the refund policy the list does not type"
            claims.append(LooseClaim(amount.heard, Category.POLICY, Verdict.LLM_FLAGGED, reason))
        else:
            service = _service_for(amount, number, amounts, values, mentions, context)
            claims.append(PriceClaim(amount.heard, amount.value, service, approximate, discounted))
    if not amounts and not topics and mentions and (match := ph.FREE.search(lower)):
        claims.append(PriceClaim(match.group(), 0, mentions[0][0], False, discounted))
    return claims


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


def _promotions(clause: str, lower: str, values: Values) -> list[Claim]:
    claims: list[Claim] = [PercentClaim(p.heard, p.value) for p in values.percents]
    values.percents.clear()
    if not claims and ph.PROMO.search(lower):
        claims.append(PromoClaim(clause.strip()))
    return claims


def _leftovers(
    values: Values, topics: list[PolicyTopic], hours: bool, available: bool
) -> list[Claim]:
    """Values no claim accounted for: a human has to say what they refer to."""
    category = (
        Category.POLICY
        if topics
        else Category.HOURS
        if hours
        else Category.AVAILABILITY
        if available
        else Category.PRICE
    )
    readings: list[Reading[int] | Reading[Duration] | Reading[Clock]] = [
        *values.amounts,
        *values.durations,
        *values.times,
        *values.numbers,
    ]
    return [
        LooseClaim(r.heard, category, Verdict.LLM_FLAGGED, f'"{r.heard}" is not on the list')
        for r in sorted(readings, key=lambda reading: reading.first)
    ]


def _uncovered(clause: str, lower: str) -> list[Claim]:
    """A statement about the business on a subject the list does not cover."""
    text = lower.strip()
    if text.endswith("?") or ph.QUESTION_START.search(text) or ph.DECLINE.search(text):
        return []
    if ph.UNKNOWN.search(text) or ph.HANDOFF.search(text) or not ph.BUSINESS_FACT.search(text):
        return []
    reason = "a fact about the business the constraint list does not cover"
    return [LooseClaim(clause.strip(), Category.CAPABILITY, Verdict.OUT_OF_SCOPE, reason)]
