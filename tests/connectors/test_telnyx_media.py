"""The lab as Telnyx's side of a media stream, against stand-in bots on loopback: the messages
Telnyx documents (checked with the wire's models), keypad presses as `dtmf` in the stream's
audio time, the bot's stream-less replies as pipecat's TelnyxFrameSerializer sends them, and a
recorded end for bad bots."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import datetime
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection

from lab.accounts.agent_targets import endpoint_check
from lab.alerts.targets import TargetRefused
from lab.audio.g711 import ulaw_encode
from lab.audio.impairments import keypad
from lab.connectors import telnyx_wire as wire
from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    CallerTurn,
    LineMeasured,
    Said,
    TurnFinished,
)
from lab.connectors.phone_call import PhoneCall
from lab.connectors.registry import AgentSpec, ConnectorUnavailable, connect, parse_spec
from lab.connectors.telnyx_media import TelnyxDialect
from lab.connectors.twilio_media import CALL_PARAMETER
from tests.connectors.phone_bots import bot, caller_turn, opening, tone_8k
from tests.connectors.test_twilio_media import CALLER, FAST, hears_length
from tests.connectors.toolbox import FixtureToolBox


def call(url: str) -> tuple[PhoneCall, TelnyxDialect]:
    dialect = TelnyxDialect("call-1")
    agent = PhoneCall(
        url=url,
        call_id="call-1",
        dialect=dialect,
        identity=connect(parse_spec(f"telnyx:{url}")).identity,
        limits=FAST,
        hear=hears_length,
    )
    return agent, dialect


async def one_turn(agent: PhoneCall, caller: bytes = CALLER) -> list[AgentOutput]:
    tools = FixtureToolBox()
    assert [o async for o in agent.greet(tools)] == [TurnFinished()]
    turn = CallerTurn("hi", "ev-00001", audio=caller)
    outputs: list[AgentOutput] = [
        o async for o in agent.hear(turn, tools) if not isinstance(o, LineMeasured)
    ]
    await agent.close()
    return outputs


def media(samples: np.ndarray) -> str:
    """The bot's audio as pipecat's TelnyxFrameSerializer sends it: no stream_id."""
    payload = base64.b64encode(ulaw_encode(samples).tobytes()).decode()
    return json.dumps({"event": "media", "media": {"payload": payload}})


async def answers(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Half a second of speech in 20 ms chunks at real-time pace, then a mark."""
    await opening(ws, heard)
    await caller_turn(ws, heard)
    for piece in np.split(tone_8k(0.5), 25):
        await ws.send(media(piece))
        await asyncio.sleep(0.02)
    await ws.send(json.dumps({"event": "mark", "mark": {"name": "reply-1"}}))


async def test_it_speaks_telnyxs_side_and_hears_the_bots_reply() -> None:
    async with bot(answers) as (url, heard):
        agent, dialect = call(url)
        outputs = await one_turn(agent)
    said = outputs[0]
    assert isinstance(said, Said) and said.audio is not None and outputs[-1] == TurnFinished()
    assert heard[0] == {"event": "connected", "version": "1.0.0"}
    start = wire.Start.model_validate(heard[1])
    assert start.sequence_number == "1" and start.stream_id == dialect.stream_id
    assert start.start.media_format == wire.MediaFormat(encoding="PCMU", sample_rate=8000)
    assert start.start.custom_parameters == {CALL_PARAMETER: "call-1"}
    assert "from" in heard[1]["start"] and start.start.call_control_id.startswith("v3:")
    frames = [wire.Media.model_validate(m) for m in heard if m["event"] == "media"]
    assert [m.media.timestamp for m in frames[:3]] == ["0", "20", "40"]
    assert all(len(base64.b64decode(m.media.payload)) == 160 for m in frames)
    numbers = [int(m["sequence_number"]) for m in heard[1:]]
    assert numbers == list(range(1, 1 + len(numbers)))
    [mark] = [wire.MarkPlayed.model_validate(m) for m in heard if m["event"] == "mark"]
    assert mark.mark.name == "reply-1" and agent.stats.marks_acknowledged == 1
    stop = wire.Stop.model_validate(heard[-1])
    assert stop.stop.call_control_id == start.start.call_control_id


async def test_keypad_presses_go_out_as_dtmf_stamped_with_the_streams_audio_time() -> None:
    tone_ms, gap_ms = 100, 160
    async with bot(answers) as (url, heard):
        agent, dialect = call(url)
        outputs = await one_turn(agent, keypad("9*", tone_ms, gap_ms).tobytes() + CALLER)
    assert isinstance(outputs[0], Said)
    pressed = [
        (i, wire.Dtmf.model_validate(m)) for i, m in enumerate(heard) if m["event"] == "dtmf"
    ]
    assert [dtmf.dtmf.digit for _, dtmf in pressed] == ["9", "*"]
    assert all(dtmf.stream_id == dialect.stream_id for _, dtmf in pressed)
    # Each follows the chunk its tones ended before, and occurred_at is that chunk's audio time.
    chunks = [int(heard[i - 1]["media"]["timestamp"]) for i, _ in pressed]
    assert chunks[1] - chunks[0] == tone_ms + gap_ms
    times = [datetime.fromisoformat(dtmf.occurred_at) for _, dtmf in pressed]
    assert (times[1] - times[0]).total_seconds() * 1000 == tone_ms + gap_ms
    numbers = [int(m["sequence_number"]) for m in heard[1:]]
    assert numbers == list(range(1, 1 + len(numbers)))


def sends(*frames: str | bytes) -> Any:
    async def behaviour(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
        sid = await opening(ws, heard)
        await caller_turn(ws, heard)
        for frame in frames:
            await ws.send(frame.replace("SID", sid) if isinstance(frame, str) else frame)

    return behaviour


async def test_clear_without_a_stream_id_drops_the_unplayed_audio() -> None:
    clear = json.dumps({"event": "clear"})
    async with bot(sends(media(tone_8k(4.0)), clear)) as (url, _):
        agent, _ = call(url)
        outputs = await one_turn(agent)
    said = outputs[0]
    assert isinstance(said, Said) and said.audio is not None
    assert len(said.audio) // 32 < 2000 and agent.stats.clears == 1


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (b"\x00\x01", "binary frame; Telnyx's media streams are JSON text"),
        ('{"event": "media"}', "Telnyx would not take"),
        ('{"event": "clear", "stream_id": "another"}', "another stream"),
        ('{"event": "media", "stream_id": "SID", "media": {"payload": "%%"}}', "not base64"),
    ],
)
async def test_a_bad_bot_gets_a_recorded_end(frame: str | bytes, words: str) -> None:
    async with bot(sends(frame)) as (url, _):
        agent, _ = call(url)
        outputs = await asyncio.wait_for(one_turn(agent), timeout=30)
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "malformed" and words in fault.reason


def test_telnyx_is_a_connector_and_a_registrable_phone_wire() -> None:
    agent = connect(parse_spec("telnyx:wss://user:pw@bot.example.com/media?k=1"))
    assert agent.identity.connector == "telnyx"
    assert agent.identity.endpoint == "wss://bot.example.com/media"
    with pytest.raises(ConnectorUnavailable, match="not a ws:// or wss:// URL"):
        connect(AgentSpec("telnyx", "https://bot.example.com/media"))
    with pytest.raises(TargetRefused, match="needs a ws:// or wss:// URL"):
        endpoint_check("telnyx", "https://bot.example.com/media", unresolved_ok=True)
