"""pipecat's own serializers read what the lab sends as the phone network: its `start` is
detected as the provider's by pipecat's parse_telephony_websocket, and each keypad press the
lab heard in the caller's audio becomes an InputDTMFFrame of that key (pipecat venv, no models).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

from lab.audio.frames import FRAME_SAMPLES
from lab.audio.impairments import keypad
from lab.connectors.phone_call import Dialect
from lab.connectors.telnyx_media import TelnyxDialect
from lab.connectors.twilio_media import TwilioDialect
from tests.connectors.conftest import PIPECAT_PYTHON, needs_pipecat

pytestmark = [pytest.mark.pipecat, needs_pipecat]

# Reads {"start": …, "messages": […]} on stdin; prints the provider pipecat detects and the
# frames its serializer makes of the messages.
_READ = """
import asyncio, json, sys
from pipecat.runner.utils import _detect_transport_type_from_message
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer

sent = json.load(sys.stdin)
provider = _detect_transport_type_from_message(sent["start"])
if provider == "twilio":
    serializer = TwilioFrameSerializer(
        stream_sid="s", params=TwilioFrameSerializer.InputParams(auto_hang_up=False)
    )
else:
    serializer = TelnyxFrameSerializer(
        stream_id="s", outbound_encoding="PCMU", inbound_encoding="PCMU",
        params=TelnyxFrameSerializer.InputParams(auto_hang_up=False),
    )

async def frames():
    return [await serializer.deserialize(message) for message in sent["messages"]]

read = [
    [type(frame).__name__, getattr(getattr(frame, "button", None), "value", None)]
    for frame in asyncio.run(frames())
]
print(json.dumps({"provider": provider, "frames": read}))
"""


@pytest.mark.parametrize(
    ("provider", "dialect"), [("twilio", TwilioDialect), ("telnyx", TelnyxDialect)]
)
def test_pipecat_reads_the_labs_keypad_presses_as_dtmf_frames(
    provider: str, dialect: Callable[[str], Dialect]
) -> None:
    line = dialect("call-1")
    start = json.loads(line.opening()[1])
    audio = keypad("7#0", tone_ms=80, gap_ms=80)
    frames = audio.reshape(-1, FRAME_SAMPLES)  # 480 ms: whole frames, a gap after the last
    sent = [message for frame in frames for message in line.frame(frame.tobytes())]
    dtmf = [str(message) for message in sent if json.loads(message)["event"] == "dtmf"]
    assert len(dtmf) == 3
    result = subprocess.run(
        [str(PIPECAT_PYTHON), "-c", _READ],
        input=json.dumps({"start": start, "messages": dtmf}),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    read = json.loads(result.stdout.strip().splitlines()[-1])
    assert read["provider"] == provider
    assert read["frames"] == [["InputDTMFFrame", key] for key in "7#0"]
