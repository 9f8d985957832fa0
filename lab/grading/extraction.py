"""Finding the factual claims in an agent utterance, clause by clause.

Pure and deterministic. A value no claim accounts for (a number, a time, a duration) becomes a
claim of its own that only a human can settle; a bare "yes" or "no" claims what the caller asked.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lab.facts.schema import ConstraintList
from lab.grading import phrases as ph
from lab.grading.claims import (
    AvailabilityClaim,
    Claim,
    Context,
    DiscountClaim,
    HoursClaim,
    LooseClaim,
    PercentClaim,
    PolicyClaim,
    PolicyFeature,
    PriceClaim,
    PromoClaim,
    RangeClaim,
)
from lab.grading.lexicon import Clock, Duration, Values, read_values
from lab.grading.mentions import mentions as find_mentions
from lab.grading.mentions import promo_words, service_words, spans
from lab.grading.named import NamedPolicyClaim, find_policy
from lab.grading.phrases import PolicyTopic, normal
from lab.grading.price_claims import price_claims, take_counts
from lab.grading.prices import PRICE_CUE, read_prices
from lab.grading.promises import capability_claims, policy_claims
from lab.grading.schema import Category, Verdict
from lab.grading.sentences import FILLER, GREETING
from lab.grading.timing import availability_claims, hours_claims, with_exceptions
from lab.grading.unchecked import UNCHECKED, uncovered
from lab.language.numbers import Reading, Token, tokenize

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'$(\[])|\n+")
_OFFERED = re.compile(r"\bi\s+(?:have|can\s+do|have\s+got)\b|\bi've\s+got\b")
_FREE_SLOT = re.compile(r"\b(?:is|are)\s+(?:still\s+)?free\b")
_CLAUSE = re.compile(
    r"\s*;\s*|,?\s+but\s+|,\s+(?:and|while|whereas|plus)\s+"
    r"|\s+and\s+(?=(?:we|we'll|we're|we've|you'll|i'll|i've|they|our|there's|it'll)\b)"
    # "... $1,250 and the deposit is non-refundable": a second subject with its own verb.
    r"|\s+and\s+(?=the\s+[a-z-]+(?:\s+[a-z-]+)?\s+(?:is|are|was|comes|costs|runs)\b)"
)
# Reference and receipt codes such as R-7CD40D35 mix capitals and digits; their digits are no
# amount or time ("9:30AM"-style clock tokens are left alone).
_CODE = re.compile(
    r"\b(?:[A-Z]{1,4}-)?(?![0-9]+(?:AM|PM)\b)(?=[A-Z0-9]{5,}\b)(?=[A-Z0-9]*[0-9])"
    r"(?=[A-Z0-9]*[A-Z])[A-Z0-9]+\b|\b[A-Za-z]{1,4}-\d{2,}\b"
)
_CALLER_DIGITS = re.compile(r"(?<![$\d.,])\d{3,}(?![\d.,]\d)")
_ASKS_CLOSE = re.compile(r"\b(?:close|closes|closing|shut|until\s+when|open\s+until)\b")
_OFFER = re.compile(r"\b(?:offer|discount|deal|special|saving|savings)\b")
_OFF = frozenset({"off", "discount", "cheaper", "less", "rebate", "credit"})
_DISCOUNT_IS = re.compile(r"\b(?:discount|saving|savings)\s+(?:is|of|comes\s+to)\s+$")
_SAVE = frozenset({"save", "saves", "saving", "knock", "knocks"})


def extract(utterance: str, caller_turn: str | None, facts: ConstraintList) -> list[Claim]:
    """Every claim in the utterance, in the order said."""
    caller = _context(caller_turn or "", facts)
    claims: list[Claim] = []
    named: list[str] = []
    for number, sentence in enumerate(s for s in _SENTENCE.split(utterance.strip()) if s.strip()):
        context = replace(caller, services=(*named, *caller.services))
        found, mentioned = _sentence(sentence, context, facts)
        if number == 0 and caller_turn and _bare_answer(found):
            found = _answer(sentence, caller_turn, facts) or found
        claims += found
        named = [*mentioned, *named]
    return with_exceptions(claims)


def _context(caller_turn: str, facts: ConstraintList) -> Context:
    services = facts.services
    lower = normal(caller_turn)
    values = read_values(caller_turn)
    return Context(
        services=tuple(service for service, _ in reversed(find_mentions(lower, services))),
        days=tuple(day for reading in values.days for day in reading.value),
        asks_hours=bool(ph.HOURS.search(lower)) and not ph.SLOT_OPENING.search(lower),
        asks_price=bool(PRICE_CUE.search(lower)),
        asks_close=bool(_ASKS_CLOSE.search(lower)),
        identifiers=tuple(_CALLER_DIGITS.findall(caller_turn)),
        topics=tuple(name for name, pattern in ph.TOPICS if pattern.search(lower)),
        policy=_asked_policy(lower, facts),
    )


def _asked_policy(lower: str, facts: ConstraintList) -> str | None:
    """The named policy a caller's question names by its name ("a charge for stairs?")."""
    found = find_policy(lower, facts.policies.other, service_words(facts.services))
    return found[0] if found is not None and found[1] else None


