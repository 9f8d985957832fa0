"""Claims about time: opening hours for days and day ranges, and slots offered or booked.

Pure. Without a.m./p.m. a time may mean either half of the day; the checks try both.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lab.facts.days import WEEKDAYS, Weekday
from lab.grading import phrases as ph
from lab.grading.claims import AvailabilityClaim, Claim, Context, HoursClaim, LooseClaim
from lab.grading.lexicon import Clock, Values
from lab.grading.schema import Category, Verdict

_THROUGH = re.compile(
    r"\b(?:straight|right)\s+through\b|\bthrough\s+lunch\b|\bno\s+(?:lunch\s+)?break\b"
    r"|\bwithout\s+(?:a\s+)?break\b|\bdon't\s+close\s+for\s+lunch\b"
)
_LUNCH = re.compile(
    r"\b(?:close[sd]?|shut|closing)\s+(?:for|over|at)\s+lunch\b|\blunch\s+(?:break|closing)\b"
)
_Span = tuple[Clock | None, Clock | None, tuple[Clock, ...]]
_BETWEEN_TIMES = frozenset({"to", "through", "thru", "till", "til", "until", "and"})
_CLOSE_CUES = frozenset({"close", "closes", "closing", "until", "till", "til", "to", "through"})
_OPEN_CUES = frozenset({"opens", "opening", "from"})
# "we're open at 3" says the shop is open then; "we open at 3" says when it opens.
_STATE = frozenset({"we're", "are", "is", "it's", "shop's", "still"})


def hours_claims(clause: str, lower: str, values: Values, context: Context) -> list[Claim]:
    if ph.HOLIDAY.search(lower) or ph.VAGUE_HOURS.search(lower):
        # The clause is settled as a whole; its times and days are part of it.
        values.times.clear()
        values.days.clear()
        if ph.HOLIDAY.search(lower):
            reason = "the constraint list has no holiday hours"
            return [LooseClaim(clause.strip(), Category.HOURS, Verdict.OUT_OF_SCOPE, reason)]
        reason = "vague hours the grader cannot check"
        return [LooseClaim(clause.strip(), Category.HOURS, Verdict.LLM_FLAGGED, reason)]
    groups: list[tuple[Weekday, ...] | None] = [reading.value for reading in values.days]
    if every := ph.EVERY_DAY.search(lower):
        groups = [WEEKDAYS]
        # "seven days a week" is the days, not a duration.
        tokens = values.spoken.tokens
        values.durations[:] = [
            d for d in values.durations if not every.start() <= tokens[d.first].start < every.end()
        ]
    values.days.clear()
    split = bool(_LUNCH.search(lower))
    closed = bool(ph.NOT_OPEN.search(lower)) and not split
    always = bool(ph.ALWAYS_OPEN.search(lower))
    through = bool(_THROUGH.search(lower))
    spans = _spans(values)
    if context.asks_close and not ph.HOURS.search(lower):
        # "At 5 PM." to "When do you close?" names the closing time.
        spans = [
            (None, within[0], ()) if within and not (o or c) else (o, c, within)
            for o, c, within in spans
        ]
    if split:
        # "We close for lunch, so try one o'clock": the times are ones it is open at.
        spans = [(None, None, (*(t for t in (o, c) if t), *w)) for o, c, w in spans]
    values.times.clear()
    if always:
        values.durations[:] = [d for d in values.durations if d.value.hours != 24]
    groups = groups or [context.days or None]
    if groups == [None] and not (spans or always or through or split):
        return []
    claims: list[Claim] = []
    each: list[_Span | None] = [*spans] or [None]
    # "Monday to Friday 8:30 to 5:30, Saturday 10 to 2": each day group has its own hours.
    pairs: list[tuple[tuple[Weekday, ...] | None, _Span | None]] = (
        list(zip(groups, each, strict=True))
        if len(groups) == len(spans) > 1
        else [(days, span) for days in groups for span in each]
    )
    for days, span in pairs:
        opens, closes, within = span or (None, None, ())
        claims.append(
            HoursClaim(
                clause.strip(),
                days,
                closed and not span,
                opens,
                closes,
                within,
                always,
                through,
                split,
            )
        )
    return claims


def _spans(values: Values) -> list[_Span]:
    """Times read as ranges ("8:30 to 5:30"), opening or closing times, or times open at."""
    tokens = values.spoken.tokens
    times = sorted(values.times, key=lambda reading: reading.first)
    spans: list[_Span] = []
    index, after = 0, 0
    while index < len(times):
        reading = times[index]
        following = times[index + 1] if index + 1 < len(times) else None
        if following:
            between = [t.text for t in tokens[reading.end : following.first]]
            if all(word in _BETWEEN_TIMES for word in between):
                spans.append((reading.value, following.value, ()))
                index, after = index + 2, following.end
                continue
        spans.append(_single(reading.value, [t.text for t in tokens[after : reading.first]]))
        index, after = index + 1, reading.end
    return spans


def _single(clock: Clock, before: list[str]) -> _Span:
    """One time, read by the nearest cue before it: closing, opening, or a time open at."""
    for position in range(len(before) - 1, -1, -1):
        word = before[position]
        if word in _CLOSE_CUES:
            return (None, clock, ())
        if word in _OPEN_CUES:
            return (clock, None, ())
        if word == "open":
            state = position > 0 and before[position - 1] in _STATE
            return (None, None, (clock,)) if state else (clock, None, ())
    return (None, None, (clock,))


def availability_claims(clause: str, lower: str, values: Values) -> list[Claim]:
    if ph.NO_AVAILABILITY.search(lower):
        values.times.clear()
        values.days.clear()
        return [AvailabilityClaim(clause.strip(), None, None, none_left=True)]
    first = values.days[0].value if values.days else ()
    day = first[0] if len(first) == 1 else None
    time = values.times[0].value if values.times else None
    values.days.clear()
    if values.times:
        values.times.pop(0)
    return [AvailabilityClaim(clause.strip(), day, time)]


def with_exceptions(claims: list[Claim]) -> list[Claim]:
    """ "Monday to Friday 7:30 to 5:30, and till eight on Thursdays": the days a later claim gives
    hours of are that earlier range's exception, so the range is not checked on them."""
    found = list(claims)
    for index, claim in enumerate(found):
        if not isinstance(claim, HoursClaim) or not claim.days or len(claim.days) < 2:
            continue
        later = {
            day
            for other in found[index + 1 :]
            if isinstance(other, HoursClaim) and other.days and not other.closed
            for day in other.days
            if set(other.days) < set(claim.days)
        }
        if later:
            kept = tuple(day for day in claim.days if day not in later)
            found[index] = replace(claim, days=kept)
    return found
