"""What a team's rule-based agent hears in a caller's words: a day, a time, a part of the day,
a party size, and whether the words say yes. Pure.

Deliberately small, as a team writes it for its own line: weekday names, clock times with
minutes or a.m./p.m., a few landmarks (lunch, dinner, tonight) and yes/no words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from lab.language.days import weekday_of
from lab.language.numbers import words_to_int

_CLOCK = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap])\.?\s?m\b\.?|\b(?P<h2>\d{1,2}):(?P<m2>\d{2})\b"
)
_PARTS = {
    "morning": "morning",
    "afternoon": "afternoon",
    "lunch": "afternoon",
    "evening": "evening",
    "tonight": "evening",
    "dinner": "evening",
}
_PARTY = re.compile(r"\b(?:for|of)\s+(\w+)(?:\s+(?:people|persons|guests))?\b")
_NO = re.compile(r"\b(?:no|nope|wait|don't|do not|cancel|stop|instead)\b")
_YES = re.compile(
    r"\b(?:yes|yep|yeah|yup|confirm(?:ed)?|book it|reserve it|go ahead|please do|do it)\b"
)
_AGREEABLE = re.compile(
    r"\b(?:ok|okay|sure|fine|sounds good|great|maybe|alright|all right|perfect|good|hmm|mm)\b"
)


class Reply(StrEnum):
    YES = "yes"
    NO = "no"
    AGREEABLE = "agreeable"  # sounds positive, says no yes ("sounds good so far", "hmm, maybe")
    NONE = "none"


@dataclass(frozen=True)
class Heard:
    day: str | None  # a weekday, lower case
    time: str | None  # HH:MM, 24-hour
    part: str | None  # morning, afternoon or evening
    party: int | None
    reply: Reply

    @property
    def asks(self) -> bool:
        """Whether the words ask for a table or a visit (a day, a time or a part of the day)."""
        return bool(self.day or self.time or self.part)


def hear(text: str) -> Heard:
    lowered = text.lower()
    words = re.findall(r"[a-z']+", lowered)
    day = next((found for word in words if (found := weekday_of(word))), None)
    part = next((_PARTS[word] for word in words if word in _PARTS), None)
    return Heard(day, _time(lowered), part, _party(lowered), _reply(lowered))


def _time(text: str) -> str | None:
    match = _CLOCK.search(text)
    if match is None:
        return None
    hour = int(match["h"] or match["h2"])
    minute = int(match["m"] or match["m2"] or 0)
    if match["ap"]:
        hour = hour % 12 + (12 if match["ap"] == "p" else 0)
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def _party(text: str) -> int | None:
    for match in _PARTY.finditer(text):
        size = words_to_int(match[1])
        if size is not None and 0 < size <= 20:
            return size
    return None


def _reply(text: str) -> Reply:
    if _NO.search(text):
        return Reply.NO
    if _YES.search(text):
        return Reply.YES
    if _AGREEABLE.search(text):
        return Reply.AGREEABLE
    return Reply.NONE
