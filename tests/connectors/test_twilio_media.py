"""The lab as Twilio's side of a media stream, against stand-in bots on loopback: the messages
Twilio documents, real-time μ-law, marks played back, clear, and a recorded end for bad bots."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection

from lab.audio.g711 import ulaw_decode
from lab.audio.impairments import keypad
from lab.connectors import twilio_wire as wire
from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    CallerTurn,
    LineMeasured,
    Said,
    TurnFinished,
)
from lab.connectors.phone_call import Limits, PhoneCall
from lab.connectors.registry import AgentSpec, ConnectorUnavailable
from lab.connectors.twilio_media import CALL_PARAMETER, TwilioDialect, connect
from tests.connectors.phone_bots import bot, caller_turn, media, opening, tone_8k
from tests.connectors.toolbox import FixtureToolBox

# 0.4 s of the caller (16 kHz PCM16), loud enough to find in the stream.
CALLER = (np.sin(np.arange(6400) / 5) * 6000).astype("<i2").tobytes()
FAST = Limits(handshake_s=5, reply_s=3, greeting_s=0.3, stretch_gap_s=0.3, turn_quiet_s=0.5)


async def hears_length(pcm: bytes) -> str:
    """Stands in for the recognizer where only the audio's arrival is under test."""
    return f"{len(pcm) // 32} ms"


def call(url: str, limits: Limits = FAST) -> PhoneCall:
    return PhoneCall(
        url=url,
        call_id="call-1",
        dialect=TwilioDialect("call-1"),
        identity=connect(AgentSpec("twilio", url)).identity,
        limits=limits,
        hear=hears_length,
    )


async def one_turn(agent: PhoneCall, caller: bytes = CALLER) -> list[AgentOutput]:
    tools = FixtureToolBox()
    outputs = [output async for output in agent.greet(tools)]
    assert outputs == [TurnFinished()]
    outputs = [o async for o in agent.hear(CallerTurn("hi", "ev-00001", audio=caller), tools)]
    await agent.close()
    # What the line measured is checked in test_phone_barge_in.py; here, what the bot said.
    return [o for o in outputs if not isinstance(o, LineMeasured)]


