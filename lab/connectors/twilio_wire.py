"""Twilio Media Streams' bidirectional messages, as Twilio documents them.

Twilio (the lab, here) sends `connected`, `start`, `media`, `dtmf`, `mark` and `stop`; the bot
sends `media` (base64 μ-law 8 kHz), `mark` and `clear`. Every field Twilio sends as a string is
a string here too (sequenceNumber, chunk, timestamp), as bots parse them so.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from lab.connectors import ulaw_wire as ulaw

ENCODING = "audio/x-mulaw"
SAMPLE_RATE = 8000


class MediaFormat(ulaw.WireMessage):
    encoding: str = ENCODING
    sampleRate: int = SAMPLE_RATE
    channels: int = 1


class StartBody(ulaw.WireMessage):
    accountSid: str
    streamSid: str
    callSid: str
    tracks: list[str] = ["inbound"]
    customParameters: dict[str, str] = {}
    mediaFormat: MediaFormat = MediaFormat()


class Start(ulaw.WireMessage):
    event: Literal["start"] = "start"
    sequenceNumber: str
    start: StartBody
    streamSid: str


class Connected(ulaw.WireMessage):
    event: Literal["connected"] = "connected"
    protocol: str = "Call"
    version: str = "1.0.0"


class InboundMedia(ulaw.WireMessage):
    track: str = "inbound"
    chunk: str
    timestamp: str
    payload: str


class Media(ulaw.WireMessage):
    event: Literal["media"] = "media"
    sequenceNumber: str
    media: InboundMedia
    streamSid: str


class DtmfBody(ulaw.WireMessage):
    track: str = "inbound_track"
    digit: str


class Dtmf(ulaw.WireMessage):
    event: Literal["dtmf"] = "dtmf"
    streamSid: str
    sequenceNumber: str
    dtmf: DtmfBody


class MarkPlayed(ulaw.WireMessage):
    event: Literal["mark"] = "mark"
    sequenceNumber: str
    streamSid: str
    mark: ulaw.MarkBody


class StopBody(ulaw.WireMessage):
    accountSid: str
    callSid: str


class Stop(ulaw.WireMessage):
    event: Literal["stop"] = "stop"
    sequenceNumber: str
    streamSid: str
    stop: StopBody


# What the bot sends: the shared messages, each naming its stream.


class BotMedia(ulaw.BotMedia):
    streamSid: str


class BotMark(ulaw.BotMark):
    streamSid: str


class BotClear(ulaw.BotClear):
    streamSid: str


BotMessage = Annotated[BotMedia | BotMark | BotClear, Field(discriminator="event")]
BOT_MESSAGE: TypeAdapter[BotMessage] = TypeAdapter(BotMessage)