def _bare_answer(found: list[Claim]) -> bool:
    """Nothing but the fail-closed flag of an unchecked clause: a "yes" may still claim the ask."""
    return all(isinstance(c, LooseClaim) and c.reason == UNCHECKED for c in found)


def _answer(sentence: str, caller_turn: str, facts: ConstraintList) -> list[Claim]:
    """What a bare "yes" or "no" claims: the caller's question, affirmed or denied."""
    lower = normal(sentence.strip())
    question = normal(caller_turn.strip())
    if not (question.endswith("?") or ph.QUESTION_START.search(question)):
        return []
    affirmed = bool(ph.AFFIRM.search(lower))
    if ph.DECLINE.search(lower) or not (affirmed or ph.DENY.search(lower)):
        return []
    asked, _ = _sentence(caller_turn, Context(caller=True), facts)
    asked = [claim for claim in asked if not isinstance(claim, LooseClaim)]
    answered: list[Claim] = []
    for claim in asked:
        if affirmed:
            answered.append(claim)
        elif isinstance(claim, HoursClaim) and not (claim.opens or claim.closes or claim.within):
            answered.append(replace(claim, closed=not claim.closed))
        elif isinstance(claim, NamedPolicyClaim):
            answered.append(replace(claim, denied=True))
        elif isinstance(claim, PolicyClaim) and claim.feature in ("allowed", "refused"):
            feature: PolicyFeature = "refused" if claim.feature == "allowed" else "allowed"
            answered.append(replace(claim, feature=feature))
    heard = f"{sentence.strip()} (to: {caller_turn.strip()})"
    # A named policy is checked on the words of the question it answers, so those stay its own.
    return [c if isinstance(c, NamedPolicyClaim) else replace(c, heard=heard) for c in answered]


def _sentence(
    sentence: str, context: Context, facts: ConstraintList
) -> tuple[list[Claim], list[str]]:
    """The claims of one sentence, and the services it names (latest first)."""
    claims: list[Claim] = []
    named: list[str] = []
    before = ""
    for clause in (c for c in _CLAUSE.split(sentence) if c.strip()):
        local = replace(context, services=(*named, *context.services))
        # A clause takes its topic from those before it ("..., but after that it's $15").
        found, mentioned = _clause(clause, before, local, facts)
        before += " " + normal(clause)
        claims += found
        named = [*mentioned, *named]
    return claims, named


def _clause(
    clause: str, before: str, context: Context, facts: ConstraintList
) -> tuple[list[Claim], list[str]]:
    services = facts.services
    lower = normal(clause)
    topics = [name for name, pattern in ph.TOPICS if pattern.search(lower)]
    topics = topics or [name for name, pattern in ph.TOPICS if pattern.search(before)]
    # "I have Saturday at 10 AM open" offers a slot; it is no claim about opening hours.
    offered = bool(_OFFERED.search(lower))
    hours_here = bool(ph.HOURS.search(lower)) and not ph.SLOT_OPENING.search(lower) and not offered
    hours_before = bool(ph.HOURS.search(before)) and not ph.SLOT_OPENING.search(before)
    mentions = find_mentions(lower, services)
    # A clause that names a service talks price, whatever policy the caller asked about.
    topics = topics or ([] if mentions else list(context.topics))
    # "Wednesday at 4 PM is free" offers a slot; "flat repairs are free" prices a service.
    free_slot = bool(_FREE_SLOT.search(lower)) and not mentions
    available = bool(ph.AVAILABILITY.search(lower)) or free_slot
    timely = hours_here or hours_before or available or context.asks_hours
    uncoded = _CODE.sub(" ", clause)
    spoken = tokenize(uncoded)
    skip = _identifiers(spoken.tokens, context.identifiers)
    # "two-bedroom move": the words of a service's name are no count and no price.
    named_spans = spans(normal(uncoded), services)
    skip |= {
        i for i, t in enumerate(spoken.tokens) if any(a <= t.start < b for a, b in named_spans)
    }
    values = read_values(uncoded, skip=skip, timely=timely)
    claims = capability_claims(clause, normal(re.sub(r"\s+", " ", uncoded)))
    listed_promo = any(word in lower for word in promo_words(facts.promotions, facts.services))
    # Beside an amount, a typed topic or a promotion, only a policy's name names it; beside a
    # service and an amount, the clause prices the service.
    strict = bool(mentions or values.amounts or values.percents or topics)
    # Bare numbers count too: "the diagnostic visit is eighty-nine fifty" prices the visit.
    priced_service = bool(mentions and (values.amounts or values.numbers))
    named = None
    if not (ph.PROMO.search(lower) or _OFFER.search(lower) or priced_service):
        named = _named_policy(lower, facts, strict or listed_promo, context.caller)
    answered = values.amounts or values.durations or values.percents
    if named is None and context.policy and not mentions and answered:
        # "Is there a charge for stairs?" "Yes, $45 per flight": the value is the policy's.
        named = context.policy
    if named is not None and not (topics and ph.REFUND.search(named.replace("_", " "))):
        # The policy's own words carry its values; the typed topics would misread them.
        claims.append(NamedPolicyClaim(clause.strip(), named))
        for found in (values.amounts, values.percents, values.durations, values.numbers):
            found.clear()
        topics = []
    claims += policy_claims(lower, topics, values, mentions)
    if named is not None:
        # The named policy's check settles the clause's promise; no second, vaguer claim on it.
        claims = [
            c
            for c in claims
            if not (isinstance(c, PolicyClaim) and c.topic == "other")
            and not (isinstance(c, LooseClaim) and c.category is Category.POLICY)
        ]
    priced = bool(PRICE_CUE.search(lower) or mentions or context.asks_price) and not topics
    counts = take_counts(values, services) if priced else ()
    ranges = read_prices(values, priced)
    named_services = tuple(dict.fromkeys(service for service, _ in mentions))
    claims += _discounts(values, lower, named_services)
    timed = bool(values.times or values.days)
    is_hours = hours_here or ((hours_before or context.asks_hours) and timed and not available)
    if is_hours:
        claims += hours_claims(clause, lower, values, context)
    elif available and (timed or ph.NO_AVAILABILITY.search(lower)):
        claims += availability_claims(clause, lower, values)
    claims += [RangeClaim(r.heard, r.low, r.high, _service_at(mentions, context)) for r in ranges]
    claims += price_claims(lower, topics, values, mentions, context, counts, facts)
    # "$2,232 with the discount": the discounted price is the claim about the promotion.
    priced_promo = any(isinstance(c, PriceClaim) and c.discounted for c in claims)
    claims += _promotions(clause, lower, values, named_services, priced_promo)
    if listed_promo and not claims and _OFFER.search(lower):
        claims.append(PromoClaim(clause.strip(), lower, named_services))
    if ph.ABOUT_TO_CHECK.search(lower.strip()):
        claims = [c for c in claims if not (isinstance(c, AvailabilityClaim) and c.cents)]
    claims += _leftovers(values, topics, is_hours, available and timed)
    if not claims:
        claims += uncovered(clause, lower, facts)
    return claims, [service for service, _ in reversed(mentions)]


