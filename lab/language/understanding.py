"""What one caller utterance says: its kind, the action it is about and the values it names.

Rule-based and deterministic, for typed text and for what Whisper tiny.en writes alike. The
context (what the call is about, what the agent asked, the calendar's week) is given as data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from lab.events.types import (
    Action,
    Args,
    CallerUnderstood,
    Confirmation,
    CueKind,
    UnderstandingKind,
)
from lab.language.days import Week
from lab.language.numbers import Reading, Token, tokenize
from lab.language.phrases import Phrases
from lab.language.references import read_reference
from lab.language.replies import classify_question_back, classify_reply, explicit_cues
from lab.language.scope import (
    UNSUPPORTED,
    classify_business_question,
    classify_follow_up,
    classify_identity,
    classify_question,
    classify_scope,
    confirmation_of,
)
from lab.language.times import Clock, part_of
from lab.language.values import Candidate, Value, extract

WHEN_KEYS = ("part_of_day", "time", "around", "after", "before", "prefer")
BOOK_KEYS = ("day", *WHEN_KEYS)
REFUND_KEYS = ("order_number", "amount_cents")

_NEGATORS = frozenset({"not", "never", "cannot", "dont", "cant"})
_NEGATOR_PAIRS = frozenset({("instead", "of"), ("rather", "than"), ("other", "than")})
# Words that start a new clause, so a negation before them does not reach past them.
_SCOPE_ENDS = frozenset(
    {"but", "i", "i'd", "i'll", "i'm", "let's", "make", "how", "what", "instead", "rather"}
    | {"please", "so", "yes", "yeah", "actually", "just", "only"}
)
_CORRECTION = re.compile(
    r"\b(?:actually|make (?:that|it)|instead|change (?:it |that |this )?to|switch (?:it |that )?to"
    r"|wait no|no wait|rather|i meant|i mean|scratch that|correction|how about|what about"
    r"|on second thought|should be|sorry)\b"
    r"|\bwrong\b"
    r"|\b(?:lower|raise|reduce|increase|drop|bring) (?:it|that|the amount)(?: down| up)? to\b"
    r"|(?<!order )\b(?:no|nope|nah)\b(?! (?:later|earlier|more|less|sooner|problem|worries))"
    r"|\b(?:yes|yeah|yep|ok|okay|sure)\b.*\bbut\b"
)
_ASKING = re.compile(
    r"\b(?:i want|i need|i'd like|i would like|i wanna|i'm looking for|i am looking for"
    r"|can i|could i|can you|could you|would you|help me|get me|i'm calling|looking to)\b"
)
_REFUND = re.compile(
    r"\b(?:refund\w*|re fund\w*|money back|reimburse\w*|charge ?back|pay me back|get \w+ back)\b"
)
# How Whisper tiny.en writes "refund" without a prompt; trusted only beside an order or an amount.
_REFUND_ASR = re.compile(r"\b(?:refined|refine|refind|refinds|we fund|refun)\b")
_ORDER = re.compile(r"\border\b")
_IN_ORDER_TO = re.compile(r"\bin order to\b")
_BOOK = re.compile(
    r"\b(?:book|booking|bookings|appointment|appointments|slot|slots|schedule|reserve|reservation"
    r"|availability|available|opening|openings|come in|see someone)\b"
)


@dataclass(frozen=True)
class Context:
    """What the agent knows when a turn arrives: the call's action, what it asked, its week,
    and whether the caller's last turn asked about the business."""

    action: Action | None = None
    expecting: tuple[str, ...] = ()
    proposal_action: Action | None = None
    week: Week | None = None
    # The turn before was a question about the business, so "And on Saturday?" continues it.
    after_question: bool = False
    # The values of the current request, which "the day after that" and "half of it" refer to.
    current: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Understanding:
    """One utterance understood: only the values it names, and the text each was heard as."""

    kind: UnderstandingKind
    action: Action | None = None
    args: Args = field(default_factory=dict)
    heard: dict[str, str] = field(default_factory=dict)
    confirmation: Confirmation = Confirmation.UNCLEAR
    cue_kind: CueKind | None = None
    cue: str | None = None
    ambiguous: dict[str, str] = field(default_factory=dict)

    def event(self, utterance_event_id: str) -> CallerUnderstood:
        return CallerUnderstood(
            utterance_event_id=utterance_event_id,
            kind=self.kind,
            action=self.action,
            args=self.args,
            heard=self.heard,
            confirmation=self.confirmation,
            cue_kind=self.cue_kind,
            cue=self.cue,
            ambiguous=self.ambiguous,
        )


