"""Spoken numbers as callers say them and as speech recognition writes them.

Pure: every reading keeps the fragment it was heard as beside its canonical value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

# Covariant: a reading of an int is a reading of any value an int can be.
V = TypeVar("V", covariant=True)
T = TypeVar("T")

UNITS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
}
TEENS = {
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
# Words speech recognition writes for a spoken digit ("for 5.1 to" was "four five one two").
HOMOPHONES = {
    "for": "4",
    "fore": "4",
    "to": "2",
    "too": "2",
    "won": "1",
    "ate": "8",
    "oh": "0",
    "o": "0",
}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}

_NUMBER_WORDS = frozenset({*UNITS, *TEENS, *TENS, *SCALES, "zero", "and", "a"})

_TOKEN = re.compile(
    r"(?P<skip>\[[^\]]*\])"  # recognizer annotations such as [BLANK_AUDIO]
    r"|(?P<meridiem>(?<![^\W\d_])[ap]\.\s?m\b\.?)"
    r"|(?P<number>\d+(?:[.,:]\d+)*)"
    r"|(?P<word>[^\W\d_]+(?:['\u2019][^\W\d_]+)*)"
    r"|(?P<symbol>[$#])",
    re.IGNORECASE,
)
_PAUSE = re.compile(r"[,.;:!?…]")
_LITERAL = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Token:
    """One word, number, symbol or a.m./p.m. of an utterance, and where it stands in the text."""

    text: str  # lowercase, straight apostrophes; "a.m." and "p.m." become "am" and "pm"
    start: int
    end: int
    pause_after: bool  # punctuation or the end of the text follows, so a spoken phrase ends here


@dataclass(frozen=True)
class Spoken:
    """An utterance split into tokens that remember their place in its text."""

    text: str
    tokens: tuple[Token, ...]

    def fragment(self, first: int, end: int) -> str:
        """The text of tokens[first:end] exactly as written, punctuation between them included."""
        return self.text[self.tokens[first].start : self.tokens[end - 1].end]

    def reading(self, value: T, first: int, end: int) -> Reading[T]:
        """A reading of value from tokens[first:end], heard as their fragment."""
        return Reading(value, self.fragment(first, end), first, end)


@dataclass(frozen=True)
class Reading(Generic[V]):
    """A canonical value read from tokens[first:end], with the fragment it was heard as."""

    value: V
    heard: str
    first: int
    end: int


def tokenize(text: str) -> Spoken:
    """Split text into tokens, dropping annotations like [BLANK_AUDIO] and punctuation."""
    found: list[tuple[str, int, int]] = []
    for match in _TOKEN.finditer(text):
        if match.lastgroup == "skip":
            continue
        normal = match.group().lower().replace("\u2019", "'")
        if match.lastgroup == "meridiem":
            normal = normal[0] + "m"
        found.append((normal, match.start(), match.end()))
    tokens = []
    for index, (normal, start, end) in enumerate(found):
        gap_end = found[index + 1][1] if index + 1 < len(found) else len(text)
        pause = index + 1 == len(found) or bool(_PAUSE.search(text, end, gap_end))
        tokens.append(Token(normal, start, end, pause))
    return Spoken(text, tuple(tokens))


def int_to_words(number: int) -> str:
    """English words for a non-negative integer, as a caller would say it ("forty-five")."""
    if number < 0:
        raise ValueError(f"cannot say a negative number: {number}")
    if number == 0:
        return "zero"
    names = {value: word for word, value in (UNITS | TEENS | TENS).items()}
    parts: list[str] = []
    for scale_word, scale in (("million", 1_000_000), ("thousand", 1_000)):
        if number >= scale:
            parts += [int_to_words(number // scale), scale_word]
            number %= scale
    if number >= 100:
        parts += [names[number // 100], "hundred"]
        number %= 100
    if number in names:
        parts.append(names[number])
    elif number:
        parts.append(f"{names[number - number % 10]}-{names[number % 10]}")
    return " ".join(parts)


def words_to_int(text: str) -> int | None:
    """The integer that text says as a whole ("twenty-five", "a hundred and five", "4,512")."""
    spoken = tokenize(text)
    reading = read_number(spoken, 0) if spoken.tokens else None
    return reading.value if reading and reading.end == len(spoken.tokens) else None


def parse_digit_string(text: str) -> str | None:
    """The digits that text spells out as a whole ("four five one two", "for 5.1 to", "#4512")."""
    spoken = tokenize(text)
    first = 1 if spoken.tokens and spoken.tokens[0].text == "#" else 0
    reading = read_digit_string(spoken, first) if len(spoken.tokens) > first else None
    return reading.value if reading and reading.end == len(spoken.tokens) else None


def read_number(spoken: Spoken, first: int, stop: int | None = None) -> Reading[int] | None:
    """The longest whole number starting at tokens[first]: a written integer or number words."""
    tokens = spoken.tokens
    stop = len(tokens) if stop is None else stop
    if first >= stop:
        return None
    text = tokens[first].text
    if _LITERAL.fullmatch(text):
        if "." in text or not re.fullmatch(r"\d{1,3}(?:,\d{3})+|\d+", text):
            return None
        return spoken.reading(int(text.replace(",", "")), first, first + 1)
    end = first
    while end < stop and tokens[end].text in _NUMBER_WORDS:
        end += 1
    for last in range(end, first, -1):
        value = _words_value([token.text for token in tokens[first:last]])
        if value is not None:
            return spoken.reading(value, first, last)
    return None


def read_digit_string(spoken: Spoken, first: int, stop: int | None = None) -> Reading[str] | None:
    """Digits spelled from tokens[first]: "4512", "4,512", "forty five twelve", "for 5.1 to"."""
    tokens = spoken.tokens
    stop = len(tokens) if stop is None else stop
    run: list[int] = []
    while first + len(run) < stop and _is_digitish(tokens[first + len(run)].text):
        run.append(first + len(run))
    written = next((n for n, index in enumerate(run) if _is_long_literal(tokens[index].text)), None)
    if written is not None:
        # After a plainly written number ("4512 too"), "to" and "for" are words again, and
        # number words are another number ("3307 nineteen ninety nine": the recognizer wrote
        # the digits it heard as digits).
        apart = (n for n in range(written, len(run)) if not _LITERAL.fullmatch(tokens[run[n]].text))
        run = run[: next(apart, len(run))]
    run = _trim_soundalikes(tokens, run)
    words = [tokens[index].text for index in run]
    scaled = next((n for n, word in enumerate(words) if word in SCALES), None)
    if scaled is not None:
        value = _words_value(words)
        if value is not None:
            return spoken.reading(str(value), run[0], run[-1] + 1)
        run = _trim_soundalikes(tokens, run[:scaled])
        words = words[: len(run)]
    if all(word in HOMOPHONES for word in words):
        return None
    return spoken.reading(_spell(words), run[0], run[-1] + 1)


def read_digit_groups(
    spoken: Spoken, first: int, stop: int | None = None
) -> Reading[str | None] | None:
    """Digits spelled from tokens[first], unless pauses split them into groups of several digits.

    "4, 5, 1, 2" is one number said slowly; "4500, 12" may be one number or two, so its
    reading is None: the caller is asked rather than given order 450012. So is "4,500 12".
    """
    reading = read_digit_string(spoken, first, stop)
    if reading is None:
        return None
    tokens = spoken.tokens
    literals = [i for i in range(reading.first, reading.end) if _LITERAL.fullmatch(tokens[i].text)]
    if len(literals) > 1 and len(re.sub(r"\D", "", tokens[literals[0]].text)) > 2:
        # "4,500 12": a whole number, then another; never glued into one order number.
        return Reading(None, reading.heard, reading.first, reading.end)
    groups: list[list[int]] = [[]]
    for index in range(reading.first, reading.end):
        groups[-1].append(index)
        if tokens[index].pause_after and index + 1 < reading.end:
            groups.append([])
    if len(groups) == 1 or all(len(_spell([tokens[i].text for i in g])) == 1 for g in groups):
        return Reading(reading.value, reading.heard, reading.first, reading.end)
    head, tail = groups[0], groups[1]
    if _is_long_literal(tokens[head[-1]].text) and not _LITERAL.fullmatch(tokens[tail[0]].text):
        # Written digits, then words after a pause ("7301, twenty-five"): the words are apart.
        return read_digit_groups(spoken, reading.first, head[-1] + 1)
    return Reading(None, reading.heard, reading.first, reading.end)


def _trim_soundalikes(tokens: Sequence[Token], run: list[int]) -> list[int]:
    """Drop a trailing "to" or "for" that runs on into more words, as a preposition does.

    Where the phrase ends ("for 5.1 to.") it stays a digit; before "forty dollars" it does not.
    """
    end = len(run)
    while end and tokens[run[end - 1]].text in HOMOPHONES and not tokens[run[end - 1]].pause_after:
        end -= 1
    return run[:end]


def _is_digitish(text: str) -> bool:
    return bool(
        _LITERAL.fullmatch(text)
        or text in UNITS
        or text in TEENS
        or text in TENS
        or text in SCALES
        or text in HOMOPHONES
        or text == "zero"
    )


def _is_long_literal(text: str) -> bool:
    return bool(_LITERAL.fullmatch(text)) and "." not in text and len(text.replace(",", "")) > 2


def _spell(words: Sequence[str]) -> str:
    """Digits for a run read chunk by chunk: "forty five twelve" is 45 then 12."""
    digits: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in TENS and index + 1 < len(words) and words[index + 1] in UNITS:
            digits.append(str(TENS[word] + UNITS[words[index + 1]]))
            index += 1
        elif word in TENS or word in TEENS or word in UNITS:
            digits.append(str((TENS | TEENS | UNITS)[word]))
        elif word in HOMOPHONES:
            digits.append(HOMOPHONES[word])
        elif word == "zero":
            digits.append("0")
        else:
            digits.append(re.sub(r"\D", "", word))
        index += 1
    return "".join(digits)


def _words_value(words: Sequence[str]) -> int | None:
    """The value of a whole sequence of number words, or None unless it is well formed."""
    if list(words) == ["zero"]:
        return 0
    if "thousand" in words or "million" in words:
        return _scaled(words, (("million", 1_000_000), ("thousand", 1_000)))
    # "forty five hundred" and "twelve hundred" are how people say 4500 and 1200.
    return _hundreds(words, largest_head=99)


def _scaled(words: Sequence[str], scales: tuple[tuple[str, int], ...]) -> int | None:
    if not scales:
        return _hundreds(words, largest_head=9)
    (name, size), smaller = scales[0], scales[1:]
    if name not in words:
        return _scaled(words, smaller)
    at = list(words).index(name)
    head = _group_head(words[:at], largest=999)
    tail = _after_and(words[at + 1 :])
    if head is None or tail is None:
        return None
    rest = _scaled(tail, smaller) if tail else 0
    return None if rest is None else head * size + rest


def _hundreds(words: Sequence[str], largest_head: int) -> int | None:
    if "hundred" not in words:
        return _below_hundred(words)
    at = list(words).index("hundred")
    head = _group_head(words[:at], largest=largest_head)
    tail = _after_and(words[at + 1 :])
    if head is None or tail is None:
        return None
    rest = _below_hundred(tail) if tail else 0
    return None if rest is None else head * 100 + rest


def _group_head(words: Sequence[str], largest: int) -> int | None:
    """The multiplier before a scale word: "a", or a number from one up to largest."""
    head = 1 if list(words) == ["a"] else _hundreds(words, largest_head=9)
    return head if head and head <= largest else None


def _after_and(words: Sequence[str]) -> list[str] | None:
    """The words after a scale word, past an optional "and"; None for a dangling "and"."""
    if list(words[:1]) == ["and"]:
        return list(words[1:]) or None
    return list(words)


def _below_hundred(words: Sequence[str]) -> int | None:
    match list(words):
        case [word] if word in UNITS or word in TEENS or word in TENS:
            return (UNITS | TEENS | TENS)[word]
        case [tens, unit] if tens in TENS and unit in UNITS:
            return TENS[tens] + UNITS[unit]
    return None
