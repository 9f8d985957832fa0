"""A caller's reference back to the current request: "I meant the day after that", "actually
just half of it". Pure; read against the values the request holds, never guessed without them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lab.language.phrases import Phrases

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "the day after that", never "the day after Wednesday": that names its own day.
_DAY_SHIFT = re.compile(
    r"\bthe day (after|before)(?: that| it| then)?\b"
    r"(?! (?:on )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|next|the \w+th)\b)"
)
_HALF = re.compile(
    r"\b(?:just |only )?half (?:of )?(?:it|that|the amount|the refund|what i said)\b"
)

_REFUSED = re.compile(r"\b(?:won't|wouldn't|doesn't|can't|isn't|not)\b")
Value = str | int


def read_reference(phrases: Phrases, current: Mapping[str, object]) -> tuple[dict[str, Value], str]:
    """The request values a reference back changes, and the words it rests on; none if none."""
    changes: dict[str, Value] = {}
    cues: list[str] = []
    if phrases.first(_REFUSED):
        # "the day after that won't work either": a reference turned down changes nothing.
        return changes, ""
    day = current.get("day")
    if isinstance(day, str) and day in _WEEKDAYS and (cue := phrases.first(_DAY_SHIFT)):
        step = 1 if "after" in cue.lower() else -1
        changes["day"] = _WEEKDAYS[(_WEEKDAYS.index(day) + step) % 7]
        cues.append(cue)
    amount = current.get("amount_cents")
    if isinstance(amount, int) and amount % 2 == 0 and (cue := phrases.first(_HALF)):
        changes["amount_cents"] = amount // 2
        cues.append(cue)
    return changes, " … ".join(cues)