async def answers(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Half a second of speech in 20 ms chunks at real-time pace, then a mark."""
    sid = await opening(ws, heard)
    await caller_turn(ws, heard)
    for piece in np.split(tone_8k(0.5), 25):
        await ws.send(media(sid, piece))
        await asyncio.sleep(0.02)
    await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "reply-1"}}))


async def test_it_speaks_twilios_side_and_hears_the_bots_reply() -> None:
    async with bot(answers) as (url, heard):
        agent = call(url)
        outputs = await one_turn(agent)
    assert outputs[-1] == TurnFinished()
    said = outputs[0]
    assert isinstance(said, Said) and said.audio is not None
    # Half a second at 16 kHz as the line played it, with any pauses the bot's pacing left.
    assert 480 <= len(said.audio) // 32 <= 700
    connected, start = heard[0], heard[1]
    assert connected == {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    body = start["start"]
    assert start["event"] == "start" and start["sequenceNumber"] == "1"
    assert body["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert body["tracks"] == ["inbound"] and body["customParameters"] == {CALL_PARAMETER: "call-1"}
    assert body["streamSid"] == start["streamSid"] and body["callSid"].startswith("CA")
    frames = [m for m in heard if m["event"] == "media"]
    # start is the stream's first numbered message; marks played back take their numbers too.
    numbers = [int(m["sequenceNumber"]) for m in heard[1:]]
    assert numbers == list(range(1, 1 + len(numbers)))
    assert [m["media"]["timestamp"] for m in frames[:3]] == ["0", "20", "40"]
    assert all(len(base64.b64decode(m["media"]["payload"])) == 160 for m in frames)
    marks = [m for m in heard if m["event"] == "mark"]
    assert [m["mark"]["name"] for m in marks] == ["reply-1"]
    assert heard[-1]["event"] == "stop" and heard[-1]["stop"]["callSid"] == body["callSid"]
    assert agent.stats.latencies_ms and agent.stats.marks_acknowledged == 1


async def test_keypad_presses_in_the_callers_audio_go_out_as_dtmf_after_their_tones() -> None:
    tone_ms, gap_ms = 90, 110  # presses that end mid-chunk
    presses = keypad("4#2", tone_ms, gap_ms).tobytes()
    async with bot(answers) as (url, heard):
        agent = call(url)
        outputs = await one_turn(agent, presses + CALLER)
    assert isinstance(outputs[0], Said)
    numbers = [int(m["sequenceNumber"]) for m in heard[1:]]
    assert numbers == list(range(1, 1 + len(numbers)))
    pressed = [
        (i, wire.Dtmf.model_validate(m)) for i, m in enumerate(heard) if m["event"] == "dtmf"
    ]
    assert [dtmf.dtmf.digit for _, dtmf in pressed] == ["4", "#", "2"]
    assert all(
        d.streamSid == heard[1]["streamSid"] and d.dtmf.track == "inbound_track" for _, d in pressed
    )
    # Each comes right after the media chunk where its tones end, in the stream's audio time
    # (counted from the chunk the first tone begins in: the caller's audio starts on a chunk).
    media = [m for m in heard if m["event"] == "media"]
    first = next(m for m in media if _loud(m))
    start_ms = int(first["media"]["timestamp"])
    for press, (index, _) in enumerate(pressed):
        before = heard[index - 1]
        assert before["event"] == "media"
        ends_ms = press * (tone_ms + gap_ms) + tone_ms
        assert abs(int(before["media"]["timestamp"]) - start_ms - ends_ms) < 20
    assert isinstance(agent.dialect, TwilioDialect)
    assert agent.dialect.line.pressed == ["4", "#", "2"]


def _loud(media: dict[str, Any]) -> bool:
    codes = np.frombuffer(base64.b64decode(media["media"]["payload"]), dtype=np.uint8)
    return int(np.abs(ulaw_decode(codes).astype(np.int32)).max()) > 1000


async def test_the_caller_streams_in_real_time() -> None:
    async with bot(answers) as (url, heard):
        started = asyncio.get_running_loop().time()
        await one_turn(call(url))
        elapsed_s = asyncio.get_running_loop().time() - started
    frames = sum(1 for m in heard if m["event"] == "media")
    # Never faster than real time (a loaded machine may send fewer frames, never more).
    assert frames * 0.02 <= elapsed_s + 0.1


async def clears(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Four seconds of audio at once with a mark after it, then clear 0.3 s later."""
    sid = await opening(ws, heard)
    await caller_turn(ws, heard)
    await ws.send(media(sid, tone_8k(4.0)))
    await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": "long"}}))
    await asyncio.sleep(0.3)
    await ws.send(json.dumps({"event": "clear", "streamSid": sid}))


async def test_clear_drops_unplayed_audio_and_plays_back_its_marks() -> None:
    async with bot(clears) as (url, heard):
        agent = call(url)
        outputs = await one_turn(agent)
    said = outputs[0]
    assert isinstance(said, Said) and said.audio is not None
    assert len(said.audio) // 32 < 2000  # cut well short of the 4 s sent
    assert [m["mark"]["name"] for m in heard if m["event"] == "mark"] == ["long"]
    assert agent.stats.clears == 1


async def silent(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await opening(ws, heard)


def sends(*frames: str | bytes | None) -> Any:
    """A bot that answers the caller's turn with frames (None: hangs up)."""

    async def behaviour(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
        sid = await opening(ws, heard)
        await caller_turn(ws, heard)
        for frame in frames:
            if frame is None:
                await ws.close()
                return
            await ws.send(frame.replace("SID", sid) if isinstance(frame, str) else frame)

    return behaviour


PCM_AS_ULAW = json.dumps(
    {
        "event": "media",
        "streamSid": "SID",
        "media": {"payload": base64.b64encode(tone_8k(1.0, 3000).tobytes()[:8000]).decode()},
    }
)
FLOOD = '{"event": "mark", "streamSid": "SID", "mark": {"name": "x"}}'


@pytest.mark.parametrize(
    ("behaviour", "kind", "words"),
    [
        (silent, "timeout", "no audio within 3 s"),
        (sends("{not json"), "malformed", "not JSON"),
        (sends('{"event": "media", "streamSid": "SID"}'), "malformed", "would not take"),
        (sends('{"event": "clear", "streamSid": "MZother"}'), "malformed", "another stream"),
        (sends(PCM_AS_ULAW), "malformed", "not μ-law 8 kHz"),
        (sends(*[FLOOD] * 5000), "malformed", "flooded"),
        (sends(None), "disconnected", "hung up mid-call"),
    ],
)
async def test_a_bad_bot_gets_a_recorded_end(behaviour: Any, kind: str, words: str) -> None:
    async with bot(behaviour) as (url, _):
        outputs = await asyncio.wait_for(one_turn(call(url)), timeout=30)
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == kind and words in fault.reason


async def test_audio_far_ahead_of_real_time_is_refused() -> None:
    limits = Limits(**{**FAST.__dict__, "reply_s": 3})
    async with bot(sends(*[media("SID", tone_8k(1.0))] * 40)) as (url, _):
        agent = call(url, limits)
        agent.speech.max_ahead_s = 5.0
        outputs = await asyncio.wait_for(one_turn(agent), timeout=30)
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and "ahead of real time" in fault.reason


def test_only_a_websocket_or_webhook_url_is_a_twilio_endpoint() -> None:
    with pytest.raises(ConnectorUnavailable, match="not a ws:// or wss:// URL"):
        connect(AgentSpec("twilio", "ftp://bot.example.com/media"))
    # An https URL is the bot's voice webhook, answered before the stream (test_twilio_webhook).
    assert connect(AgentSpec("twilio", "https://bot.example.com/voice")).answer is not None
    agent = connect(AgentSpec("twilio", "wss://user:pw@bot.example.com/media?token=x"))
    assert agent.identity.endpoint == "wss://bot.example.com/media"
