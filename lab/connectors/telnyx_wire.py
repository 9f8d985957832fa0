"""Telnyx media streaming's WebSocket messages, as Telnyx documents them (and pipecat's
TelnyxFrameSerializer reads them).

Telnyx (the lab, here) sends `connected`, `start` (stream_id at the top, the call's ids and
`media_format` PCMU 8000 1 inside), `media`, `dtmf`, `mark` and `stop`, numbered by
`sequence_number` strings; the bot sends `media` (base64 μ-law), `mark` and `clear`, which need
not name the stream (pipecat's serializer names none).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from lab.connectors import ulaw_wire as ulaw
from lab.connectors.twilio_wire import InboundMedia

ENCODING = "PCMU"
SAMPLE_RATE = 8000


class MediaFormat(ulaw.WireMessage):
    encoding: str = ENCODING
    sample_rate: int = SAMPLE_RATE
    channels: int = 1


class StartBody(ulaw.WireMessage):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    user_id: str
    call_control_id: str
    call_session_id: str
    # The lab places the call: its numbers are the documentation's reserved ones.
    from_: str = Field(default="+15555550100", alias="from")
    to: str = "+15555550199"
    tags: list[str] = []
    custom_parameters: dict[str, str] = {}
    media_format: MediaFormat = MediaFormat()


class Start(ulaw.WireMessage):
    event: Literal["start"] = "start"
    sequence_number: str
    stream_id: str
    start: StartBody


class Connected(ulaw.WireMessage):
    event: Literal["connected"] = "connected"
    version: str = "1.0.0"


class Media(ulaw.WireMessage):
    event: Literal["media"] = "media"
    sequence_number: str
    stream_id: str
    media: InboundMedia


class DtmfBody(ulaw.WireMessage):
    digit: str


class Dtmf(ulaw.WireMessage):
    event: Literal["dtmf"] = "dtmf"
    sequence_number: str
    stream_id: str
    # When the press was heard: the stream's start plus its audio time (ISO 8601).
    occurred_at: str
    dtmf: DtmfBody


class MarkPlayed(ulaw.WireMessage):
    event: Literal["mark"] = "mark"
    sequence_number: str
    stream_id: str
    mark: ulaw.MarkBody


class StopBody(ulaw.WireMessage):
    user_id: str
    call_control_id: str


class Stop(ulaw.WireMessage):
    event: Literal["stop"] = "stop"
    sequence_number: str
    stream_id: str
    stop: StopBody


# What the bot sends: the shared messages; a stream_id, where the bot names one, is checked.


class BotMedia(ulaw.BotMedia):
    stream_id: str | None = None


class BotMark(ulaw.BotMark):
    stream_id: str | None = None


class BotClear(ulaw.BotClear):
    stream_id: str | None = None


BotMessage = Annotated[BotMedia | BotMark | BotClear, Field(discriminator="event")]
BOT_MESSAGE: TypeAdapter[BotMessage] = TypeAdapter(BotMessage)
