"""pcm:ws://… — the same call as binary 16 kHz PCM16 frames both ways, against stand-in bots."""

from __future__ import annotations

import asyncio

import numpy as np
from websockets.asyncio.server import ServerConnection, serve

from lab.connectors.interface import AgentFault, CallerTurn, LineMeasured, Said, TurnFinished
from lab.connectors.pcm_stream import PcmDialect
from lab.connectors.phone_call import FRAME_BYTES, PhoneCall
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_media import connect
from tests.connectors.test_twilio_media import CALLER, FAST, hears_length
from tests.connectors.toolbox import FixtureToolBox

REPLY = (np.sin(np.arange(8000) / 3) * 5000).astype("<i2").tobytes()  # half a second


async def _caller_heard(ws: ServerConnection) -> list[bytes]:
    frames: list[bytes] = []
    while True:
        frame = await ws.recv()
        assert isinstance(frame, bytes)
        frames.append(frame)
        if CALLER[:FRAME_BYTES] in b"".join(frames) and frames[-1] == bytes(FRAME_BYTES):
            return frames


async def _call(reply: list[str | bytes]) -> tuple[list[object], list[bytes]]:
    heard: list[bytes] = []

    async def handler(ws: ServerConnection) -> None:
        heard.extend(await _caller_heard(ws))
        for frame in reply:
            await ws.send(frame)
        async for _ in ws:
            pass

    async with serve(handler, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/pcm"
        agent = PhoneCall(
            url=url,
            call_id="c",
            dialect=PcmDialect("c"),
            identity=connect(AgentSpec("twilio", url)).identity,
            limits=FAST,
            hear=hears_length,
        )
        tools = FixtureToolBox()
        assert [o async for o in agent.greet(tools)] == [TurnFinished()]
        turn = CallerTurn("hi", "ev-00001", audio=CALLER)
        outputs: list[object] = [
            o async for o in agent.hear(turn, tools) if not isinstance(o, LineMeasured)
        ]
        await agent.close()
    return outputs, heard


async def test_the_caller_goes_out_as_20_ms_binary_frames_and_the_reply_comes_back() -> None:
    outputs, heard = await asyncio.wait_for(_call(["a text frame", REPLY]), timeout=30)
    assert all(len(frame) == FRAME_BYTES for frame in heard)
    said = outputs[0]
    assert isinstance(said, Said) and said.audio == REPLY and outputs[-1] == TurnFinished()


async def test_half_a_sample_is_a_recorded_fault() -> None:
    outputs, _ = await asyncio.wait_for(_call([b"\x01\x02\x03"]), timeout=30)
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and "not whole PCM16 samples" in fault.reason