def merge_request(base: Args, understood: CallerUnderstood) -> Args:
    """A turn's values over the request's earlier ones; a new time replaces every "when"."""
    said = set(understood.args) | set(understood.ambiguous)
    if said & set(WHEN_KEYS):
        said |= set(WHEN_KEYS)
    elif "day" in said:
        # "Not Tuesday, Wednesday": the part of the day already given still holds; a clock
        # time was a slot on the old day, so it goes.
        said |= set(WHEN_KEYS) - {"part_of_day", "prefer"}
    return {k: v for k, v in base.items() if k not in said} | dict(understood.args)


def understand(text: str, context: Context | None = None) -> Understanding:
    """Classify one utterance and pull out the booking or refund values it names."""
    context = context or Context()
    spoken = tokenize(text)
    phrases = Phrases.of(spoken)
    not_confirm = Confirmation.NOT_CONFIRM
    if identity := classify_identity(phrases):
        return Understanding(identity.kind, None, {}, {}, not_confirm, "identity", identity.cue)
    follow_up = classify_follow_up(phrases, after_question=context.after_question)
    if business := classify_business_question(phrases) or follow_up:
        # "Are you open on Sunday?" asks about the business, not for a Sunday slot.
        return Understanding(
            business.kind, None, {}, {}, not_confirm, "business_fact", business.cue
        )
    changes, said = read_reference(phrases, context.current)
    if changes and context.action is not None:
        # "I meant the day after that, in the afternoon": a correction of the request the call
        # is making, with whatever else the rest of the words change.
        rest = understand(text.replace(said, " "), replace(context, current={}))
        merges = rest.kind in (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION)
        args = {**(rest.args if merges else {}), **changes}
        heard = {**(rest.heard if merges else {}), **dict.fromkeys(changes, said)}
        return Understanding(
            UnderstandingKind.CORRECTION,
            context.action,
            args,
            heard,
            not_confirm,
            "values",
            said,
        )
    if cue := phrases.first(UNSUPPORTED):
        # The agent refuses these outright, so nothing in them may feed an intent.
        return Understanding(
            UnderstandingKind.UNSUPPORTED, None, {}, {}, not_confirm, "out_of_scope", cue
        )
    if context.proposal_action and (back := classify_question_back(phrases)):
        return Understanding(back.kind, None, {}, {}, back.confirmation, back.cue_kind, back.cue)
    negated = _negated(spoken.tokens)
    order_words = phrases.find(_ORDER) - phrases.find(_IN_ORDER_TO)
    refund_words = phrases.find(_REFUND) | order_words
    book_words = phrases.find(_BOOK)
    money_talk = bool(refund_words) or (context.action is Action.REFUND and not book_words)
    candidates, money_talk = extract(
        spoken, phrases, money_talk=money_talk, expecting=context.expecting, week=context.week
    )
    if money_talk:
        refund_words |= phrases.find(_REFUND_ASR)
    corrections = phrases.find(_CORRECTION)
    negated = _unnegate_replacements(candidates, negated, spoken.tokens)
    kept = _latest(candidates, negated, corrections)
    action = _action(refund_words, book_words, kept, context)
    keys = REFUND_KEYS if action is Action.REFUND else BOOK_KEYS if action else ()
    args, heard, ambiguous = _values({key: kept[key] for key in keys if key in kept})

    if args or ambiguous:
        corrected = corrections or any(reading.first in negated for _, reading in candidates)
        kind = UnderstandingKind.CORRECTION if corrected else UnderstandingKind.REQUEST
        cue = next(iter(heard.values()), None) or next(iter(ambiguous.values()), None)
        return Understanding(kind, action, args, heard, not_confirm, "values", cue, ambiguous)
    if question := classify_question(phrases):
        return Understanding(
            question.kind, action, {}, {}, not_confirm, question.cue_kind, question.cue
        )
    explicit = explicit_cues(phrases)
    asked = phrases.find(_ASKING)
    requested = (refund_words | book_words) - explicit - negated
    if requested and (asked or not _reply_words(phrases)):
        cue = spoken.fragment(min(requested), max(requested) + 1)
        return Understanding(UnderstandingKind.REQUEST, action, {}, {}, not_confirm, "request", cue)
    reply = classify_reply(phrases, proposal_action=context.proposal_action)
    if reply is not None:
        return Understanding(
            reply.kind, action, {}, {}, reply.confirmation, reply.cue_kind, reply.cue
        )
    scope = classify_scope(phrases, asks=bool(asked))
    return Understanding(
        scope.kind, None, {}, {}, confirmation_of(scope.kind), scope.cue_kind, scope.cue
    )


