"""What the JSON phone wires share (twilio_media.py, telnyx_media.py): the caller's 20 ms as
base64 μ-law 8 kHz with the keypad presses the network hears in it, the bot's μ-law back with a
check of its codec, and the bot's `media`, `mark` and `clear` (each wire's models name the
stream their own way) read once.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from lab.audio.dtmf import KeypadListener
from lab.audio.g711 import RateChanger, pcm16_to_ulaw, ulaw_to_pcm16
from lab.connectors.phone_call import BotSays
from lab.connectors.phone_speech import BotMisbehaved

# μ-law codes of the loudest segment (half scale and up): speech has few, while linear PCM16 sent
# as μ-law has about half (every high byte near 0x00 is one), so past a second of audio a share
# above this is the wrong codec.
_LOUDEST = 0x70
_WRONG_CODEC_SHARE = 0.25
_WRONG_CODEC_AFTER = 8000
T = TypeVar("T")
BOT_EVENTS = ("media", "mark", "clear")


class WireMessage(BaseModel):
    """A phone wire's message: fields the lab does not read are ignored, as the network does."""

    model_config = ConfigDict(extra="ignore")


class BotPayload(WireMessage):
    payload: str


class MarkBody(WireMessage):
    name: str


class BotMedia(WireMessage):
    event: Literal["media"]
    media: BotPayload


class BotMark(WireMessage):
    event: Literal["mark"]
    mark: MarkBody


class BotClear(WireMessage):
    event: Literal["clear"]


class UlawLine:
    """One call's μ-law 8 kHz line: the rate changers keep their history from chunk to chunk."""

    def __init__(self) -> None:
        self._down, self._up = RateChanger(up=False), RateChanger(up=True)
        self._keypad = KeypadListener()
        self._codes = self._loudest = 0
        # The keys the network heard the caller press, in order.
        self.pressed: list[str] = []

    def caller(self, pcm: bytes) -> tuple[str, str | None]:
        """20 ms of the caller (16 kHz PCM16) as a base64 payload, and the key of a press that
        ended before it (the network reports a press once it has heard it out)."""
        key = self._keypad.hear(pcm)
        if key is not None:
            self.pressed.append(key)
        return base64.b64encode(pcm16_to_ulaw(pcm, self._down)).decode("ascii"), key

    def bot_audio(self, payload: str) -> bytes:
        """A bot's base64 μ-law payload as 16 kHz PCM16; BotMisbehaved for what is not μ-law."""
        try:
            codes = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise BotMisbehaved("the bot sent media whose payload is not base64") from None
        self._check_codec(codes)
        return ulaw_to_pcm16(codes, self._up)

    def says(self, message: BotMedia | BotMark | BotClear) -> BotSays:
        """What one of the bot's messages means on the line."""
        match message:
            case BotMedia(media=media):
                return BotSays(audio=self.bot_audio(media.payload))
            case BotMark(mark=mark):
                return BotSays(mark=mark.name)
        return BotSays(clear=True)

    def _check_codec(self, payload: bytes) -> None:
        codes = np.frombuffer(payload, dtype=np.uint8)
        self._codes += codes.size
        # Inverted, a code's exponent sits in bits 4-6.
        self._loudest += int(np.count_nonzero((~codes & _LOUDEST) == _LOUDEST))
        share = self._loudest / self._codes if self._codes else 0.0
        if self._codes >= _WRONG_CODEC_AFTER and share > _WRONG_CODEC_SHARE:
            raise BotMisbehaved(
                f"the bot's audio is not μ-law 8 kHz: {share:.0%} of its samples are in the "
                "loudest segment (linear PCM sent as μ-law?)"
            )


def bot_message(frame: str | bytes, adapter: TypeAdapter[T], wire: str) -> T | None:
    """The bot's frame as the wire's model; None for an event the network ignores (as the lab
    does); BotMisbehaved for a frame no network would take."""
    if isinstance(frame, bytes):
        raise BotMisbehaved(f"the bot sent a binary frame; {wire}'s media streams are JSON text")
    try:
        event = json.loads(frame).get("event")
    except (ValueError, AttributeError):
        raise BotMisbehaved(f"the bot sent something that is not JSON: {frame[:80]!r}") from None
    if event not in BOT_EVENTS:
        return None
    try:
        return adapter.validate_json(frame)
    except ValidationError as error:
        raise BotMisbehaved(f"the bot sent a {event!r} {wire} would not take: {error}") from None


def same_stream(event: str, named: str | None, ours: str) -> None:
    """A bot's message that names a stream must name this call's (None: it names none)."""
    if named is not None and named != ours:
        raise BotMisbehaved(f"the bot sent {event!r} for another stream ({named})")
