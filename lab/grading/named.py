"""Claims about a policy the business named (payment, deposit, insurance, warranty, parking...).

Pure. The policy a clause is about is found by the words of its name and its value (a small
retriever over the list's own text); checking compares polarity (accepted vs not, refundable vs
non-refundable), timing (due now vs billed later) and the values both name. What the words
cannot settle is flagged for a human, never passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.grading.lexicon import Duration, read_values

_WORD = re.compile(r"[a-z0-9$%]+(?:'[a-z]+)?")
_STOP = frozenset(
    {"a", "an", "the", "and", "or", "of", "to", "for", "on", "in", "at", "by", "is", "are", "be"}
    | {"been", "it", "its", "it's", "we", "we're", "we'll", "our", "you", "your", "you're", "if"}
    | {"you'll", "i", "i'm", "i'll", "this", "that", "these", "those", "with", "as", "from", "up"}
    | {"so", "do", "does", "can", "will", "just", "also", "any", "there", "there's", "here", "per"}
    | {"each", "policy", "yes", "sure", "course", "us", "you'd", "we've", "it'll", "would"}
    | {"afraid", "sorry", "unfortunately", "actually", "really", "just", "please", "okay"}
)
_NEGATORS = frozenset(
    {"no", "not", "non", "never", "without", "don't", "doesn't", "can't", "cannot", "won't"}
    | {"isn't", "aren't", "wasn't", "nor", "neither", "unable"}
)
# Verbs whose negation belongs to their object: "we don't take cash" denies cash, not taking.
_VERB_CONCEPTS = frozenset({"accept", "need"})
# Concepts that make a clause about a policy when a value word alone names it ("we take checks").
_POLICY_CUES = frozenset(
    {"accept", "fee", "payment", "need", "later", "now", "free", "refundable", "insurance"}
    | {"warranty", "deposit", "parking", "cash", "card", "check", "allowed", "policy"}
)
# Words that mean one thing for matching ("cards" and "card", "insured" and "insurance").
_CONCEPT = {
    "pay": "payment",
    "paying": "payment",
    "payments": "payment",
    "paid": "payment",
    "cards": "card",
    "credit": "card",
    "debit": "card",
    "visa": "card",
    "mastercard": "card",
    "amex": "card",
    "checks": "check",
    "cheque": "check",
    "cheques": "check",
    "insured": "insurance",
    "insurer": "insurance",
    "insurers": "insurance",
    "coverage": "insurance",
    "covered": "insurance",
    "cover": "insurance",
    "deposits": "deposit",
    "down": "deposit",
    "guarantee": "warranty",
    "guaranteed": "warranty",
    "warranties": "warranty",
    "warrantied": "warranty",
    "park": "parking",
    "parked": "parking",
    "late": "late",
    "lateness": "late",
    "refunds": "refundable",
    "refund": "refundable",
    "refunded": "refundable",
    "returnable": "refundable",
    "accepted": "accept",
    "accepts": "accept",
    "take": "accept",
    "takes": "accept",
    "taken": "accept",
    "welcome": "accept",
    "handle": "accept",
    "process": "accept",
    "file": "accept",
    "submit": "accept",
    "work": "accept",
    "fees": "fee",
    "surcharge": "fee",
    "surcharges": "fee",
    "extra": "fee",
    "charge": "fee",
    "charged": "fee",
    "charges": "fee",
    "penalty": "fee",
    "complimentary": "free",
    "included": "free",
    "upfront": "now",
    "advance": "now",
    "booking": "now",
    "today": "now",
    "immediately": "now",
    "prepay": "now",
    "prepaid": "now",
    "later": "later",
    "after": "later",
    "afterwards": "later",
    "billed": "later",
    "bill": "later",
    "invoice": "later",
    "invoiced": "later",
    "collection": "later",
    "completion": "later",
    "months": "month",
    "years": "year",
    "days": "day",
    "weeks": "week",
    "minutes": "minute",
    "mins": "minute",
    "min": "minute",
    "hours": "hour",
    "cash": "cash",
    "visits": "visit",
    "appointments": "visit",
    "appointment": "visit",
}
_CONCEPT |= {
    "cost": "fee",
    "costs": "fee",
    "missed": "miss",
    "misses": "miss",
    "missing": "miss",
    "show": "miss",
    "needed": "need",
    "needs": "need",
    "require": "need",
    "required": "need",
    "requires": "need",
    "necessary": "need",
    "partial": "half",
}
# Concepts that cannot both hold: a claim of one against a policy of the other contradicts it.
_OPPOSITES = (("now", "later"), ("free", "fee"), ("free", "payment"), ("full", "half"))


@dataclass(frozen=True)
class NamedPolicyClaim:
    heard: str
    policy: str  # the name the list gives it ("late_fee")
    denied: bool = False  # a "no" to a question about it: every polarity of heard is turned


@dataclass(frozen=True)
class Outcome:
    held: bool | None  # None: the words do not settle it
    why: str


def _words(text: str) -> list[tuple[str, bool]]:
    """Content concepts of text, each with whether a negator stands within four words before
    it in the same phrase ("no cash, balance due on delivery": the balance is not negated)."""
    found: list[tuple[str, bool]] = []
    for phrase in _PHRASE_BREAK.split(text.lower().replace("_", " ").replace("-", " ")):
        raw = [w.removesuffix("'s") for w in _WORD.findall(phrase)]
        for index, word in enumerate(raw):
            if word in _STOP or word in _NEGATORS:
                continue
            # "non" is a prefix: "non-refundable 10 percent deposit" negates refundable only.
            negated = any(
                w in _NEGATORS and (w != "non" or at == index - 1)
                for at, w in enumerate(raw[:index])
                if at >= index - 4
            )
            concept = _CONCEPT.get(word, word.rstrip("s") if len(word) > 4 else word)
            found.append((concept, negated))
    return found


# Commas and semicolons end a negation's reach; a decimal point does not.
_PHRASE_BREAK = re.compile(r"[,;]|\.(?!\d)")


def find_policy(
    lower: str, policies: dict[str, str], common: frozenset[str] = frozenset()
) -> tuple[str, bool] | None:
    """The named policy a clause is about, and whether its name (not only its value) was said.

    The name's words weigh double the value's, the name written out once more; a single value
    word names a policy only when it is specific to it and the clause speaks of policy at all.
    """
    said = {word for word, _ in _words(lower)} - _GENERIC
    texts = {
        name: {word for word, _ in _words(f"{name} {text}")} for name, text in policies.items()
    }
    cued = bool(said & _POLICY_CUES)
    best: tuple[int, str, bool] | None = None
    for name, text in policies.items():
        named = {word for word, _ in _words(name)}
        # An object policy's field names ("surcharge") name it too, however common the word.
        fields = _plain(" ".join(field_names(text))) - _STOP
        valued = {word for word, _ in _words(text)} - named - fields - _GENERIC
        own = {w for w in said & valued if len(w) > 3 and sum(w in t for t in texts.values()) == 1}
        literal = re.search(rf"\b{re.escape(name.replace('_', ' '))}\b", lower.replace("-", " "))
        # common: words of the service names ("move" of "weekend moves") name no policy alone.
        hit = (said & named | _plain(lower) & fields) - common
        score = 2 * len(hit) + len(said & valued) + bool(literal)
        found = hit or literal or len(said & valued) >= 2 or (own and cued)
        if found and (best is None or score > best[0]):
            best = (score, name, bool(hit or literal))
    return (best[1], best[2]) if best else None


def _plain(text: str) -> set[str]:
    """The words of text as written, singular: field names are matched word for word."""
    return {w.rstrip("s") if len(w) > 4 else w for w in re.findall(r"[a-z]+", text.lower())}


# Words too common in any sentence about a visit to tell one policy from another.
_GENERIC = frozenset(
    {"minute", "hour", "day", "week", "month", "year", "time", "booked", "book", "now", "later"}
    | {"customer", "first", "get", "free", "fee", "only", "car", "visit", "service", "ready"}
    | {"come", "need", "make", "want", "like", "would", "could", "should", "let", "me"}
)


def field_names(text: str) -> list[str]:
    """The field names of a policy written as "field: value" parts ("labor: 1 year; parts: ...")."""
    return [part.split(":")[0] for part in text.split("; ") if ":" in part]


def _fields_said(heard: str, text: str) -> str:
    """The parts of an object policy the claim is about: those whose field it names, and where
    those hold none of the kinds of value it names, the parts that do; all of it otherwise."""
    said = {word for word, _ in _words(heard)}
    parts = [p for p in text.split("; ") if ":" in p]
    named = [p for p in parts if {w for w, _ in _words(p.split(":")[0])} & said]
    kinds = _kinds(heard)
    if kinds and not any(_kinds(p) & kinds for p in named):
        named += [p for p in parts if _kinds(p) & kinds and p not in named]
    return "; ".join(named) if named else text


def _kinds(text: str) -> set[str]:
    values = read_values(text.replace("_", " "))
    return {kind for kind in ("amounts", "percents", "durations") if getattr(values, kind)}


def check_named(claim: NamedPolicyClaim, text: str) -> Outcome:
    """Whether the policy's own words back the claim, contradict it, or leave it open."""
    text = _fields_said(claim.heard, text)
    policy = dict(_words(text))
    name_words = {word for word, _ in _words(claim.policy)}
    said = [(word, negated != claim.denied) for word, negated in _words(claim.heard)]
    say = _say(claim.policy)
    shared = {w for w, _ in said if w in policy}
    # A verb's polarity is its object's where the object is shared ("no cash" / "don't take cash").
    compared = shared - _VERB_CONCEPTS if shared - _VERB_CONCEPTS - name_words else shared
    if claim.denied and compared - name_words:
        # "Is the deposit refundable?" "No": the no denies refundable, not the deposit itself.
        compared -= name_words
    for word, negated in said:
        if word in compared and policy[word] != negated:
            side = "not " if policy[word] else ""
            return Outcome(False, f'the {say} policy says {side}"{word}": {text}')
    # "insurance: not accepted": an affirmative sentence about it claims it is accepted.
    affirmed = not any(n for _, n in said)
    if policy.get("accept") is True and affirmed and "accept" not in name_words:
        return Outcome(False, f'the {say} policy says not "accept": {text}')
    for one, other in _OPPOSITES:
        for mine, theirs in ((one, other), (other, one)):
            if (
                any(w == mine and not n for w, n in said)
                and theirs in policy
                and mine not in policy
            ):
                return Outcome(False, f"the {say} policy says {theirs}: {text}")
    # Every word the agent adds must be the policy's own, or the words cannot settle it.
    unknown = [
        w
        for w, _ in said
        if w not in policy and w not in name_words | _VERB_CONCEPTS and w not in _ADDITIVE
    ]
    said_words = {w for w, _ in said}
    scope = _scope(text, said_words)
    if scope and unknown and not scope & said_words:
        # "Repair estimates are free too" where the policy says "on installations".
        return Outcome(False, f"the {say} policy covers only {', '.join(sorted(scope))}: {text}")
    values = _compare_values(claim.heard, text)
    if values is not None:
        return values
    agreeing = [w for w, n in said if w in policy and policy[w] == n and w not in name_words]
    if agreeing and not unknown:
        return Outcome(True, f"the {say} policy says so: {text}")
    return Outcome(None, f"the {say} policy says only: {text}")