def _reply_words(phrases: Phrases) -> bool:
    """Whether the utterance answers like a reply (yes, no, okay...) rather than asks."""
    return classify_reply(phrases, proposal_action=None) is not None


def _action(
    refund_words: set[int], book_words: set[int], kept: dict[str, Reading[Value]], context: Context
) -> Action | None:
    """The action talked about: a word that names it first, then the kind of values given."""
    if refund_words:
        return Action.REFUND
    if book_words:
        return Action.BOOK
    named = [key for key in kept]
    if any(key in named for key in REFUND_KEYS):
        return Action.REFUND
    if any(key in named for key in BOOK_KEYS):
        return Action.BOOK
    return None


def _values(kept: dict[str, Reading[Value]]) -> tuple[Args, dict[str, str], dict[str, str]]:
    """Canonical args, what each was heard as, and what was said but cannot be settled."""
    ambiguous = {key: reading.heard for key, reading in kept.items() if reading.value is None}
    settled = {key: reading for key, reading in kept.items() if reading.value is not None}
    part = settled["part_of_day"].value if "part_of_day" in settled else None
    args: Args = {}
    for key, reading in settled.items():
        value = reading.value
        if isinstance(value, Clock):
            args[key] = value.at(part if isinstance(part, str) else None)
        elif value is not None:
            args[key] = value
    if "part_of_day" not in args and (derived := _derived_part(args)):
        args["part_of_day"] = derived
        reading = next(settled[key] for key in ("around", "after", "before") if key in settled)
        settled["part_of_day"] = reading
    return args, {key: reading.heard for key, reading in settled.items()}, ambiguous


def _derived_part(args: Args) -> str | None:
    """The part of the day that a loose time or a range lies in, when it lies in one."""
    if "around" in args:
        return part_of(str(args["around"]))
    after, before = args.get("after"), args.get("before")
    if after and before:
        hour, minute = divmod(int(str(before)[:2]) * 60 + int(str(before)[3:]) - 1, 60)
        last = f"{hour % 24:02d}:{minute:02d}"
        return part_of(str(after)) if part_of(str(after)) == part_of(last) else None
    if after and str(after) >= "17:00":
        return "evening"
    if before and str(before) <= "12:00":
        return "morning"
    return None


def _latest(
    candidates: list[Candidate], negated: set[int], corrections: set[int]
) -> dict[str, Reading[Value]]:
    """For each key, the last value said that was not negated ("Thursday, not Tuesday").

    The parts of "when" go together: after a correction, the last-named ones replace all
    the earlier ones, so "morning, no, after three" keeps no morning.
    """
    ordered = sorted(
        (item for item in candidates if item[1].first not in negated),
        key=lambda item: item[1].first,
    )
    when = [reading.first for key, reading in ordered if key in WHEN_KEYS]
    if when:
        cut = max((index for index in corrections if index < when[-1]), default=-1)
        if any(first > cut for first in when):
            ordered = [item for item in ordered if item[0] not in WHEN_KEYS or item[1].first > cut]
    return {key: reading for key, reading in ordered}


def _unnegate_replacements(
    candidates: list[Candidate], negated: set[int], tokens: tuple[Token, ...]
) -> set[int]:
    """ "not Tuesday Thursday": a negation covers its first value; the next one replaces it.

    Joined by "or" or "and" ("not Tuesday or Thursday"), both stay negated.
    """
    kept = set(negated)
    last: dict[str, Reading[Value]] = {}
    for key, reading in sorted(candidates, key=lambda item: item[1].first):
        before = last.get(key)
        last[key] = reading
        if before is None or reading.first not in negated or before.first not in negated:
            continue
        between = {token.text for token in tokens[before.end : reading.first]}
        if not between & {"or", "and", "nor", "either", "neither"}:
            kept -= set(range(reading.first, reading.end))
    return kept


def _negated(tokens: tuple[Token, ...]) -> set[int]:
    """Tokens inside a negation's reach: from "not", "don't", "instead of" to the clause's end."""
    negated: set[int] = set()
    for index, token in enumerate(tokens):
        if token.text in _NEGATORS or token.text.endswith("n't"):
            last = index
        elif index + 1 < len(tokens) and (token.text, tokens[index + 1].text) in _NEGATOR_PAIRS:
            last = index + 1
        else:
            continue
        if tokens[last].pause_after:
            continue
        for reach in range(last + 1, len(tokens)):
            if tokens[reach].text in _SCOPE_ENDS:
                break
            negated.add(reach)
            if tokens[reach].pause_after:
                break
    return negated
