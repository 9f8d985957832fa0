"""A bot called over a plain PCM WebSocket: `pcm:ws://HOST/PATH`.

Binary frames both ways, 16 kHz mono PCM16 little-endian: 20 ms of the caller every 20 ms, the
bot's audio in whatever frame sizes it sends. Text frames from the bot carry nothing here, and
the wire has no keypad events (no `dtmf`): presses reach the bot only as tones in the audio. The
call itself: phone_call.py.
"""

from __future__ import annotations

from lab.connectors.phone_call import BotSays, PhoneCall, dial
from lab.connectors.phone_speech import BotMisbehaved
from lab.connectors.registry import AgentSpec


class PcmDialect:
    def __init__(self, call_id: str) -> None:
        self.call_id = call_id

    def opening(self) -> list[str | bytes]:
        return []

    def frame(self, pcm: bytes) -> list[str | bytes]:
        return [pcm]

    def closing(self) -> list[str | bytes]:
        return []

    def mark_played(self, name: str) -> None:
        return None

    def read(self, frame: str | bytes) -> BotSays:
        if isinstance(frame, str):
            return BotSays()
        if len(frame) % 2:
            raise BotMisbehaved(f"the bot sent {len(frame)} bytes: not whole PCM16 samples")
        return BotSays(audio=frame)


def connect(spec: AgentSpec) -> PhoneCall:
    """The registry's factory."""
    return dial(spec, "pcm", PcmDialect)
