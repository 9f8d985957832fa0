"""Harbour Physio's booking bot: a pipecat 1.14 pipeline that runs its own tools on its own data.

benchmarks/.pipecat-venv/bin/python agents/clinic_bot/bot.py --host 127.0.0.1 --port 7860 \
    --llm-url http://127.0.0.1:PORT/v1
serves pipecat's development runner (`/ws` takes the eval harness, and the lab as one). Its LLM
is any OpenAI-compatible server (the tests use lab/reference_agents/team_agents/server.py
--business clinic); its tools, `list_openings` and `schedule_visit`, are the FunctionSchemas of
its tools file (tools.json, pipecat's shape) answered from its own openings (openings.json,
ids like OP-1042), kept per session. The lab only observes the calls. Text only; runs in the
pipecat venv, and the lab never imports it.
"""

from __future__ import annotations

import argparse
import itertools
import json
from datetime import date
from pathlib import Path
from typing import Any

from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema
from pipecat.evals.transport import EvalTransportParams
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.runner.run import main
from pipecat.runner.utils import create_transport
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.workers.runner import WorkerRunner

HERE = Path(__file__).resolve().parent
PERIODS = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24)}
PROMPT = (
    "You are Harbour Physio's booking line. Find an opening with list_openings, read its day "
    "and time back, and call schedule_visit only after the patient says yes to that readback."
)


class Diary:
    """One session's openings and visits: the clinic's own tools."""

    def __init__(self, openings: Path) -> None:
        self.openings = json.loads(openings.read_text())["openings"]
        self.visits: dict[str, str] = {}  # opening ref -> visit id
        self.numbers = itertools.count(5001)

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        match name:
            case "list_openings":
                return {"result": {"openings": self._open(args)}}
            case "schedule_visit":
                ref = str(args.get("opening_ref", ""))
                if not any(opening["ref"] == ref for opening in self.openings):
                    return {"error": f"no opening {ref!r} in the diary"}
                if ref in self.visits:
                    return {"error": f"opening {ref} is already taken"}
                self.visits[ref] = f"V-{next(self.numbers)}"
                return {"visit": {"visit_id": self.visits[ref], "status": "scheduled"}}
        return {"error": f"no tool {name!r}"}

    def _open(self, args: dict[str, Any]) -> list[dict[str, str]]:
        day = str(args.get("week_day", "")).strip().lower()
        low, high = PERIODS.get(str(args.get("period") or ""), (0, 24))
        found = []
        for opening in self.openings:
            starts = opening["starts_at"]
            if opening["ref"] in self.visits or _weekday(starts) != day:
                continue
            if low <= int(starts[11:13]) < high:
                found.append(
                    {
                        "opening_ref": opening["ref"],
                        "starts_at": starts,
                        "clinician": opening["clinician"],
                    }
                )
        return found


def _weekday(iso: str) -> str:
    return date.fromisoformat(iso[:10]).strftime("%A").lower()


def function_schemas(path: Path) -> list[FunctionSchema]:
    """The tools file's tools, written in pipecat's own shape, as the bot's FunctionSchemas."""
    return [
        FunctionSchema(
            name=tool["name"],
            description=tool.get("description", ""),
            properties=tool.get("properties", {}),
            required=tool.get("required", []),
        )
        for tool in json.loads(path.read_text())["tools"]
    ]


async def bot(runner_args: Any) -> None:
    """The runner's entry point: one pipeline per connection."""
    args = runner_args.cli_args
    diary = Diary(Path(args.openings))
    transport = await create_transport(runner_args, {"eval": lambda: EvalTransportParams()})
    llm = OpenAILLMService(
        api_key="clinic",
        base_url=args.llm_url,
        settings=OpenAILLMService.Settings(model=args.model),
    )

    async def run_tool(params: FunctionCallParams) -> None:
        await params.result_callback(diary.answer(params.function_name, dict(params.arguments)))

    llm.register_function(None, run_tool)
    context = LLMContext(
        messages=[{"role": "system", "content": PROMPT}],
        tools=ToolsSchema(standard_tools=function_schemas(Path(args.tools))),
    )
    user, assistant = LLMContextAggregatorPair(context)
    pipeline = Pipeline([transport.input(), user, llm, transport.output(), assistant])
    worker = PipelineWorker(pipeline, params=PipelineParams(), idle_timeout_secs=None)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport: Any, client: Any) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.run(worker)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Harbour Physio's pipecat booking bot")
    parser.add_argument("--llm-url", required=True, help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="clinic")
    parser.add_argument("--tools", default=str(HERE / "tools.json"))
    parser.add_argument("--openings", default=str(HERE / "openings.json"))
    main(parser)
