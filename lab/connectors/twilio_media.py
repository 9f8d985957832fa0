"""A deployed bot called as Twilio calls it: Media Streams over the bot's WebSocket.

`twilio:wss://HOST/PATH`. The lab speaks Twilio's side as Twilio documents it (twilio_wire.py):
`connected`, `start` (a stream, call and account sid, the inbound track, μ-law 8 kHz mono, and
`customParameters` carrying the lab's call id so the bot can pass it to its tools), `media`
every 20 ms with sequence numbers, chunk numbers and timestamps, a `dtmf` after the chunk where
a keypad press in the caller's audio ends (heard in band, as Twilio hears it), a `mark` back
once the bot's marked audio has played, `stop` at the end. The call itself: phone_call.py. `twilio:https://…`
names the bot's voice webhook instead, answered first (twilio_webhook.py).
"""

from __future__ import annotations

import itertools
import secrets
from urllib.parse import urlsplit

from lab.connectors import twilio_wire as wire
from lab.connectors.phone_call import BotSays, PhoneCall, dial
from lab.connectors.phone_speech import CallNotAnswered
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_webhook import WebhookRefused, answer_call, incoming_call
from lab.connectors.ulaw_wire import MarkBody, UlawLine, bot_message, same_stream

# The customParameters key that carries the lab's id of this call (the HTTP sandbox matches a
# tool call to its call by it).
CALL_PARAMETER = "lab_call_id"


def _sid(prefix: str) -> str:
    return prefix + secrets.token_hex(16)


class TwilioDialect:
    """Twilio's side of one media stream."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.stream_sid, self.call_sid, self.account_sid = _sid("MZ"), _sid("CA"), _sid("AC")
        self._sequence = itertools.count(1)
        self._chunk = itertools.count(1)
        self.line = UlawLine()
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

    def frame(self, pcm: bytes) -> list[str | bytes]:
        chunk = next(self._chunk)
        payload, pressed = self.line.caller(pcm)
        media = wire.Media(
            sequenceNumber=self._next(),
            streamSid=self.stream_sid,
            # Milliseconds since the stream began, as Twilio stamps each chunk.
            media=wire.InboundMedia(
                chunk=str(chunk), timestamp=str((chunk - 1) * 20), payload=payload
            ),
        )
        sent: list[str | bytes] = [media.model_dump_json()]
        if pressed is not None:
            # In order with the media: after the first chunk the press's tones no longer fill.
            dtmf = wire.Dtmf(
                sequenceNumber=self._next(),
                streamSid=self.stream_sid,
                dtmf=wire.DtmfBody(digit=pressed),
            )
            sent.append(dtmf.model_dump_json())
        return sent

    def mark_played(self, name: str) -> str:
        played = wire.MarkPlayed(
            sequenceNumber=self._next(), streamSid=self.stream_sid, mark=MarkBody(name=name)
        )
        return played.model_dump_json()

    def closing(self) -> list[str | bytes]:
        stop = wire.Stop(
            sequenceNumber=self._next(),
            streamSid=self.stream_sid,
            stop=wire.StopBody(accountSid=self.account_sid, callSid=self.call_sid),
        )
        return [stop.model_dump_json()]

    def read(self, frame: str | bytes) -> BotSays:
        message = bot_message(frame, wire.BOT_MESSAGE, "Twilio")
        if message is None:
            return BotSays()  # Twilio ignores what it does not know, and so does the lab
        same_stream(message.event, message.streamSid, self.stream_sid)
        return self.line.says(message)


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
