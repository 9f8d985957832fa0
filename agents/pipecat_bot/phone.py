"""The reference pipecat bot deployed for phone calls, as pipecat's Twilio example deploys one.

benchmarks/.pipecat-venv/bin/python agents/pipecat_bot/phone.py --port 8765 \
    --llm-url http://127.0.0.1:PORT/v1 [--tools-url http://LAB/sandbox/tools/ --tools-token T]
    [--wire telnyx]
serves `/media`, the WebSocket a Twilio `<Connect><Stream url=…>` points at: pipecat's
`parse_telephony_websocket` reads Twilio's `connected` and `start`, a `TwilioFrameSerializer`
speaks Media Streams (μ-law 8 kHz both ways, `clear` on an interruption) over a
`FastAPIWebsocketTransport`, and the pipeline is the reference bot's (bot.py): Whisper and Silero
in, the reference brain as its LLM, Piper out. With --wire telnyx the same route takes Telnyx's
media streaming with pipecat's `TelnyxFrameSerializer` instead; a call whose `start` pipecat
detects as another provider's is refused. Its tools: with --tools-url each call is POSTed to the
lab's HTTP sandbox with the call id Twilio's customParameters carried (`lab_call_id`; pipecat
does not read Telnyx's custom_parameters, so over Telnyx it names none and the sandbox takes its
only live call); without it, the bot's own fixture tables answer, and the lab cannot see its
actions.
Runs in the pipecat venv; the lab never imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from bot import HERE, ROOT, Sandbox, function_schemas, speech
from fastapi import FastAPI, WebSocket
from pipecat.adapters.schemas.tools_schema import ToolsSchema
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.transports.websocket.fastapi import (
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)
from pipecat.workers.runner import WorkerRunner

# The pipeline's own rate; the serializer converts to and from Twilio's 8 kHz μ-law.
RATE = 16000
TOOL_TIMEOUT_S = 10.0


async def spoken_times(text: str, text_type: Any) -> str:
    """Times as a person says them ("2 PM" for "2:00 PM"): Piper reads ":00" as "zero zero";
    phone bots that speak times normalize them first."""
    return re.sub(r"\b(\d{1,2}):00\b", r"\1", text)


def tools_for(args: argparse.Namespace, call_id: str) -> Any:
    """The function handler: the lab's sandbox over HTTP, or the bot's own tables."""
    sandbox = Sandbox(ROOT / "fixtures")

    async def run_tool(params: FunctionCallParams) -> None:
        arguments = dict(params.arguments)
        if not args.tools_url:
            await params.result_callback(sandbox.answer(params.function_name, arguments))
            return
        async with httpx.AsyncClient(timeout=TOOL_TIMEOUT_S) as client:
            try:
                response = await client.post(
                    args.tools_url.rstrip("/") + "/" + params.function_name,
                    json={"arguments": arguments, "call_id": call_id},
                    headers={"Authorization": f"Bearer {args.tools_token}"},
                )
                result = response.json()
            except (httpx.HTTPError, ValueError) as error:
                result = {"kind": "failed", "content": {}, "reason": f"tool server: {error}"}
        await params.result_callback(result)

    return run_tool


def serializer_for(wire: str, call_data: Any) -> FrameSerializer:
    """The wire's serializer; hanging up goes through the provider's REST API, which a test
    call has no account for, so it is off."""
    if wire == "telnyx":
        return TelnyxFrameSerializer(
            stream_id=call_data["stream_id"],
            outbound_encoding=call_data["outbound_encoding"],
            inbound_encoding="PCMU",
            params=TelnyxFrameSerializer.InputParams(auto_hang_up=False),
        )
    return TwilioFrameSerializer(
        stream_sid=call_data["stream_id"],
        call_sid=call_data["call_id"],
        params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
    )


async def answer_call(
    websocket: WebSocket, args: argparse.Namespace, tools: list[dict[str, Any]]
) -> None:
    """One phone call: one pipeline, torn down when the caller hangs up."""
    provider, call_data = await parse_telephony_websocket(websocket)
    if provider != args.wire:
        await websocket.close(1008, f"this bot takes {args.wire} streams, not {provider}")
        return
    serializer = serializer_for(args.wire, call_data)
    transport = FastAPIWebsocketTransport(
        websocket=websocket,
        params=FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
        ),
    )
    llm = OpenAILLMService(
        api_key="reference",
        base_url=args.llm_url,
        settings=OpenAILLMService.Settings(model=args.model),
    )
    call_id = str(call_data.get("body", {}).get("lab_call_id", ""))
    llm.register_function(None, tools_for(args, call_id))
    context = LLMContext(tools=ToolsSchema(standard_tools=function_schemas(tools)))
    # Loading the models takes seconds: off the loop, so other calls are answered meanwhile.
    stt, tts, hearing = await asyncio.to_thread(speech)
    tts.add_text_transformer(spoken_times)
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
    tools = json.loads(Path(args.tools).read_text())

    @app.websocket("/media")
    async def media(websocket: WebSocket) -> None:
        await websocket.accept()
        await answer_call(websocket, args, tools)

    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The lab's reference pipecat bot, by phone")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--llm-url", required=True, help="the reference brain's /v1 URL")
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--tools", default=str(HERE / "tools.json"))
    parser.add_argument("--tools-url", default="", help="the lab's HTTP sandbox (/sandbox/tools/)")
    parser.add_argument("--tools-token", default="", help="the sandbox's bearer token")
    parser.add_argument("--wire", choices=["twilio", "telnyx"], default="twilio")
    cli = parser.parse_args()
    uvicorn.run(app_for(cli), host=cli.host, port=cli.port, log_level="info")