def _named_policy(lower: str, facts: ConstraintList, strict: bool, caller: bool) -> str | None:
    """The named policy a clause speaks of; a question back or filler words name none."""
    text = lower.strip()
    if not caller and (text.endswith("?") or ph.QUESTION_START.search(text)):
        return None
    if ph.DECLINE.search(text):
        # "I can't take payments over the phone": the agent's own limit, no policy claim.
        return None
    for lead in (FILLER.search(text), GREETING.search(text)):
        if lead:
            text = text[lead.end() :]
    found = find_policy(text, facts.policies.other, service_words(facts.services))
    if found is None or (strict and not found[1]):
        return None
    return found[0]


def _discounts(values: Values, lower: str, services: tuple[str, ...]) -> list[Claim]:
    """ "$20 off": an amount off is a promotion's, never a price."""
    tokens = values.spoken.tokens
    found: list[Claim] = []
    for amount in list(values.amounts):
        before = values.spoken.text[: tokens[amount.first].start].lower()
        saved = amount.first > 0 and tokens[amount.first - 1].text in _SAVE
        # "the referral discount is ten dollars": the amount is the discount's.
        named_off = bool(_DISCOUNT_IS.search(before))
        if named_off and not saved:
            found.append(DiscountClaim(amount.heard, amount.value, lower, services))
            values.amounts.remove(amount)
            continue
        if saved or (amount.end < len(tokens) and tokens[amount.end].text in _OFF):
            end = min(amount.end + 1, len(tokens))
            heard = values.spoken.fragment(amount.first - saved, end)
            found.append(DiscountClaim(heard, amount.value, lower, services))
            values.amounts.remove(amount)
    return found


def _service_at(mentions: list[tuple[str, int]], context: Context) -> str | None:
    """The service a range prices: the one the clause names, else the one the caller asked of."""
    if mentions:
        return mentions[0][0]
    return context.services[0] if context.services else None


def _identifiers(tokens: tuple[Token, ...], said: tuple[str, ...] = ()) -> set[int]:
    """Tokens that name an order or a reference, which are identifiers, not claims."""
    skip: set[int] = {i for i, token in enumerate(tokens) if token.text in said}
    for index, token in enumerate(tokens):
        if token.text in ph.IDENTIFIER_CUES or (token.text == "number" and index > 0):
            for follower in range(index + 1, min(index + 6, len(tokens))):
                skip.add(follower)
                if tokens[follower].pause_after:
                    break
    return skip


def _promotions(
    clause: str, lower: str, values: Values, services: tuple[str, ...], priced: bool = False
) -> list[Claim]:
    claims: list[Claim] = [PercentClaim(p.heard, p.value, lower, services) for p in values.percents]
    values.percents.clear()
    if not claims and not priced and ph.PROMO.search(lower):
        claims.append(PromoClaim(clause.strip(), lower, services))
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
