"""Spoke & Chain's service desk: a pipecat 1.14 bot that books workshop slots on its own diary.

benchmarks/.pipecat-venv/bin/python agents/bike_shop/bot.py --host 127.0.0.1 --port 7861 \
    --llm-url http://127.0.0.1:PORT/v1
serves pipecat's development runner (`/ws` takes the eval harness, and the lab as one). Its LLM
is any OpenAI-compatible server (the tests use `python -m lab.reference_agents.second_pair.server
--business bikeshop`); its tools are the MCP-shaped entries of tools.json, run here on
slots.json (codes like BK-2207, two bays per slot), kept per session. Text only; runs in the
pipecat venv and imports nothing of the lab.

With --tools-url URL --tools-token T (a staging bot pointed at a test backend) each call is
POSTed to URL<tool name> as `{"arguments", "call_id"}` and its JSON answer is the tool's result:
the lab's HTTP sandbox (`runscenarios --sandbox-port`) answers in this bot's own shapes.
"""

from __future__ import annotations

import argparse
import itertools
import json
from datetime import date
from pathlib import Path
from typing import Any

import httpx
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
TOOL_TIMEOUT_S = 15.0
PROMPT = (
    "You are Spoke & Chain's service desk. Find a workshop slot with find_service_slots, read "
    "its day and time back, and hold it with hold_service_slot only after the rider says yes."
)


class Workshop:
    """One session's diary: which slots exist, and how many bikes each has taken."""

    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text())
        self.slots: dict[str, dict[str, str]] = {slot["code"]: slot for slot in data["slots"]}
        self.bays = int(data["bays_per_slot"])
        self.held: dict[str, int] = {}
        self.tickets = itertools.count(3301)

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "find_service_slots":
            wanted = str(args.get("weekday", "")).strip().lower()[:3]
            free = [
                slot
                for slot in self.slots.values()
                if _weekday(slot["date"]) == wanted and self.held.get(slot["code"], 0) < self.bays
            ]
            return {"ok": True, "slots": free}
        if name == "hold_service_slot":
            code = str(args.get("code", ""))
            if code not in self.slots:
                return {"ok": False, "reason": f"no slot {code} in the diary"}
            if self.held.get(code, 0) >= self.bays:
                return {"ok": False, "reason": f"both bays of {code} are taken"}
            self.held[code] = self.held.get(code, 0) + 1
            return {"ok": True, "job": {"ticket": f"J-{next(self.tickets)}", "code": code}}
        return {"ok": False, "reason": f"no tool {name}"}


def _weekday(iso: str) -> str:
    return date.fromisoformat(iso).strftime("%a").lower()


def function_schemas(path: Path) -> list[FunctionSchema]:
    """The tools file's MCP-shaped tools as pipecat FunctionSchemas."""
    schemas = []
    for tool in json.loads(path.read_text())["tools"]:
        shape = tool["inputSchema"]
        schemas.append(
            FunctionSchema(
                name=tool["name"],
                description=tool.get("description", ""),
                properties=shape.get("properties", {}),
                required=shape.get("required", []),
            )
        )
    return schemas


async def remote_answer(
    args: Any, name: str, arguments: dict[str, Any], *, call_id: str | None = None
) -> dict[str, Any]:
    """One tool call answered by the backend at --tools-url. The eval wire carries no call id,
    so none is sent there: the lab's sandbox routes it to its only live call."""
    token = args.tools_token
    body = {"arguments": arguments, "call_id": call_id}
    try:
        async with httpx.AsyncClient(timeout=TOOL_TIMEOUT_S) as client:
            response = await client.post(
                args.tools_url + name, json=body, headers={"Authorization": f"Bearer {token}"}
            )
        answer = response.json()
    except (httpx.HTTPError, ValueError) as error:
        return {"ok": False, "reason": f"the service backend did not answer: {error}"}
    return answer if isinstance(answer, dict) else {"ok": False, "reason": "not a JSON object"}


def desk(args: Any, *, call_id: str | None = None) -> tuple[OpenAILLMService, LLMContext]:
    """One conversation's LLM, its tools on a fresh diary or the backend, and its context."""
    workshop = Workshop(Path(args.slots))
    llm = OpenAILLMService(
        api_key="spoke-and-chain",
        base_url=args.llm_url,
        settings=OpenAILLMService.Settings(model=args.model),
    )

    async def run_tool(params: FunctionCallParams) -> None:
        arguments = dict(params.arguments)
        if args.tools_url:
            result = await remote_answer(args, params.function_name, arguments, call_id=call_id)
        else:
            result = workshop.answer(params.function_name, arguments)
        await params.result_callback(result)

    llm.register_function(None, run_tool)
    context = LLMContext(
        messages=[{"role": "system", "content": PROMPT}],
        tools=ToolsSchema(standard_tools=function_schemas(Path(args.tools))),
    )
    return llm, context


async def bot(runner_args: Any) -> None:
    """The runner's entry point: one pipeline, and one diary, per connection."""
    args = runner_args.cli_args
    transport = await create_transport(runner_args, {"eval": lambda: EvalTransportParams()})
    llm, context = desk(args)
    user, assistant = LLMContextAggregatorPair(context)
    pipeline = Pipeline([transport.input(), user, llm, transport.output(), assistant])
    worker = PipelineWorker(pipeline, params=PipelineParams(), idle_timeout_secs=None)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport: Any, client: Any) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.run(worker)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Spoke & Chain's pipecat service desk")
    parser.add_argument("--llm-url", required=True, help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="spoke-and-chain")
    parser.add_argument("--tools", default=str(HERE / "tools.json"))
    parser.add_argument("--slots", default=str(HERE / "slots.json"))
    parser.add_argument(
        "--tools-url",
        default="",
        help="a backend for the tools, e.g. "
        "http://LAB/sandbox/tools/ (its tool names are appended)",
    )
    parser.add_argument("--tools-token", default="", help="the backend's bearer token")
    main(parser)
