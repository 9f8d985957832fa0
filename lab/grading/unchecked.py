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
    r"\b(?:i|we)(?:'ve|'ll|'m|'re|'d|\s+have|\s+had|\s+will|\s+can|\s+just|\s+already|\s+am"
    r"|\s+are|\s+was|\s+were)?\s+(?:also\s+|just\s+|now\s+)?[a-z]+"
    r"|\blet\s+me\s+[a-z]+|\byou'll\s+(?:get|receive)\b"
)


def _named_capability(text: str, facts: ConstraintList) -> Claim | None:
    """An action the agent claims that a capability the business wrote names by its words."""
    if not _FIRST_PERSON_ACTION.search(text):
        return None
    known = {c.value for c in Capability}
    words = stems(text) - _ACTION_STOP
    for names, verdict in (
        (facts.capabilities.cannot, Verdict.UNSUPPORTED),
        (facts.capabilities.can, Verdict.SUPPORTED),
    ):
        for name in names:
            # What the agent cannot do is refused on any shared word; what it can, only when
            # the claim names its action (or everything the action is done to).
            close = _shares if verdict is Verdict.UNSUPPORTED else _names_action
            if name not in known and close(words, name):
                side = "can" if verdict is Verdict.SUPPORTED else "cannot"
                reason = f"the list says the agent {side} {name.replace('_', ' ')}"
                return LooseClaim(text.strip(), Category.CAPABILITY, verdict, reason)
    return None


_ACTION_STOP = frozenset(
    {"that", "this", "with", "your", "have", "will", "just", "also", "them", "now"}
    | {"right", "away", "today", "soon", "out"}
)
# Other words for what a business names in its capabilities ("a tech" is its "technician").
_SYNONYMS = {
    "tech": "technician",
    "techs": "technician",
    "engineer": "technician",
    "plumber": "technician",
    "electrician": "technician",
    "crew": "technician",
    "e-mail": "email",
    "e-mailed": "emailed",
}


def _shares(words: set[str], name: str) -> bool:
    return bool(words & (stems(name.replace("_", " ")) - _ACTION_STOP))


def _names_action(words: set[str], name: str) -> bool:
    """ "dispatch_technician": "I'm dispatching a tech", "I'll send a technician out"."""
    verb, *rest = name.lower().split("_")
    objects = stems(" ".join(rest)) - _ACTION_STOP
    verbs = {_stem(verb), *(_stem(v) for v in _VERB_SYNONYMS.get(verb, ()))}
    if words & verbs:
        return not objects or bool(words & objects)
    return bool(objects) and objects <= words


# Other verbs for an action a business names ("send a technician out" dispatches one).
_VERB_SYNONYMS = {
    "dispatch": ("send",),
    "add": ("put",),
    "email": ("emailed",),
    "text": ("sms",),
    "schedule": ("book",),
    "book": ("schedule",),
}


def stems(text: str) -> set[str]:
    """The words of text in one form whatever their tense or number ("dispatching",
    "dispatched" and "dispatches" are "dispatch"; "copies" is "copy")."""
    words = re.findall(r"[a-z][a-z-]{2,}", text.lower())
    return {_stem(_SYNONYMS.get(w, w)) for w in words}


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "sses", "xes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    return word.rstrip("e")


def _relates(text: str, facts: ConstraintList) -> bool:
    """Whether a named policy or a capability the business wrote shares the clause's words."""
    words = set(re.findall(r"[a-z]{4,}", text))
    known = {c.value for c in Capability}
    written = [*facts.capabilities.can, *facts.capabilities.cannot]
    names = [*facts.policies.other, *(name for name in written if name not in known)]
    return any(words & set(re.findall(r"[a-z]{4,}", name.replace("_", " "))) for name in names)
