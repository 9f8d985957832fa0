"""A deployed bot called as Telnyx calls it: media streaming over the bot's WebSocket.

`telnyx:wss://HOST/PATH`. The lab speaks Telnyx's side as Telnyx documents it (telnyx_wire.py):
`connected`, `start` (a stream id, the call's control and session ids, PCMU 8 kHz mono, and
`custom_parameters` carrying the lab's call id), `media` every 20 ms numbered by chunk,
timestamp and sequence_number, a `dtmf` after the chunk where a keypad press in the caller's
audio ends, a `mark` back once the bot's marked audio has played, `stop` at the end. The μ-law
line is Twilio's too (ulaw_wire.py); the call itself: phone_call.py.
"""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta

from lab.connectors import telnyx_wire as wire
from lab.connectors.phone_call import BotSays, PhoneCall, dial
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_media import CALL_PARAMETER
from lab.connectors.ulaw_wire import MarkBody, UlawLine, bot_message, same_stream


class TelnyxDialect:
    """Telnyx's side of one media stream."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.stream_id, self.user_id, self.session_id = (str(uuid.uuid4()) for _ in range(3))
        self.call_control_id = f"v3:{uuid.uuid4().hex}"
        self._sequence = itertools.count(1)
        self._chunk = itertools.count(1)
        self.line = UlawLine()
        self._began = datetime.now(UTC)

    def _next(self) -> str:
        return str(next(self._sequence))

    def opening(self) -> list[str | bytes]:
        self._began = datetime.now(UTC)
        start = wire.Start(
            sequence_number=self._next(),
            stream_id=self.stream_id,
            start=wire.StartBody(
                user_id=self.user_id,
                call_control_id=self.call_control_id,
                call_session_id=self.session_id,
                custom_parameters={CALL_PARAMETER: self.call_id},
            ),
        )
        return [wire.Connected().model_dump_json(), start.model_dump_json()]

    def frame(self, pcm: bytes) -> list[str | bytes]:
        chunk = next(self._chunk)
        at_ms = (chunk - 1) * 20
        payload, pressed = self.line.caller(pcm)
        media = wire.InboundMedia(chunk=str(chunk), timestamp=str(at_ms), payload=payload)
        sent: list[str | bytes] = [
            wire.Media(
                sequence_number=self._next(), stream_id=self.stream_id, media=media
            ).model_dump_json()
        ]
        if pressed is not None:
            # Stamped with the stream's audio time, not the moment the lab got round to it.
            heard = self._began + timedelta(milliseconds=at_ms)
            dtmf = wire.Dtmf(
                sequence_number=self._next(),
                stream_id=self.stream_id,
                occurred_at=heard.isoformat().replace("+00:00", "Z"),
                dtmf=wire.DtmfBody(digit=pressed),
            )
            sent.append(dtmf.model_dump_json())
        return sent

    def mark_played(self, name: str) -> str:
        played = wire.MarkPlayed(
            sequence_number=self._next(), stream_id=self.stream_id, mark=MarkBody(name=name)
        )
        return played.model_dump_json()

    def closing(self) -> list[str | bytes]:
        body = wire.StopBody(user_id=self.user_id, call_control_id=self.call_control_id)
        stop = wire.Stop(sequence_number=self._next(), stream_id=self.stream_id, stop=body)
        return [stop.model_dump_json()]

    def read(self, frame: str | bytes) -> BotSays:
        message = bot_message(frame, wire.BOT_MESSAGE, "Telnyx")
        if message is None:
            return BotSays()  # what Telnyx does not know, it ignores; so does the lab
        same_stream(message.event, message.stream_id, self.stream_id)
        return self.line.says(message)


def connect(spec: AgentSpec) -> PhoneCall:
    """The registry's factory: `telnyx:wss://HOST/PATH`."""
    return dial(spec, "telnyx", TelnyxDialect)
