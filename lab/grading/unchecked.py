"""Fail closed: what a clause that no check covers is, once the claim extractors found nothing.

Pure. A known-safe kind (lab.grading.sentences) needs no grounding; an action a capability the
business wrote names is checked by the words of that name; a business fact on a subject the list
has nothing about is out of scope; anything else is flagged for a person, never supported.
"""

from __future__ import annotations

import re

from lab.facts.schema import Capability, ConstraintList
from lab.grading import phrases as ph
from lab.grading.claims import Claim, LooseClaim
from lab.grading.schema import Category, Verdict
from lab.grading.sentences import is_safe

UNCHECKED = "a statement no check on the list covers; a person should look"


def uncovered(clause: str, lower: str, facts: ConstraintList) -> list[Claim]:
    """Fail closed: a clause with no checkable claim is safe, out of scope, or flagged."""
    text = lower.strip()
    if is_safe(text):
        return []
    category = Category.POLICY if ph.FEE.search(text) else Category.CAPABILITY
    if (named := _named_capability(text, facts)) is not None:
        return [named]
    if ph.BUSINESS_FACT.search(text) and not _relates(text, facts):
        reason = "a fact about the business the constraint list does not cover"
        return [LooseClaim(clause.strip(), Category.CAPABILITY, Verdict.OUT_OF_SCOPE, reason)]
    return [LooseClaim(clause.strip(), category, Verdict.LLM_FLAGGED, UNCHECKED)]


_FIRST_PERSON_ACTION = re.compile(
    r"\b(?:i|we)(?:'ve|'ll|\s+have|\s+will|\s+can|\s+just|\s+already)?\s+(?:also\s+)?[a-z]+"
    r"|\blet\s+me\s+[a-z]+|\byou'll\s+(?:get|receive)\b"
)


def _named_capability(text: str, facts: ConstraintList) -> Claim | None:
    """An action the agent claims that a capability the business wrote names by its words."""
    if not _FIRST_PERSON_ACTION.search(text):
        return None
    known = {c.value for c in Capability}
    words = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", text)} - _ACTION_STOP
    for names, verdict in (
        (facts.capabilities.cannot, Verdict.UNSUPPORTED),
        (facts.capabilities.can, Verdict.SUPPORTED),
    ):
        for name in names:
            own = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", name.replace("_", " "))}
            if name not in known and words & (own - _ACTION_STOP):
                side = "can" if verdict is Verdict.SUPPORTED else "cannot"
                reason = f"the list says the agent {side} {name.replace('_', ' ')}"
                return LooseClaim(text.strip(), Category.CAPABILITY, verdict, reason)
    return None


_ACTION_STOP = frozenset({"that", "this", "with", "your", "have", "will", "just", "also", "them"})


def _relates(text: str, facts: ConstraintList) -> bool:
    """Whether a named policy or a capability the business wrote shares the clause's words."""
    words = set(re.findall(r"[a-z]{4,}", text))
    known = {c.value for c in Capability}
    written = [*facts.capabilities.can, *facts.capabilities.cannot]
    names = [*facts.policies.other, *(name for name in written if name not in known)]
    return any(words & set(re.findall(r"[a-z]{4,}", name.replace("_", " "))) for name in names)
