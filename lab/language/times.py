"""When in the day a caller means: clock times, landmarks ("after lunch"), bounds and ranges.

Pure. Everything maps onto the calendar's parts of the day and 24-hour "HH:MM" values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.events.types import PARTS_OF_DAY
from lab.language.clock_words import (
    HOURS,
    PART_WORDS,
    digit_minutes,
    hour_of,
    is_any,
    is_or_so,
    is_word,
    part_of_day_follows,
    read_minutes,
    single_digit_minutes,
    time_suffix,
)
from lab.language.numbers import HOMOPHONES, TEENS, TENS, UNITS, Reading, Spoken, Token, read_number
from lab.language.phrases import Phrases

# Recognizer spellings of a spoken hour after "past" or "to": "Have passed to" is "half past two".
_HOUR_SOUNDALIKES = {word: int(digit) for word, digit in HOMOPHONES.items() if digit != "0"}
_TIME_CUES = frozenset({"at", "for", "say"})
# "round" too: the recognizer drops the "a" of "around".
_APPROXIMATE = frozenset({"around", "round", "about", "roughly", "approximately", "near"})
_RELATIONS = {"past": 1, "passed": 1, "pass": 1, "after": 1, "to": -1, "till": -1, "til": -1}
_AFTER = re.compile(
    r"^(?:after|later than|no earlier than|not before|from)\b|^(?:any ?time|anytime) after\b"
)
_BEFORE = re.compile(r"^(?:before|earlier than|no later than|not after|by|until|till)\b")

# Landmarks: (pattern, part of the day or None, preference or None).
_LANDMARKS: tuple[tuple[re.Pattern[str], str | None, str | None], ...] = tuple(
    (re.compile(rf"\b(?:{pattern})\b"), part, prefer)
    for pattern, part, prefer in (
        (
            r"first thing(?: in the morning)?|early (?:in the )?morning|early in the day",
            "morning",
            "earliest",
        ),
        (r"late (?:in the )?morning|just before (?:lunch|noon|midday)", "morning", "latest"),
        (r"mid ?morning", "morning", "around:10:00"),
        (r"before (?:lunch|lunchtime|noon|midday|twelve)|in the am", "morning", None),
        (
            r"early (?:in the )?afternoon|(?:right|just|straight) after (?:lunch|noon|midday)",
            "afternoon",
            "earliest",
        ),
        (r"mid ?afternoon", "afternoon", "around:15:00"),
        (
            r"late (?:in the )?afternoon|end of (?:the )?(?:day|afternoon|business)"
            r"|close of (?:business|day)|late in the day|last thing",
            "afternoon",
            "latest",
        ),
        (
            r"(?:around|about|over|at|during) (?:lunch|lunchtime|lunch time)|lunchtime|lunch time",
            "afternoon",
            "around:12:30",
        ),
        (r"after (?:lunch|lunchtime|noon|midday|twelve)|in the pm", "afternoon", None),
        (r"after (?:work|hours)", "evening", None),
        (
            r"(?:as )?early as (?:possible|you can|you have)"
            r"|earliest(?: (?:slot|time|one|possible))?",
            None,
            "earliest",
        ),
        (
            r"as late as (?:possible|you can|you have)|latest(?: (?:slot|time|one|possible))?",
            None,
            "latest",
        ),
    )
)


@dataclass(frozen=True)
class Clock:
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

    def with_meridiem(self, meridiem: str | None) -> Clock:
        return (
            self
            if self.meridiem or not meridiem or self.hour > 12
            else Clock(self.hour, self.minute, meridiem)
        )


When = str | Clock


def part_of(hhmm: str) -> str:
    """The calendar's part of the day that a 24-hour time falls in."""
    hour = int(hhmm[:2])
    return next(part for part, (start, end) in PARTS_OF_DAY.items() if start <= hour < end)


def landmarks(phrases: Phrases) -> list[tuple[str, Reading[When]]]:
    """Parts of the day said as landmarks: "first thing", "after lunch", "end of the day"."""
    found: list[tuple[str, Reading[When]]] = []
    for pattern, part, prefer in _LANDMARKS:
        for match in phrases.matches(pattern):
            reading = phrases.spoken.reading
            if part:
                found.append(("part_of_day", reading(part, match.first, match.end)))
            if prefer and prefer.startswith("around:"):
                hour, minute = prefer.removeprefix("around:").split(":")
                clock = Clock(int(hour), int(minute), None)
                found.append(("around", reading(clock, match.first, match.end)))
            elif prefer:
                found.append(("prefer", reading(prefer, match.first, match.end)))
    return found


