"""A scripted caller line read as its contract says it is meant, for the referee.

Where the lab's own reading of the words agrees with the annotation (the same kind and, for a
request or a correction, the same action and values), it is kept whole: its cue and heard text
say why. Where it does not, the annotation's reading is recorded alone, so an outside agent is
never judged on a misreading of the lab's own caller. Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from lab.events.types import Confirmation, CueKind, UnderstandingKind
from lab.language.understanding import Understanding
from lab.scenarios.meaning import CallerMeaning, MeaningKind

_K = UnderstandingKind
# The lab's readings that agree with a kind of meaning that asks for, changes and confirms
# nothing (a question to the business or for what the agent cannot do; an agreeable non-yes).
_AGREES: dict[MeaningKind, frozenset[UnderstandingKind]] = {
    "confirmation": frozenset({_K.CONFIRM}),
    "non_confirmation": frozenset({_K.POSITIVE, _K.UNCLEAR, _K.DECLINE}),
    "question": frozenset({_K.QUESTION, _K.UNSUPPORTED}),
    "other": frozenset({_K.UNCLEAR, _K.UNSUPPORTED, _K.DECLINE, _K.QUESTION}),
    "interruption": frozenset({_K.DECLINE, _K.UNCLEAR}),
}
# The reading recorded when the lab's disagrees: kind, what it does to a proposal, cue kind.
_ALONE: dict[MeaningKind, tuple[UnderstandingKind, Confirmation, CueKind]] = {
    "confirmation": (_K.CONFIRM, Confirmation.CONFIRM, "explicit"),
    "non_confirmation": (_K.POSITIVE, Confirmation.UNCLEAR, "positive"),
    # A question to the business: the lab's loop retrieves for it, as for the lab's own reading.
    "question": (_K.QUESTION, Confirmation.NOT_CONFIRM, "business_fact"),
    "other": (_K.UNCLEAR, Confirmation.UNCLEAR, "unrelated"),
    "interruption": (_K.DECLINE, Confirmation.NOT_CONFIRM, "decline"),
}


def as_meant(meaning: CallerMeaning, lab: Understanding) -> Understanding:
    """The understanding the referee records for a line: the annotation, with the lab's cue
    and heard text where the lab read the words the same way."""
    values = meaning.values
    if meaning.action is not None:
        kind = _K.REQUEST if meaning.kind == "request" else _K.CORRECTION
        agrees = lab.action is meaning.action and lab.args == values and not lab.ambiguous
        if agrees and lab.kind in (_K.REQUEST, _K.CORRECTION):
            return Understanding(
                kind, lab.action, lab.args, lab.heard, lab.confirmation, lab.cue_kind, lab.cue
            )
        cue_kind: CueKind = "values" if values else "request"
        return Understanding(kind, meaning.action, values, {}, Confirmation.NOT_CONFIRM, cue_kind)
    if lab.kind in _AGREES[meaning.kind] and not lab.args:
        return lab
    kind, confirmation, cue_kind = _ALONE[meaning.kind]
    return Understanding(kind, None, {}, {}, confirmation, cue_kind)
