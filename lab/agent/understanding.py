"""What one caller utterance says: its kind, the action it is about and the values it names.

Rule-based and deterministic, for typed text and for what Whisper tiny.en writes alike.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from lab.agent.numbers import (
    TEENS,
    TENS,
    UNITS,
    Reading,
    Spoken,
    Token,
    decimal_cents,
    read_amount,
    read_digit_string,
    read_number,
    tokenize,
)
from lab.events.types import Action, Args, UnderstandingKind

BOOK_KEYS = ("day", "part_of_day", "time")
REFUND_KEYS = ("order_number", "amount_cents")

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "sat" and "sun" are left out: as words they are far likelier to be English than weekdays.
_DAYS = {day: day for day in _WEEKDAYS} | {
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "weds": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
}
_PARTS_OF_DAY = {
    "morning": "morning",
    "mornings": "morning",
    "afternoon": "afternoon",
    "afternoons": "afternoon",
    "evening": "evening",
    "evenings": "evening",
    "tonight": "evening",
    "night": "evening",
}
_HOURS = UNITS | {"ten": 10, "eleven": 11, "twelve": 12}
_TIME_CUES = frozenset({"at", "around", "about", "from"})
_RELATIONS = {"past": 1, "after": 1, "to": -1, "till": -1, "til": -1}
_ORDER_CUE_FILLERS = frozenset({"number", "no", "num", "#", "is", "was", "id"})
# "number" alone starts an order number unless it is plainly some other number.
_OTHER_NUMBERS = frozenset(
    {"phone", "telephone", "cell", "mobile", "card", "account", "credit", "contact", "my", "your"}
)
_NEGATORS = frozenset({"not", "never", "cannot", "dont", "cant"})
_NEGATOR_PAIRS = frozenset({("instead", "of"), ("rather", "than"), ("other", "than")})
# Words that start a new clause, so a negation before them does not reach past them.
_SCOPE_ENDS = frozenset(
    {"but", "i", "i'd", "i'll", "i'm", "let's", "make", "how", "what", "instead", "rather"}
    | {"please", "so", "yes", "yeah", "actually", "just", "only"}
)

_UNSUPPORTED = re.compile(
    r"\b(?:"
    r"cancel (?:my |our |the |an? )?(?:\w+ )?"
    r"(?:subscription|membership|account|plan|order|contract)"
    r"|(?:cancel|move|change|modify|update|shift|push back) (?:my|our|(?:the |an |my )?existing)"
    r" (?:\w+ )?(?:appointment|booking|reservation)"
    r"|reschedul\w*|postpone\w*"
    r"|(?:transfer|connect|put) me|(?:speak|talk|speaking|talking) (?:to|with)"
    r"|real person|human|manager|supervisor|representative|operator|customer service"
    r"|weather|forecast|temperature"
    r"|(?:change|update|reset|edit|fix|new|forgot) (?:my |the |our )?(?:\w+ )?"
    r"(?:address|password|email|phone number|username|payment method|card details)"
    r"|where(?:'s| is) my order|track\w* (?:my |the )?order|order status|status of my order"
    r"|(?:place|make) an? (?:new )?order|order (?:some|me)|(?:want|like|need) to order"
    r")\b"
)
_CORRECTION = re.compile(
    r"\b(?:actually|make (?:that|it)|instead|change (?:it |that |this )?to|switch (?:it |that )?to"
    r"|wait no|no wait|rather|i meant|i mean|scratch that|correction|how about|what about"
    r"|on second thought)\b"
    r"|(?<!order )\b(?:no|nope|nah)\b"
    r"|\b(?:yes|yeah|yep|ok|okay|sure)\b.*\bbut\b"
)
_CONFIRM = re.compile(
    r"\b(?:yes|yeah|yep|yup|yea|affirmative|absolutely|definitely|correct|please do|do it|do that"
    r"|go for it|that's (?:right|correct)|that is (?:right|correct)"
    r"|(?:i )?confirm(?:ed)?(?: (?:the|that|this|my) (?:refund|booking|appointment|reservation"
    r"|slot|one|order)| it| that| this)?"
    r"|(?:go ahead|proceed)(?: (?:with|and) (?:the|that|it)(?: (?:refund|booking|appointment))?)?"
    r"|book (?:it|that|this|(?:the|that|this) (?:appointment|booking|slot|one))"
    r"|refund (?:it|that|this))\b"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|i guess|i suppose|i think|i believe|hmm+|hm"
    r"|so far|let me think|think about it|kind of|sort of|wait|hold on|hang on|one sec(?:ond)?"
    r"|for now|i hope)\b"
)
_UNCERTAIN = re.compile(r"\b(?:not (?:sure|certain)|unsure|(?:don't|dont|do not) know|no idea)\b")
_PLEASANT = re.compile(
    r"\b(?:no (?:problem|worries|doubt)|(?:don't|do not|wouldn't|would not) mind|why not)\b"
)
_POSITIVE = re.compile(
    r"\b(?:ok|okay|okey|alright|all right|sure|fine|good(?! (?:morning|afternoon|evening|night))"
    r"|great|nice|perfect|cool|lovely|excellent|awesome|wonderful|brilliant|right|works?"
    r"|could work|sounds (?:good|great|fine|right|perfect|ok|okay|like a plan)|uh huh|mm hmm|mhm"
    r"|thanks|thank you|i think so|i guess|i suppose|maybe|perhaps|probably|possibly"
    r"|let me think|i believe so|fair enough|got it|understood)\b"
)
_DECLINE = re.compile(
    r"\b(?:no|nope|nah|negative|not (?:yet|now|today|right|correct|quite|really)|\w+n't|dont|cant"
    r"|do not|cannot|never ?mind|forget (?:it|that|about it)|cancel|stop|hold off|wrong"
    r"|incorrect)\b"
)
_CLARIFY = re.compile(
    r"\b(?:repeat|say (?:that|it) again|pardon|come again|what did you say"
    r"|(?:didn't|did not) (?:catch|hear|get)|can you hear me|are you there)\b"
)
_ASKING = re.compile(
    r"^(?:(?:please|so|um|uh|hi|hello|hey|and) )*(?:can|could|would|will) you\b"
    r"|\b(?:i want|i need|i'd like|i would like|i wanna|i'm looking for|i am looking for|help me"
    r"|how do i|how can i|can i|could i|may i|tell me|give me|i have a question|is it possible)\b"
)
_REFUND = re.compile(
    r"\b(?:refund\w*|re fund\w*|money back|reimburse\w*|charge ?back|pay me back)\b"
)
# How Whisper tiny.en writes "refund" without a prompt; trusted only beside an order or an amount.
_REFUND_ASR = re.compile(r"\b(?:refined|refine|refind|refinds|we fund|refun)\b")
_ORDER = re.compile(r"\border\b")
_IN_ORDER_TO = re.compile(r"\bin order to\b")
_BOOK = re.compile(
    r"\b(?:book|booking|bookings|appointment|appointments|slot|slots|schedule|reserve|reservation"
    r"|availability|available|opening|openings)\b"
)


@dataclass(frozen=True)
class Understanding:
    """One utterance understood: only the values it names, and the text each was heard as."""

    kind: UnderstandingKind
    action: Action | None = None
    args: Args = field(default_factory=dict)
    heard: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Clock:
    """A time as said, before a part of the day settles whether it is morning or afternoon."""

    hour: int
    minute: int
    meridiem: str | None

    def at(self, part_of_day: str | None) -> str:
        hour = self.hour
        if self.meridiem == "am":
            hour %= 12
        elif self.meridiem == "pm":
            hour = hour if hour >= 12 else hour + 12
        elif 1 <= hour < 12 and part_of_day in ("afternoon", "evening"):
            hour += 12
        elif 1 <= hour <= 6 and part_of_day is None:
            # Nobody books a slot at three in the night: an unqualified small hour is afternoon.
            hour += 12
        return f"{hour:02d}:{self.minute:02d}"


@dataclass(frozen=True)
class _Phrases:
    """The tokens joined into one lowercase line, so that phrases match across them."""

    line: str
    starts: tuple[int, ...]

    @classmethod
    def of(cls, spoken: Spoken) -> _Phrases:
        starts, at = [], 0
        for token in spoken.tokens:
            starts.append(at)
            at += len(token.text) + 1
        return cls(" ".join(token.text for token in spoken.tokens), tuple(starts))

    def find(self, pattern: re.Pattern[str]) -> set[int]:
        """Indices of the tokens that pattern's matches cover."""
        covered: set[int] = set()
        for match in pattern.finditer(self.line):
            first = bisect_left(self.starts, match.start())
            covered.update(range(first, max(first + 1, bisect_left(self.starts, match.end()))))
        return covered