def read_part_of_day(spoken: Spoken, index: int) -> str | None:
    """Morning, afternoon or evening, from the word or from an a.m./p.m. that no time claimed."""
    text = spoken.tokens[index].text
    if text in PART_WORDS:
        # "Good morning" greets; it asks for no morning.
        greeting = index > 0 and spoken.tokens[index - 1].text == "good"
        return None if greeting else PART_WORDS[text]
    raw = spoken.fragment(index, index + 1)
    if text == "pm" or (text == "am" and ("." in raw or raw == "AM")):
        # A plain lowercase "am" is the verb ("I am"), not the morning.
        return "morning" if text == "am" else "afternoon"
    return None


def read_bounds(spoken: Spoken, first: int, stop: int) -> list[tuple[str, Reading[Clock]]]:
    """ "around two", "after 3", "before eleven", "between two and four", "from 2 to 4"."""
    tokens = spoken.tokens
    line = " ".join(token.text for token in tokens[first:stop])
    if tokens[first].text in _APPROXIMATE or tokens[first].text == "sometime":
        index = (
            first + 1 + (tokens[first].text == "sometime" and is_word(tokens, first + 1, "around"))
        )
        index += is_word(tokens, index, "at")
        clock = _read_clock(spoken, index, stop, cued=True)
        return [("around", spoken.reading(clock.value, first, clock.end))] if clock else []
    if tokens[first].text == "between":
        return _range(spoken, first, first + 1, stop, ("and", "to"))
    if bound := _AFTER.match(line) or _BEFORE.match(line):
        index = first + len(bound.group().split())
        key = "after" if bound.re is _AFTER else "before"
        clock = _read_clock(spoken, index, stop, cued=True)
        if clock is None:
            return []
        if key == "after" and tokens[first].text == "from":
            ranged = _range(spoken, first, index, stop, ("to", "till", "until"))
            if ranged:
                return ranged
        end = clock.end + is_any(tokens, clock.end, stop, ("on", "onwards", "onward"))
        return [(key, spoken.reading(clock.value, first, end))]
    return []


def _range(
    spoken: Spoken, first: int, index: int, stop: int, joins: tuple[str, ...]
) -> list[tuple[str, Reading[Clock]]]:
    start = _read_clock(spoken, index, stop, cued=True)
    if start is None or not is_any(spoken.tokens, start.end, stop, joins):
        return []
    end = _read_clock(spoken, start.end + 1, stop, cued=True)
    if end is None:
        return []
    # "between 2 and 4 pm": the meridiem said once covers both ends.
    opening = start.value.with_meridiem(end.value.meridiem)
    return [
        ("after", spoken.reading(opening, first, end.end)),
        ("before", spoken.reading(end.value, first, end.end)),
    ]


def read_bare_range(spoken: Spoken, first: int, stop: int) -> list[tuple[str, Reading[Clock]]]:
    """ "two to four": a range only when both are hours and the second is a little later."""
    tokens = spoken.tokens
    start = _read_hour_word(tokens, first, stop)
    if start is None or not is_any(tokens, first + 1, stop, ("to", "till", "until")):
        return []
    end = _read_hour_word(tokens, first + 2, stop)
    if end is None or not 0 < end - start <= 4:
        return []
    meridiem, after, _ = time_suffix(tokens, first + 3, stop, end)
    opening, closing = Clock(start, 0, meridiem), Clock(end, 0, meridiem)
    return [
        ("after", spoken.reading(opening, first, after)),
        ("before", spoken.reading(closing, first, after)),
    ]


def is_approximate(spoken: Spoken, reading: Reading[Clock]) -> bool:
    """Whether a time was said loosely: "two-ish", "2ish", "two or so"."""
    words = [token.text for token in spoken.tokens[reading.first : reading.end]]
    return words[-1] in ("ish", "so") or words[0].endswith("ish")


def _read_hour_word(tokens: tuple[Token, ...], index: int, stop: int) -> int | None:
    if index >= stop:
        return None
    text = tokens[index].text
    hour = int(text) if re.fullmatch(r"\d{1,2}", text) else HOURS.get(text)
    return hour if hour is not None and 1 <= hour <= 12 else None


def read_time(spoken: Spoken, first: int, stop: int) -> Reading[Clock] | None:
    """A clock time at tokens[first]: "9:30", "930 am", "nine thirty", "quarter to ten", "noon"."""
    if spoken.tokens[first].text in ("noon", "midday"):
        return spoken.reading(Clock(12, 0, "pm"), first, first + 1)
    cued = first > 0 and spoken.tokens[first - 1].text in _TIME_CUES
    return _read_clock(spoken, first, stop, cued=cued)


def _read_clock(spoken: Spoken, first: int, stop: int, *, cued: bool) -> Reading[Clock] | None:
    if first >= stop:
        return None
    if spoken.tokens[first].text in ("noon", "midday"):
        return spoken.reading(Clock(12, 0, "pm"), first, first + 1)
    return read_relative_time(spoken, first, stop) or _read_clock_time(spoken, first, stop, cued)


