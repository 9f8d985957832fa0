"""Claims of what the agent can do and of what the business's policies promise.

Pure. A capability the agent refuses in the same breath ("I can't transfer calls") is no claim:
refusing is always allowed.
"""

from __future__ import annotations

import re

from lab.facts.schema import Capability
from lab.grading import phrases as ph
from lab.grading.claims import CapabilityClaim, Claim, LooseClaim, PolicyClaim, PolicyFeature
from lab.grading.lexicon import Values
from lab.grading.phrases import PolicyTopic
from lab.grading.schema import Category, Verdict

_NAMED = re.compile(r"\s+(?:directly\s+)?(?:to|with)\s+(?:[A-Z][a-z]+|our\s+manager|the\s+manager)")
_NEVER = re.compile(r"\b(?:never|no\s+matter\s+when)\b")
_FEATURES: tuple[tuple[PolicyTopic, PolicyFeature, re.Pattern[str]], ...] = (
    ("refund", "refused", ph.NO_REFUNDS),
    ("refund", "allowed", ph.REFUNDS_OFFERED),
    ("refund", "store_credit", ph.STORE_CREDIT),
    ("refund", "original_payment", ph.ORIGINAL_PAYMENT),
    ("refund", "unconditional", ph.UNCONDITIONAL),
    ("cancellation", "free", ph.FREE),
    ("reschedule", "free", ph.FREE),
)


def capability_claims(clause: str, lower: str) -> list[Claim]:
    declined = ph.DECLINE.search(lower)
    claims: list[Claim] = []
    spans: list[tuple[int, int]] = []
    for capability, pattern in ph.CAPABILITY_PHRASES:
        for match in pattern.finditer(lower):
            if any(match.start() < end and match.end() > start for start, end in spans):
                continue
            spans.append(match.span())
            if declined and declined.start() <= match.start():
                continue
            found = capability
            # "put you through to Dave": a transfer to someone by name.
            if found is Capability.TRANSFER_CALL and _NAMED.match(clause, match.end()):
                found = Capability.TRANSFER_TO_NAMED_PERSON
            claims.append(CapabilityClaim(match.group(), found, lower))
    return claims


def policy_claims(
    lower: str, topics: list[PolicyTopic], values: Values, mentions: list[tuple[str, int]]
) -> list[Claim]:
    """Policy features named, and the durations and fees that belong to a policy topic."""
    claims: list[Claim] = []
    for topic, feature, pattern in _FEATURES:
        if topic in topics and (match := pattern.search(lower)):
            # "We never charge for cancellations" names no window: free whenever you cancel.
            never = bool(_NEVER.search(lower)) and not values.durations
            if feature == "free" and (ph.ANYTIME.search(lower) or never):
                feature = "free_anytime"
            claims.append(PolicyClaim(match.group(), topic, feature))
    tokens = values.spoken.tokens
    for duration in list(values.durations):
        if topics and not (duration.value.hours == 24 and ph.ALWAYS_OPEN.search(lower)):
            topic = _nearest(topics, lower, tokens[duration.first].start)
            claims.append(PolicyClaim(duration.heard, topic, "window", hours=duration.value.hours))
            values.durations.remove(duration)
    changes: list[PolicyTopic] = [topic for topic in topics if topic != "refund"]
    for amount in list(values.amounts):
        fee_like = bool(ph.FEE.search(lower)) or not mentions
        if changes and fee_like and not ph.TRANSACTION.search(lower):
            topic = _nearest(changes, lower, tokens[amount.first].start)
            claims.append(PolicyClaim(amount.heard, topic, "fee", cents=amount.value))
            values.amounts.remove(amount)
    if (match := ph.UNLISTED_PROMISE.search(lower)) and not topics:
        claims.append(PolicyClaim(match.group(), "other", "unlisted"))
    elif (match := ph.OTHER_PROMISE.search(lower)) and not claims:
        reason = "a promise the constraint list has no field for"
        claims.append(LooseClaim(match.group(), Category.POLICY, Verdict.LLM_FLAGGED, reason))
    return claims


def _nearest(topics: list[PolicyTopic], lower: str, at: int) -> PolicyTopic:
    """The policy topic whose words stand nearest to a value at character offset at."""
    best: tuple[int, PolicyTopic] | None = None
    for name, pattern in ph.TOPICS:
        if name in topics:
            for match in pattern.finditer(lower):
                distance = min(abs(match.start() - at), abs(match.end() - at))
                if best is None or distance < best[0]:
                    best = (distance, name)
    return best[1] if best else topics[0]