def _scope(text: str, said: set[str]) -> set[str]:
    """What a policy limits the thing the claim names to: the words after "on" or "for" that
    follow it ("free estimates on installations" limits estimates to installations)."""
    scope: set[str] = set()
    for head, phrase in _SCOPE.findall(text.lower()):
        if {word for word, _ in _words(head)} & said:
            scope |= {word for word, _ in _words(phrase)} - _GENERIC - _STOP
    return scope


_SCOPE = re.compile(r"\b([a-z]+)\s+(?:on|for)\s+(?:the\s+|all\s+|any\s+)?([a-z]+(?:\s+[a-z]+)?)")
# Words that add to a claim without narrowing or widening what it says.
_ADDITIVE = frozenset({"too", "also", "well", "either"})


def _compare_values(heard: str, text: str) -> Outcome | None:
    """Amounts, percentages and durations the claim names against those the policy names."""
    said, listed = read_values(heard), read_values(text.replace("_", " "))
    for kind in ("amounts", "percents", "durations"):
        mine = [r.value for r in getattr(said, kind)]
        theirs = [r.value for r in getattr(listed, kind)]
        if kind == "durations" and mine and theirs and not _same_scale(mine, theirs):
            # "thirty minutes" for a job is no claim about a warranty's years.
            return Outcome(None, f"the policy names no duration of that kind: {text}")
        if mine and theirs:
            if all(value in theirs for value in mine):
                return Outcome(True, f"the policy names the same {kind[:-1]}: {text}")
            return Outcome(False, f"the policy names {', '.join(map(_show, theirs))}: {text}")
        if mine:
            return Outcome(None, f"the policy names no {kind[:-1]}: {text}")
    return None


def _same_scale(mine: list[Duration], theirs: list[Duration]) -> bool:
    """Durations under a day (a job's length) and of days or more (a window, a warranty)."""
    return {d.hours < 24 for d in mine} == {d.hours < 24 for d in theirs}


def _show(value: object) -> str:
    if isinstance(value, Duration):
        hours = value.hours
        for unit, size in (("year", 24 * 365), ("day", 24), ("hour", 1)):
            if hours >= size:
                return f"{hours / size:g} {unit}{'s' if hours != size else ''}"
        return f"{hours * 60:g} minutes"
    return f"{value}"


def _say(name: str) -> str:
    return name.replace("_", " ")
