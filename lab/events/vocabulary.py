"""The events' shared vocabulary: actions, modes, outcomes, cue kinds and the payload bases.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
)

Args = dict[str, str | int]


class Mode(StrEnum):
    GUARDED = "guarded"
    UNGUARDED = "unguarded"


class Channel(StrEnum):
    TYPED = "typed"
    VOICE = "voice"


class Action(StrEnum):
    BOOK = "book"
    REFUND = "refund"


class Operation(StrEnum):
    LOOKUP = "lookup"
    PROPOSE = "propose"
    COMMIT = "commit"


class Outcome(StrEnum):
    ALLOW = "allow"
    BLOCK = "block"
    REPLAY = "replay"


class UnderstandingKind(StrEnum):
    REQUEST = "request"
    CORRECTION = "correction"
    CONFIRM = "confirm"
    POSITIVE = "positive"
    DECLINE = "decline"
    UNSUPPORTED = "unsupported"
    UNCLEAR = "unclear"
    QUESTION = "question"


class Confirmation(StrEnum):
    """What a caller turn does to the proposal awaiting confirmation."""

    CONFIRM = "confirm"
    NOT_CONFIRM = "not_confirm"
    UNCLEAR = "unclear"


# Why a turn was classified as it was: the family of the cue it matched.
CueKind = Literal[
    "explicit",
    "decline",
    "presence",
    "hedge",
    "positive",
    "unrelated",
    "other_action",
    "clarify",
    "values",
    "request",
    "question",
    "identity",
    "capabilities",
    "business_fact",
    "out_of_scope",
    "noise",
]


class PayloadModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvolvingPayload(PayloadModel):
    """A payload that gained fields after logs were first written: unset, they are left out."""

    # Left out while unset, so events written before these fields existed re-hash alike.
    _added_later: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self._added_later:
            if not getattr(self, name):
                data.pop(name, None)
        return data
