"""The words of a clock time: an hour, its minutes, "o'clock", "am"/"pm", "or so". Pure."""

from __future__ import annotations

import re

from lab.language.numbers import TEENS, TENS, UNITS, Token

PART_WORDS = {
    "morning": "morning",
    "mornings": "morning",
    "afternoon": "afternoon",
    "afternoons": "afternoon",
    "evening": "evening",
    "evenings": "evening",
    "tonight": "evening",
    "night": "evening",
}
HOURS = UNITS | {"ten": 10, "eleven": 11, "twelve": 12}


def digit_minutes(tokens: tuple[Token, ...], index: int, stop: int) -> tuple[int, int] | None:
    """Minutes written as their own two digits after an hour in the same breath ("9 15")."""
    if index >= stop or tokens[index - 1].pause_after or not 1 <= int(tokens[index - 1].text) <= 12:
        return None
    text = tokens[index].text
    if not re.fullmatch(r"[0-5][05]", text):
        return None
    if index + 1 < stop and re.fullmatch(r"\d+", tokens[index + 1].text):
        # "4 5 1 2": a run of digits is an identifier, not a time.
        return None
    # Alone, "9 30" may be anything; after "the", a weekday or "do", or before "instead", a time.
    before = tokens[index - 2].text if index >= 2 else None
    after = tokens[index + 1].text if index + 1 < len(tokens) else None
    if before not in DIGIT_TIME_BEFORE and before not in DAY_WORDS and after != "instead":
        return None
    return int(text), index + 1


DIGIT_TIME_BEFORE = frozenset(
    {"the", "do", "at", "for", "say", "make", "try", "get", "book", "no", "maybe", "or"}
)
DAY_WORDS = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "tomorrow"}
)


def single_digit_minutes(
    tokens: tuple[Token, ...], index: int, stop: int, hour: int
) -> tuple[int, int] | None:
    """Minutes read digit by digit before am/pm, as Whisper writes a voice reading "2:00 PM"
    out: "2 0 0 PM", "9 3 0 am" (without the am/pm, three digits are no time)."""
    words = [token.text for token in tokens[index : min(index + 2, stop)]]
    if len(words) < 2 or not all(re.fullmatch(r"\d", word) for word in words):
        return None
    minute = int(words[0] + words[1])
    if minute >= 60 or not time_suffix(tokens, index + 2, stop, hour)[0]:
        return None
    return minute, index + 2


def read_minutes(tokens: tuple[Token, ...], index: int, stop: int) -> tuple[int, int] | None:
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


def time_suffix(
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


def part_of_day_follows(tokens: tuple[Token, ...], index: int) -> bool:
    """Whether "in the morning", "this evening", "tonight" or "at night" comes next."""
    words = [token.text for token in tokens[index : index + 3]]
    if words[:1] == ["tonight"] or words[:2] == ["at", "night"]:
        return True
    if len(words) == 3 and words[:2] == ["in", "the"]:
        return words[2] in PART_WORDS
    return len(words) > 1 and words[0] == "this" and words[1] in PART_WORDS


def hour_of(text: str) -> int | None:
    hour = int(text) if text.isdigit() else HOURS.get(text)
    return hour if hour is not None and 1 <= hour <= 12 else None


def is_word(tokens: tuple[Token, ...], index: int, word: str) -> bool:
    return index < len(tokens) and tokens[index].text == word


def is_any(tokens: tuple[Token, ...], index: int, stop: int, words: tuple[str, ...]) -> bool:
    return index < stop and tokens[index].text in words


def is_or_so(tokens: tuple[Token, ...], index: int, stop: int) -> bool:
    return index + 1 < stop and tokens[index].text == "or" and tokens[index + 1].text == "so"
