"""A deployed bot called as Twilio calls it: Media Streams over the bot's WebSocket.

`twilio:wss://HOST/PATH`. The lab speaks Twilio's side as Twilio documents it (twilio_wire.py):
`connected`, `start` (a stream, call and account sid, the inbound track, μ-law 8 kHz mono, and
`customParameters` carrying the lab's call id so the bot can pass it to its tools), `media`
every 20 ms with sequence numbers, chunk numbers and timestamps, a `mark` back once the bot's
marked audio has played, `stop` at the end. The call itself: phone_call.py. `twilio:https://…`
names the bot's voice webhook instead, answered first (twilio_webhook.py).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import secrets
from urllib.parse import urlsplit

import numpy as np
from pydantic import ValidationError

from lab.audio.g711 import RateChanger, pcm16_to_ulaw, ulaw_to_pcm16
from lab.connectors import twilio_wire as wire
from lab.connectors.phone_call import BotSays, PhoneCall, dial
from lab.connectors.phone_speech import BotMisbehaved, CallNotAnswered
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_webhook import WebhookRefused, answer_call, incoming_call

# The customParameters key that carries the lab's id of this call (the HTTP sandbox matches a
# tool call to its call by it).
CALL_PARAMETER = "lab_call_id"
# μ-law codes of the loudest segment (half scale and up): speech has few, while linear PCM16 sent
# as μ-law has about half (every high byte near 0x00 is one), so past a second of audio a share
# above this is the wrong codec.
_LOUDEST = 0x70
_WRONG_CODEC_SHARE = 0.25
_WRONG_CODEC_AFTER = 8000


def _sid(prefix: str) -> str:
    return prefix + secrets.token_hex(16)


class TwilioDialect:
    """Twilio's side of one media stream."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.stream_sid, self.call_sid, self.account_sid = _sid("MZ"), _sid("CA"), _sid("AC")
        self._sequence = itertools.count(1)
        self._chunk = itertools.count(1)
        self._down, self._up = RateChanger(up=False), RateChanger(up=True)
        self._codes = self._loudest = 0
        # The <Parameter>s of the TwiML that pointed at this stream, if a webhook did.
        self.custom: dict[str, str] = {}

    def _next(self) -> str:
        return str(next(self._sequence))

    def opening(self) -> list[str | bytes]:
        start = wire.Start(
            sequenceNumber=self._next(),
            streamSid=self.stream_sid,
            start=wire.StartBody(
                accountSid=self.account_sid,
                streamSid=self.stream_sid,
                callSid=self.call_sid,
                customParameters={**self.custom, CALL_PARAMETER: self.call_id},
            ),
        )
        # `connected` carries no sequence number; `start` is the stream's first.
        return [wire.Connected().model_dump_json(), start.model_dump_json()]

    def frame(self, pcm: bytes) -> str:
        chunk = next(self._chunk)
        payload = base64.b64encode(pcm16_to_ulaw(pcm, self._down)).decode("ascii")
        media = wire.Media(
            sequenceNumber=self._next(),
            streamSid=self.stream_sid,
            # Milliseconds since the stream began, as Twilio stamps each chunk.
            media=wire.InboundMedia(
                chunk=str(chunk), timestamp=str((chunk - 1) * 20), payload=payload
            ),
        )
        return media.model_dump_json()

    def mark_played(self, name: str) -> str:
        played = wire.MarkPlayed(
            sequenceNumber=self._next(), streamSid=self.stream_sid, mark=wire.MarkBody(name=name)
        )
        return played.model_dump_json()

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

    def closing(self) -> list[str | bytes]:
        stop = wire.Stop(
            sequenceNumber=self._next(),
            streamSid=self.stream_sid,
            stop=wire.StopBody(accountSid=self.account_sid, callSid=self.call_sid),
        )
        return [stop.model_dump_json()]

    def read(self, frame: str | bytes) -> BotSays:
        if isinstance(frame, bytes):
            raise BotMisbehaved("the bot sent a binary frame; Media Streams are JSON text")
        try:
            event = json.loads(frame).get("event")
        except (ValueError, AttributeError):
            raise BotMisbehaved(
                f"the bot sent something that is not JSON: {frame[:80]!r}"
            ) from None
        if event not in wire.BOT_EVENTS:
            return BotSays()  # Twilio ignores what it does not know, and so does the lab
        try:
            message = wire.BOT_MESSAGE.validate_json(frame)
        except ValidationError as error:
            raise BotMisbehaved(
                f"the bot sent a {event!r} Twilio would not take: {error}"
            ) from None
        if message.streamSid != self.stream_sid:
            raise BotMisbehaved(f"the bot sent {event!r} for another stream ({message.streamSid})")
        match message:
            case wire.BotMedia(media=media):
                try:
                    payload = base64.b64decode(media.payload, validate=True)
                except (binascii.Error, ValueError):
                    raise BotMisbehaved("the bot sent media whose payload is not base64") from None
                self._check_codec(payload)
                return BotSays(audio=ulaw_to_pcm16(payload, self._up))
            case wire.BotMark(mark=mark):
                return BotSays(mark=mark.name)
            case wire.BotClear():
                return BotSays(clear=True)
        return BotSays()


def connect(spec: AgentSpec) -> PhoneCall:
    """The registry's factory: `twilio:wss://HOST/PATH`, or the voice webhook at
    `twilio:https://HOST/PATH` whose TwiML names the stream."""
    if urlsplit(spec.endpoint).scheme not in ("http", "https"):
        return dial(spec, "twilio", TwilioDialect)
    call = dial(spec, "twilio", TwilioDialect, schemes=("http", "https"))
    dialect = call.dialect
    assert isinstance(dialect, TwilioDialect)

    async def answered() -> str:
        params = incoming_call(call_sid=dialect.call_sid, account_sid=dialect.account_sid)
        try:
            url, dialect.custom = await answer_call(spec.endpoint, params, spec.resolve)
        except WebhookRefused as error:
            raise CallNotAnswered(str(error)) from None
        return url

    call.answer = answered
    return call