_AnyReading = Reading[str] | Reading[int] | Reading[_Clock]
_Candidate = tuple[str, _AnyReading]


def understand(text: str) -> Understanding:
    """Classify one utterance and pull out the booking or refund values it names."""
    spoken = tokenize(text)
    phrases = _Phrases.of(spoken)
    if phrases.find(_UNSUPPORTED):
        # The agent refuses these outright, so nothing in them may feed an intent.
        return Understanding(UnderstandingKind.UNSUPPORTED)
    negated = _negated(spoken.tokens)
    order_words = phrases.find(_ORDER) - phrases.find(_IN_ORDER_TO)
    refund_words = phrases.find(_REFUND) | order_words
    candidates, refund_context = _extract(spoken, refund_context=bool(refund_words))
    if refund_context:
        refund_words |= phrases.find(_REFUND_ASR)
    book_words = phrases.find(_BOOK)
    kept = _latest(candidates, negated)
    action = _action(refund_words, book_words, kept)
    keys = REFUND_KEYS if action is Action.REFUND else BOOK_KEYS if action else ()
    args, heard = _values({key: kept[key] for key in keys if key in kept})

    if args:
        corrected = phrases.find(_CORRECTION) or any(
            reading.first in negated for _, reading in candidates
        )
        kind = UnderstandingKind.CORRECTION if corrected else UnderstandingKind.REQUEST
        return Understanding(kind, action, args, heard)
    confirming = phrases.find(_CONFIRM)
    if (refund_words | book_words) - confirming - negated:
        return Understanding(UnderstandingKind.REQUEST, action)
    return Understanding(_reply_kind(phrases, confirming), action)


