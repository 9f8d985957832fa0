"""A planned barge-in goes out over the bot's readback at the scenario's point in the bot's own
audio (the line is full duplex), the bot's `clear` is measured on the line's clock, and the line
is not said again when its turn comes."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection

from lab.audio.g711 import ulaw_decode
from lab.connectors.interface import (
    AgentOutput,
    CallerTurn,
    LineMeasured,
    PlannedBargeIn,
    Said,
    TurnFinished,
)
from lab.connectors.phone_barge import CUE_GRACE_S
from lab.connectors.phone_call import PhoneCall
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_media import TwilioDialect, connect
from lab.events.phone_events import PhoneBargeIn, PhoneLatency
from tests.connectors.phone_bots import bot, caller_turn, media, opening, tone_8k
from tests.connectors.test_twilio_media import CALLER, FAST, hears_length
from tests.connectors.toolbox import FixtureToolBox

READBACK_S = 3.0
INTO_MS = 800
# The caller's line as the lab's voice makes it: a quarter second of silence, then speech.
LINE = bytes(8000) + CALLER


def _loud(message: dict[str, Any]) -> bool:
    codes = np.frombuffer(base64.b64decode(message["media"]["payload"]), dtype=np.uint8)
    return int(np.abs(ulaw_decode(codes).astype(np.int32)).max()) > 1000


async def reads_back(
    ws: ServerConnection, heard: list[dict[str, Any]], stutter_at_s: float | None = None
) -> None:
    """Reads back for 3 s at real-time pace; the caller's voice over it stops it with `clear`
    (its position in the readback, in ms of its own audio, goes in heard); then answers. With
    stutter_at_s, a starved bot's 0.4 s gap falls there (longer than FAST's stretch gap)."""
    sid = await opening(ws, heard)
    await caller_turn(ws, heard)
    played_ms: list[int] = []

    async def listen() -> None:
        while True:
            message = json.loads(await ws.recv())
            heard.append(message)
            if message["event"] == "media" and _loud(message):
                return

    listening = asyncio.ensure_future(listen())
    for piece in np.split(tone_8k(READBACK_S), round(READBACK_S * 50)):
        if listening.done():
            break
        await ws.send(media(sid, piece))
        played_ms.append(20)
        await asyncio.sleep(0.02)
        if stutter_at_s is not None and len(played_ms) == round(stutter_at_s * 50):
            await asyncio.sleep(0.4)
    await listening
    await ws.send(json.dumps({"event": "clear", "streamSid": sid}))
    heard.append({"event": "bot-heard-the-caller-at", "ms": sum(played_ms)})
    await caller_turn(ws, heard)
    for piece in np.split(tone_8k(0.5), 25):
        await ws.send(media(sid, piece))
        await asyncio.sleep(0.02)


async def _voice(text: str) -> bytes:
    return LINE


def _plan() -> PlannedBargeIn:
    # Its stand-in recognizer says how much it heard: past half a second, a "readback".
    return PlannedBargeIn("wait, no", INTO_MS, lambda said: int(said.split()[0]) >= 500)


def _call(url: str) -> PhoneCall:
    """A Twilio call to the stand-in bot, heard by the length of its audio."""
    return PhoneCall(
        url=url,
        call_id="call-1",
        dialect=TwilioDialect("call-1"),
        identity=connect(AgentSpec("twilio", url)).identity,
        limits=FAST,
        hear=hears_length,
        voice=_voice,
    )


async def _barge_in_call(url: str) -> tuple[list[AgentOutput], list[AgentOutput]]:
    agent = _call(url)
    tools = FixtureToolBox()
    assert [o async for o in agent.greet(tools)] == [TurnFinished()]
    await agent.plan_barge_in(_plan())
    first = [o async for o in agent.hear(CallerTurn("hi", "ev-00001", audio=CALLER), tools)]
    second = [o async for o in agent.hear(CallerTurn("wait, no", "ev-00002"), tools)]
    await agent.close()
    return first, second


async def test_the_barge_in_goes_out_over_the_readback_and_the_bots_clear_is_measured() -> None:
    async with bot(reads_back) as (url, heard):
        first, second = await asyncio.wait_for(_barge_in_call(url), timeout=30)
    # The bot heard the caller while its readback played, at the scenario's point in its audio.
    [when] = [m["ms"] for m in heard if m["event"] == "bot-heard-the-caller-at"]
    assert INTO_MS - 40 <= when <= INTO_MS + 300, when
    assert isinstance(first[0], LineMeasured) and isinstance(first[0].payload, PhoneLatency)
    # From the caller's turn to the readback, not from the barge-in that went out during it.
    assert first[0].payload.latency_ms > 0, first[0]
    said = first[1]
    assert isinstance(said, Said) and said.audio is not None
    assert len(said.audio) // 32 < READBACK_S * 1000 / 2  # the readback, cut by the clear
    measured = first[2]
    assert isinstance(measured, LineMeasured) and isinstance(measured.payload, PhoneBargeIn)
    cut = measured.payload
    assert cut.cleared and INTO_MS - 20 <= cut.into_ms <= INTO_MS + 300, cut
    assert cut.response_ms < 400 and cut.talk_over_ms == cut.response_ms, cut
    assert first[3:] == [TurnFinished()]
    # Its turn comes: the line is not said twice, and the bot's answer to it is this turn's.
    assert isinstance(second[-2], Said) and second[-1] == TurnFinished()
    latency = second[0]
    assert isinstance(latency, LineMeasured) and isinstance(latency.payload, PhoneLatency)
    caller_frames = [m for m in heard if m["event"] == "media"]
    runs = sum(1 for a, b in itertools.pairwise(caller_frames) if not _loud(a) and _loud(b))
    assert runs == 2  # "hi", then the barge-in once


async def test_a_reply_with_no_readback_leaves_the_line_for_its_turn() -> None:
    async with bot(reads_back) as (url, heard):
        agent = _call(url)
        tools = FixtureToolBox()
        [o async for o in agent.greet(tools)]
        await agent.plan_barge_in(PlannedBargeIn("wait, no", INTO_MS, lambda said: False))
        first = [o async for o in agent.hear(CallerTurn("hi", "ev-00001", audio=CALLER), tools)]
        await agent.close()
    assert not [m for m in heard if m["event"] == "bot-heard-the-caller-at"]
    assert not any(
        isinstance(o, LineMeasured) and isinstance(o.payload, PhoneBargeIn) for o in first
    )
    said = next(o for o in first if isinstance(o, Said))
    assert said.audio is not None and len(said.audio) // 32 >= READBACK_S * 1000 - 100


async def _cue_call(url: str, answered_after_plan_s: float | None = 0.0) -> list[AgentOutput]:
    """A call whose recognizer never reads a readback; the lab's lookup answered this long after
    the barge-in was planned (None: before it was)."""
    agent = _call(url)
    tools = FixtureToolBox()
    [o async for o in agent.greet(tools)]
    loop = asyncio.get_running_loop()
    answered: list[float | None] = [loop.time()]
    await agent.plan_barge_in(
        PlannedBargeIn("wait, no", INTO_MS, lambda said: False, answered_s=lambda: answered[0])
    )
    if answered_after_plan_s is not None:
        answered[0] = loop.time() + answered_after_plan_s
    first = [o async for o in agent.hear(CallerTurn("hi", "ev-00001", audio=CALLER), tools)]
    await agent.close()
    return first


async def test_the_bots_first_speech_after_its_lookup_answered_is_cut_unrecognized() -> None:
    # A CPU too busy to recognize the readback while it plays: the stretch the bot began after
    # its lookup answered is its readback all the same, cut once the grace past the scenario's
    # point has played too (a filler ahead of the readback passes first).
    async with bot(reads_back) as (url, heard):
        first = await asyncio.wait_for(_cue_call(url, 0.0), timeout=30)
    [when] = [m["ms"] for m in heard if m["event"] == "bot-heard-the-caller-at"]
    cued_ms = INTO_MS + CUE_GRACE_S * 1000
    assert cued_ms - 40 <= when <= cued_ms + 300, when
    [cut] = [o.payload for o in first if isinstance(o, LineMeasured)][1:]
    assert isinstance(cut, PhoneBargeIn) and cut.cleared, cut
    assert abs(cut.late_ms - CUE_GRACE_S * 1000) <= 300, cut


async def test_speech_begun_before_the_lookup_answered_or_an_answer_before_the_plan_is_no_cue() -> (
    None
):
    # The answer came only after the bot had begun speaking (a "let me check" filler), or came
    # before the barge-in was planned: neither makes the bot's speech the readback.
    for answered_after_plan_s in (60.0, None):
        async with bot(reads_back) as (url, heard):
            first = await asyncio.wait_for(_cue_call(url, answered_after_plan_s), timeout=30)
        assert not [m for m in heard if m["event"] == "bot-heard-the-caller-at"]
        assert not any(
            isinstance(o, LineMeasured) and isinstance(o.payload, PhoneBargeIn) for o in first
        )


async def test_a_readback_a_starved_bot_split_in_two_is_cut_at_its_point_all_the_same() -> None:
    # The gap ends the first stretch 1 s in; the cue counts the bot's speech since the answer
    # across both, so the line still goes out at the same point of the readback's own audio.
    async def stutters(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
        await reads_back(ws, heard, stutter_at_s=1.0)

    async with bot(stutters) as (url, heard):
        first = await asyncio.wait_for(_cue_call(url), timeout=30)
    [when] = [m["ms"] for m in heard if m["event"] == "bot-heard-the-caller-at"]
    cued_ms = INTO_MS + CUE_GRACE_S * 1000
    assert cued_ms - 40 <= when <= cued_ms + 300, when
    [cut] = [o.payload for o in first if isinstance(o, LineMeasured)][1:]
    assert isinstance(cut, PhoneBargeIn) and cut.cleared, cut
    assert abs(cut.into_ms - cued_ms) <= 300, cut
