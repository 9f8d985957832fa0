"""The pipecat connector's audio mode against a stand-in bot on loopback: the caller's audio goes
out as pipecat's harness sends it, the bot's voice comes back with each sentence it spoke, what
it said before it heard the turn is dropped, and bad audio is a fault. The real bot:
test_pipecat_audio.py.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from lab.connectors.interface import AgentFault, CallerTurn, Said, TurnFinished
from lab.connectors.pipecat_audio import FRAME_BYTES
from lab.connectors.pipecat_eval import PipecatEvalAgent, connect
from lab.connectors.registry import AgentSpec, ConnectorUnavailable
from tests.connectors.test_pipecat_eval import Bot, handshake, outputs, rtvi
from tests.connectors.toolbox import FixtureToolBox

# 0.1 s of the caller, not silence, so the bot can find it in the stream.
CALLER = bytes([1, 2]) * 1600
BOT_RATE = 24000
SENTENCE = "I have Tuesday at 3:00 PM."


def bot_audio(seconds: float) -> str:
    pcm = bytes([0, 8]) * round(BOT_RATE * seconds)
    return rtvi("eval-bot-audio", {"audio": base64.b64encode(pcm).decode(), "sampleRate": BOT_RATE})


async def hear_the_caller(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Read raw-audio frames until the caller's audio has gone by and silence follows."""
    stream = bytearray()
    while CALLER not in stream or not stream.endswith(bytes(FRAME_BYTES)):
        message = json.loads(await ws.recv())
        heard.append(message)
        if message["type"] == "raw-audio":
            stream.extend(base64.b64decode(message["data"]["base64Audio"]))


async def speaks(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """The spoken tail of an earlier reply before its transcription of the turn, then its
    answer, spoken in two audio chunks."""
    await handshake(ws, heard)
    await hear_the_caller(ws, heard)
    for message in [
        rtvi("bot-started-speaking"),
        bot_audio(0.1),
        rtvi("bot-tts-text", {"text": "Hello there."}),
        rtvi("bot-stopped-speaking"),
        rtvi("user-transcription", {"text": " Tuesday afternoon. ", "final": True}),
        rtvi("bot-llm-started"),
        rtvi("bot-llm-text", {"text": SENTENCE}),
        rtvi("bot-llm-stopped"),
        rtvi("bot-tts-started"),
        rtvi("bot-started-speaking"),
        bot_audio(0.5),
        rtvi("bot-tts-stopped"),
        bot_audio(0.25),
        rtvi("bot-tts-text", {"text": SENTENCE}),
        rtvi("bot-stopped-speaking"),
    ]:
        await ws.send(message)
    await ws.wait_closed()


async def garbles(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await hear_the_caller(ws, heard)
    await ws.send(rtvi("user-transcription", {"text": "Tuesday.", "final": True}))
    await ws.send(rtvi("eval-bot-audio", {"audio": "not base64!", "sampleRate": BOT_RATE}))
    await ws.wait_closed()


async def talk(bot: Bot) -> tuple[list[Any], list[dict[str, Any]]]:
    heard: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        await bot(ws, heard)

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        agent = PipecatEvalAgent(url=f"ws://127.0.0.1:{port}/ws", settle_s=0.0, audio=True)
        got = await outputs(agent.greet(FixtureToolBox()))
        turn = CallerTurn(text="Tuesday afternoon.", utterance_event_id="ev-00002", audio=CALLER)
        got += await outputs(agent.hear(turn, FixtureToolBox()))
        await agent.close()
    return got, heard


async def test_the_caller_is_heard_as_a_live_stream_and_the_bot_answers_in_its_own_voice() -> None:
    got, heard = await talk(speaks)
    assert got[0] == TurnFinished() and got[-1] == TurnFinished()
    (said,) = got[1:-1]
    # The greeting it made before it heard the turn is not this turn's answer.
    assert isinstance(said, Said) and said.text == SENTENCE
    # Both chunks, 0.75 s at 24 kHz, handed over at the lab's 16 kHz.
    assert said.audio is not None and len(said.audio) == 2 * round(16000 * 0.75)
    assert heard[0]["data"] == {
        "t": "eval-connect",
        "d": {"skip_tts": False, "capture_bot_audio": True, "capture_bot_images": False},
    }
    frames = [m for m in heard if m["type"] == "raw-audio"]
    assert {(m["data"]["sampleRate"], m["data"]["numChannels"]) for m in frames} == {(16000, 1)}
    assert len({m["id"] for m in frames}) == len(frames)  # RTVI refuses a message without one
    pcm = [base64.b64decode(m["data"]["base64Audio"]) for m in frames]
    assert {len(chunk) for chunk in pcm} == {FRAME_BYTES}
    assert CALLER in b"".join(pcm)
    assert not [m for m in heard if m["type"] == "send-text"]


async def test_audio_the_bot_garbles_is_a_malformed_fault() -> None:
    got, _ = await talk(garbles)
    fault = got[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "malformed"
    assert "not base64" in fault.reason


def test_voice_runs_are_audio_mode_unless_the_lab_is_told_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "ws://127.0.0.1:7860/ws"
    assert connect(AgentSpec("pipecat", url, voice=True)).audio
    assert not connect(AgentSpec("pipecat", url)).audio
    monkeypatch.setenv("LAB_PIPECAT_MODE", "text")
    assert not connect(AgentSpec("pipecat", url, voice=True)).audio
    monkeypatch.setenv("LAB_PIPECAT_MODE", "loud")
    with pytest.raises(ConnectorUnavailable, match="neither audio nor text"):
        connect(AgentSpec("pipecat", url, voice=True))