def _reply_kind(phrases: _Phrases, confirming: set[int]) -> UnderstandingKind:
    """The kind of an utterance naming nothing to book or refund: mostly a reply to a readback."""
    if phrases.find(_CLARIFY):
        return UnderstandingKind.UNCLEAR
    uncertain = phrases.find(_UNCERTAIN)
    pleasant = phrases.find(_PLEASANT)
    if phrases.find(_DECLINE) - uncertain - pleasant:
        # Any refusal outweighs any yes in the same breath: mixed signals never confirm.
        return UnderstandingKind.DECLINE
    if confirming and not (uncertain or phrases.find(_HEDGE)):
        return UnderstandingKind.CONFIRM
    if confirming or pleasant or phrases.find(_POSITIVE) - uncertain:
        return UnderstandingKind.POSITIVE
    if phrases.find(_ASKING):
        return UnderstandingKind.UNSUPPORTED
    return UnderstandingKind.UNCLEAR


def _action(
    refund_words: set[int], book_words: set[int], kept: dict[str, _AnyReading]
) -> Action | None:
    """The action talked about: a word that names it first, then the kind of values given."""
    if refund_words:
        return Action.REFUND
    if book_words:
        return Action.BOOK
    if any(key in kept for key in REFUND_KEYS):
        return Action.REFUND
    if any(key in kept for key in BOOK_KEYS):
        return Action.BOOK
    return None


def _values(kept: dict[str, _AnyReading]) -> tuple[Args, dict[str, str]]:
    """Canonical args and what each was heard as; a time takes its half of the day from the rest."""
    part_of_day = kept["part_of_day"].value if "part_of_day" in kept else None
    args: Args = {}
    for key, reading in kept.items():
        value = reading.value
        args[key] = value.at(part_of_day) if isinstance(value, _Clock) else value
    return args, {key: reading.heard for key, reading in kept.items()}


def _latest(candidates: list[_Candidate], negated: set[int]) -> dict[str, _AnyReading]:
    """For each key, the last value said that was not negated ("Thursday, not Tuesday")."""
    kept: dict[str, _AnyReading] = {}
    for key, reading in sorted(candidates, key=lambda candidate: candidate[1].first):
        if reading.first not in negated:
            kept[key] = reading
    return kept


