"""Messages a browser (or the headless runner) may send over a run's WebSocket."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

MAX_CALLER_TEXT = 300


class _Message(BaseModel):
    # htmx's ws extension adds the request headers to every message it sends.
    model_config = ConfigDict(extra="forbid", frozen=True)
    HEADERS: dict[str, Any] | None = None


class SayMessage(_Message):
    action: Literal["say"]
    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CALLER_TEXT)
    ]


class PlayMessage(_Message):
    action: Literal["play"]


class EndMessage(_Message):
    action: Literal["end"]


class PlayedMessage(_Message):
    """The browser's report of how much of one agent utterance it actually played."""

    action: Literal["played"]
    utterance_event_id: str = Field(pattern=r"^ev-\d{5}$")
    played_ms: int = Field(ge=0)
    total_ms: int = Field(ge=0)


ClientMessage = Annotated[
    SayMessage | PlayMessage | EndMessage | PlayedMessage, Field(discriminator="action")
]
CLIENT_MESSAGE = TypeAdapter(ClientMessage)


class BadMessage(ValueError):
    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def parse_client_message(text: str, *, max_bytes: int) -> ClientMessage:
    """Parse one text frame, or raise BadMessage naming what is wrong with it."""
    size = len(text.encode())
    if size > max_bytes:
        raise BadMessage("oversized_message", f"message of {size} bytes exceeds {max_bytes} bytes")
    try:
        return CLIENT_MESSAGE.validate_json(text)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in issue['loc']) or 'message'}: {issue['msg']}"
            for issue in error.errors(include_url=False)[:3]
        )
        kind = (
            "malformed_json" if error.errors()[0]["type"] == "json_invalid" else "invalid_message"
        )
        raise BadMessage(kind, problems) from None
