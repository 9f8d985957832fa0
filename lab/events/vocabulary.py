"""The events' shared vocabulary: actions, modes, outcomes, cue kinds and the payload bases.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

Args = dict[str, str | int]
_ACTION_NAME = re.compile(r"[a-z][a-z_]{1,31}")


class Mode(StrEnum):
    GUARDED = "guarded"
    UNGUARDED = "unguarded"


class Channel(StrEnum):
    TYPED = "typed"
    VOICE = "voice"


class Action(StrEnum):
    """A material action: the lab's own two, or any other a tools file declares (lower-case
    letters and _, e.g. cancel), made a member on first use so `is` compares as for these."""

    BOOK = "book"
    REFUND = "refund"

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The published schema says what the validator takes: any such name, not only two."""
        return {
            "title": "Action",
            "description": "book, refund, or an action a tools file declares (e.g. cancel)",
            "type": "string",
            "pattern": f"^{_ACTION_NAME.pattern}$",
        }

    @classmethod
    def _missing_(cls, value: object) -> Action | None:
        if not isinstance(value, str) or not _ACTION_NAME.fullmatch(value):
            return None
        member = str.__new__(cls, value)
        member._name_, member._value_ = value.upper(), value
        return cls._value2member_map_.setdefault(value, member)  # type: ignore[return-value]


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