def _extract(spoken: Spoken, *, refund_context: bool) -> tuple[list[_Candidate], bool]:
    """Every value named, most specific readings first so that each token is read once.

    Also says whether the utterance talks money: a refund word, an amount or an order number.
    """
    tokens = spoken.tokens
    claimed: set[int] = set()
    candidates: list[_Candidate] = []

    def claim(key: str, reading: _AnyReading) -> None:
        candidates.append((key, reading))
        claimed.update(range(reading.first, reading.end))

    def free_end(first: int) -> int:
        return next((index for index in range(first, len(tokens)) if index in claimed), len(tokens))

    for index in range(len(tokens)):
        if index not in claimed and (amount := read_amount(spoken, index, free_end(index))):
            claim("amount_cents", amount)
    for index in range(len(tokens)):
        if index not in claimed and _cues_order_number(tokens, index):
            start = index + 1
            while start < len(tokens) and tokens[start].text in _ORDER_CUE_FILLERS:
                start += 1
            order = None if start in claimed else read_digit_string(spoken, start, free_end(start))
            if order:
                claim("order_number", order)
    refund_context = refund_context or bool(candidates)
    for index, token in enumerate(tokens):
        # A bare "25.00" is money in a refund and a clock ("9.30") everywhere else it can be.
        priced = index not in claimed and re.fullmatch(r"[\d,]+\.\d\d", token.text)
        if priced and (refund_context or not _is_clock(token.text)):
            cents = decimal_cents(token.text)
            if cents is not None:
                claim("amount_cents", spoken.reading(cents, index, index + 1))
    for index in range(len(tokens)):
        if index not in claimed and (time := _read_time(spoken, index, free_end(index))):
            claim("time", time)
    for index, token in enumerate(tokens):
        if index in claimed:
            continue
        if day := _day(token.text):
            claim("day", spoken.reading(day, index, index + 1))
        elif part := _part_of_day(spoken, index):
            claim("part_of_day", spoken.reading(part, index, index + 1))
    return candidates, refund_context


def _cues_order_number(tokens: tuple[Token, ...], index: int) -> bool:
    text = tokens[index].text
    if text in ("order", "#"):
        return True
    return text == "number" and (index == 0 or tokens[index - 1].text not in _OTHER_NUMBERS)


def _is_clock(text: str) -> bool:
    match = re.fullmatch(r"(\d{1,2})[.:](\d\d)", text)
    return bool(match) and int(match.group(1)) <= 23 and int(match.group(2)) < 60


def _day(text: str) -> str | None:
    text = text.removesuffix("'s")
    # "Tuesdays" asks for a Tuesday.
    return _DAYS.get(text[:-1] if text.endswith("days") else text)


def _part_of_day(spoken: Spoken, index: int) -> str | None:
    """Morning, afternoon or evening, from the word or from an a.m./p.m. that no time claimed."""
    text = spoken.tokens[index].text
    if text in _PARTS_OF_DAY:
        # "Good morning" greets; it asks for no morning.
        greeting = index > 0 and spoken.tokens[index - 1].text == "good"
        return None if greeting else _PARTS_OF_DAY[text]
    raw = spoken.fragment(index, index + 1)
    if text == "pm" or (text == "am" and ("." in raw or raw == "AM")):
        # A plain lowercase "am" is the verb ("I am"), not the morning.
        return "morning" if text == "am" else "afternoon"
    return None


def _read_time(spoken: Spoken, first: int, stop: int) -> Reading[_Clock] | None:
    """A clock time at tokens[first]: "9:30", "930 am", "nine thirty", "quarter to ten", "noon"."""
    if spoken.tokens[first].text in ("noon", "midday"):
        return spoken.reading(_Clock(12, 0, "pm"), first, first + 1)
    return _read_relative_time(spoken, first, stop) or _read_clock_time(spoken, first, stop)


def _read_relative_time(spoken: Spoken, first: int, stop: int) -> Reading[_Clock] | None:
    """A time told against the hour: "half past two", "a quarter to ten", "ten past nine"."""
    tokens = spoken.tokens
    index = first + (tokens[first].text == "a" and first + 1 < stop)
    if index >= stop:
        return None
    word = tokens[index].text
    if word in ("quarter", "half"):
        minutes, index = (15 if word == "quarter" else 30), index + 1
    elif first == index and (number := read_number(spoken, index, stop)):
        # Only round minutes: "two to four" is a range far more often than 3:58.
        if number.value % 5 or not 5 <= number.value <= 25:
            return None
        minutes, index = number.value, number.end
        index += index < stop and tokens[index].text in ("minute", "minutes")
    else:
        return None
    if index + 1 >= stop or tokens[index].text not in _RELATIONS:
        return None
    forward = _RELATIONS[tokens[index].text] > 0
    hour = _hour(tokens[index + 1].text)
    if hour is None or (word == "half" and not forward):
        return None
    meridiem, end, _ = _time_suffix(tokens, index + 2, stop, hour)
    if not forward:
        # "Quarter to ten" is 9:45: the hour before, sixty minutes less.
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes
    clock = _Clock(hour, minutes, meridiem)
    return spoken.reading(clock, first, end)


