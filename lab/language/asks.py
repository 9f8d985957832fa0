"""What an agent's utterance asks the caller for that a scenario's script never says.

A name, a phone number, an email, a date of birth, the reason for the visit: the scripted caller
answers these from the scenario's persona. Only a sentence that asks counts ("Can I get your
name?"), never one that mentions ("I'll text your phone."). Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import re

from lab.events.types import PersonaField

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
# "D.O.B." would otherwise be cut into sentences at its dots.
_DOB = re.compile(r"\bd\.\s?o\.\s?b\b\.?")
# A sentence without a question mark still asks when it is worded as a request.
_REQUEST = re.compile(
    r"\b(?:can|could|may|might) i (?:get|have|take|grab|ask for|ask)\b"
    r"|\b(?:please|kindly) (?:tell|give|provide|share|spell|say|state|confirm)\b"
    r"|\b(?:tell|give|send) me\b"
    r"|\bi(?:'ll| will|'d| would)? (?:also )?need\b"
    r"|\bwhat(?:'s| is) your\b"
    r"|\blet me (?:get|have|take)\b"
)
_FIELDS: dict[PersonaField, re.Pattern[str]] = {
    "name": re.compile(
        r"\bname\b|\bwho (?:am i|i'm|i am) (?:speaking|talking) (?:with|to)\b"
        r"|\bwho(?:'s| is) (?:calling|this)\b|\bmay i ask who\b"
    ),
    "phone": re.compile(
        r"\bphone\b|\bmobile\b|\bcell\b|\bcall ?back\b|\breach you\b|\bcontact number\b"
        r"|\bbest number\b|\bnumber (?:to|where|we can|i can|for you)\b|\btext you\b"
    ),
    "email": re.compile(r"\be-?mail\b"),
    "date_of_birth": re.compile(
        r"\bdate of birth\b|\bbirth ?date\b|\bbirthday\b|\bdob\b|\bwhen were you born\b"
    ),
    "reason": re.compile(
        r"\breason for\b|\bwhat brings you\b|\bpurpose of\b|\bwhat seems to be\b"
        r"|\bwhat(?:'s| is| will)(?: the| this| it| your)?(?: visit| appointment| booking)?"
        r"(?: be)? for\b"
        r"|\bwhat (?:do|would) you (?:need|want) (?:it|the appointment|to be seen) for\b"
        r"|\bwhat (?:are|would) you (?:coming in|like to be seen) for\b"
    ),
}


def asked_for(text: str) -> tuple[PersonaField, ...]:
    """The persona fields the utterance asks for, in the order it asks them."""
    found: dict[PersonaField, tuple[int, int]] = {}
    lowered = _DOB.sub("dob", text.lower().replace("\u2019", "'"))
    for number, sentence in enumerate(_SENTENCE.findall(lowered)):
        if "?" not in sentence and not _REQUEST.search(sentence):
            continue
        for field, pattern in _FIELDS.items():
            match = pattern.search(sentence)
            if match is not None and field not in found:
                found[field] = (number, match.start())
    return tuple(sorted(found, key=found.__getitem__))