def read_relative_time(spoken: Spoken, first: int, stop: int) -> Reading[Clock] | None:
    """A time told against the hour: "half past two", "a quarter to ten", "ten past nine"."""
    tokens = spoken.tokens
    index = first + (tokens[first].text == "a" and first + 1 < stop)
    if index >= stop:
        return None
    word = tokens[index].text
    if word in ("quarter", "half", "have"):
        minutes, index = (15 if word == "quarter" else 30), index + 1
    elif first == index and (number := read_number(spoken, index, stop)):
        # Only round minutes: "two to four" is a range far more often than 3:58.
        if number.value % 5 or not 5 <= number.value <= 25:
            return None
        minutes, index = number.value, number.end
        index += index < stop and tokens[index].text in ("minute", "minutes")
    else:
        return None
    if word == "half" and index < stop and (hour := _british_half(tokens, index, stop)):
        # "half two" is British for half past two, never half of something at two.
        meridiem, end, _ = time_suffix(tokens, index + 1, stop, hour)
        end += is_any(tokens, end, stop, ("ish",)) or is_or_so(tokens, end, stop) * 2
        return spoken.reading(Clock(hour, 30, meridiem), first, end)
    if index + 1 >= stop or tokens[index].text not in _RELATIONS:
        return None
    forward = _RELATIONS[tokens[index].text] > 0
    if word == "have" and not forward:
        return None
    hour_word = tokens[index + 1].text
    hour = hour_of(hour_word)
    if hour is None and word in ("quarter", "half", "have"):
        hour = _HOUR_SOUNDALIKES.get(hour_word)
    if hour is None or (word in ("half", "have") and not forward):
        return None
    meridiem, end, _ = time_suffix(tokens, index + 2, stop, hour)
    end += is_any(tokens, end, stop, ("ish",)) or is_or_so(tokens, end, stop) * 2
    if not forward:
        # "Quarter to ten" is 9:45: the hour before, sixty minutes less.
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes
    return spoken.reading(Clock(hour, minutes, meridiem), first, end)


def _british_half(tokens: tuple[Token, ...], index: int, stop: int) -> int | None:
    """The hour of "half two", "half 10": an hour straight after "half", ending the phrase."""
    hour = hour_of(tokens[index].text)
    if hour is None or tokens[index - 1].pause_after:
        return None
    after = tokens[index + 1].text if index + 1 < stop else None
    # "half one hour", "half ten minutes" count, and "half two thirty" is no time at all.
    if after in _COUNTS or (after is not None and after in UNITS | TEENS | TENS):
        return None
    return hour


_COUNTS = frozenset({"hour", "hours", "minute", "minutes", "day", "days", "of", "price", "off"})


def _read_clock_time(spoken: Spoken, first: int, stop: int, cued: bool) -> Reading[Clock] | None:
    """A time told by its hour: "9:30", "9.30", "930 am", "2 PM", "nine thirty", "at 3"."""
    tokens = spoken.tokens
    text = tokens[first].text.removesuffix("ish")
    index, minute, spelled_minutes = first + 1, 0, False
    if match := re.fullmatch(r"(\d{1,2})[:.](\d\d)", text):
        hour, minute, spelled_minutes = int(match.group(1)), int(match.group(2)), True
    elif match := re.fullmatch(r"(\d{1,2})(\d\d)", text):
        hour, minute = int(match.group(1)), int(match.group(2))
    elif re.fullmatch(r"\d{1,2}", text) or text in HOURS:
        hour = int(text) if text.isdigit() else HOURS[text]
        if text in HOURS and (minutes := read_minutes(tokens, index, stop)):
            (minute, index), spelled_minutes = minutes, True
        elif text.isdigit() and (minutes := digit_minutes(tokens, index, stop)):
            # "the 2 30", "thursday 10 15": a clock said as two digit groups.
            (minute, index), spelled_minutes = minutes, True
        elif text.isdigit() and (digits := single_digit_minutes(tokens, index, stop, hour)):
            (minute, index), spelled_minutes = digits, True
    else:
        return None
    meridiem, end, o_clock = time_suffix(tokens, index, stop, hour)
    compact = len(text) >= 3 and text.isdigit()
    loose = is_any(tokens, end, stop, ("ish",)) or is_or_so(tokens, end, stop)
    # A lone number is a time only when something says so; "930" needs even more.
    evidence = bool(meridiem) or o_clock or cued or loose or tokens[first].text.endswith("ish")
    if not (evidence or (not compact and (spelled_minutes or part_of_day_follows(tokens, end)))):
        return None
    if minute >= 60 or hour > 23 or (meridiem == "am" and hour > 12):
        return None
    end += is_any(tokens, end, stop, ("ish",)) or is_or_so(tokens, end, stop) * 2
    return spoken.reading(Clock(hour, minute, meridiem), first, end)