def _read_clock_time(spoken: Spoken, first: int, stop: int) -> Reading[_Clock] | None:
    """A time told by its hour: "9:30", "9.30", "930 am", "2 PM", "nine thirty", "at 3"."""
    tokens = spoken.tokens
    text = tokens[first].text
    index, minute, spelled_minutes = first + 1, 0, False
    if match := re.fullmatch(r"(\d{1,2})[:.](\d\d)", text):
        hour, minute, spelled_minutes = int(match.group(1)), int(match.group(2)), True
    elif match := re.fullmatch(r"(\d{1,2})(\d\d)", text):
        hour, minute = int(match.group(1)), int(match.group(2))
    elif re.fullmatch(r"\d{1,2}", text) or text in _HOURS:
        hour = int(text) if text.isdigit() else _HOURS[text]
        if text in _HOURS and (minutes := _read_minutes(tokens, index, stop)):
            (minute, index), spelled_minutes = minutes, True
    else:
        return None
    meridiem, end, o_clock = _time_suffix(tokens, index, stop, hour)
    cued = first > 0 and tokens[first - 1].text in _TIME_CUES
    compact = len(text) >= 3 and text.isdigit()
    # A lone number is a time only when something says so; "930" needs even more.
    evidence = bool(meridiem) or o_clock or cued
    if not (evidence or (not compact and (spelled_minutes or _part_of_day_follows(tokens, end)))):
        return None
    if minute >= 60 or hour > 23 or (meridiem == "am" and hour > 12):
        return None
    return spoken.reading(_Clock(hour, minute, meridiem), first, end)


def _read_minutes(tokens: tuple[Token, ...], index: int, stop: int) -> tuple[int, int] | None:
    """Spoken minutes after an hour word: "oh five", "fifteen", "thirty", "forty five"."""
    words = [token.text for token in tokens[index:stop]][:2]
    match words:
        case ["oh" | "o", unit, *_] if unit in UNITS:
            return UNITS[unit], index + 2
        case [teen, *_] if teen in TEENS:
            return TEENS[teen], index + 1
        case [tens, unit] if tens in TENS and TENS[tens] < 60 and unit in UNITS:
            return TENS[tens] + UNITS[unit], index + 2
        case [tens, *_] if tens in TENS and TENS[tens] < 60:
            return TENS[tens], index + 1
    return None


def _time_suffix(
    tokens: tuple[Token, ...], index: int, stop: int, hour: int
) -> tuple[str | None, int, bool]:
    """An optional "o'clock" then "am"/"pm" (or "noon" after twelve); returns them and the end."""
    o_clock = index < stop and tokens[index].text in ("o'clock", "oclock")
    index += o_clock
    meridiem = None
    if index < stop and tokens[index].text in ("am", "pm"):
        meridiem, index = tokens[index].text, index + 1
    elif index < stop and hour == 12 and tokens[index].text == "noon":
        meridiem, index = "pm", index + 1
    return meridiem, index, o_clock


def _part_of_day_follows(tokens: tuple[Token, ...], index: int) -> bool:
    """Whether "in the morning", "this evening", "tonight" or "at night" comes next."""
    words = [token.text for token in tokens[index : index + 3]]
    if words[:1] == ["tonight"] or words[:2] == ["at", "night"]:
        return True
    if len(words) == 3 and words[:2] == ["in", "the"]:
        return words[2] in _PARTS_OF_DAY
    return len(words) > 1 and words[0] == "this" and words[1] in _PARTS_OF_DAY


def _hour(text: str) -> int | None:
    hour = int(text) if text.isdigit() else _HOURS.get(text)
    return hour if hour is not None and 1 <= hour <= 12 else None


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
