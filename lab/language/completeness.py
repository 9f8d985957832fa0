"""Whether a caller's words so far make a finished turn, by the agent's own understanding.

Pure: the transcript signal the turn-end decision weighs beside the audio model.
"""

from __future__ import annotations

import re

from lab.events.types import TranscriptSignal, UnderstandingKind
from lab.language.understanding import Understanding

# Words a finished sentence does not end on: the caller is joining, hesitating or mid-phrase.
_DANGLING = frozenset(
    {"and", "or", "but", "so", "because", "um", "uh", "er", "erm", "hmm", "like", "then"}
    | {"the", "a", "an", "to", "on", "at", "for", "of", "in", "with", "my", "number", "is"}
    | {"make", "that", "it's", "about", "around", "maybe", "actually", "well", "i", "i'd"}
)
# Number words that may leave the rest of a number to come ("twenty ..." before "five").
_NUMBER_HEADS = frozenset(
    {"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "point"}
)
_WORDS = re.compile(r"[a-z0-9']+")
# Whisper writes a trailing ellipsis or comma where the speaker stopped mid-flow.
_OPEN_END = re.compile(r"(?:\.\.\.|…|,|-)\s*$")
_CLOSED = re.compile(r"[.!?]\s*$")


def transcript_signal(text: str, understood: Understanding) -> TranscriptSignal:
    """complete: a request or answer the agent can act on; incomplete: it trails off."""
    words = _WORDS.findall(text.lower())
    if not words:
        return "unknown"
    if _OPEN_END.search(text) or words[-1] in _DANGLING:
        return "incomplete"
    if words[-1] in _NUMBER_HEADS and not _CLOSED.search(text):
        return "incomplete"
    if understood.kind in (UnderstandingKind.CONFIRM, UnderstandingKind.DECLINE):
        return "complete"
    if understood.kind in (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION):
        args = understood.args
        if "day" in args and ("part_of_day" in args or "time" in args):
            return "complete"
        if "order_number" in args and "amount_cents" in args:
            return "complete"
    return "unknown"
