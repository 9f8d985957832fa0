"""Per-turn overhead of the outside-agent connectors, against the same scripted agent.

.venv/bin/python -m benchmarks.bench_pipecat [--conversations 20]

Starts the reference OpenAI-compatible server and (when benchmarks/.pipecat-venv exists) the
reference pipecat bot as subprocesses on loopback, then plays the same three-turn booking call
(a lookup, a confirmed commit, a thank-you) through: the reference agent's own reply computed in
process (`replay`, what the server does per request), the OpenAI connector straight to the
server, and the pipecat connector through the bot (its 0.2 s settle and none). Prints
milliseconds per caller turn (median, p95) and per handshake.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from lab.connectors.interface import CallerTurn, ToolCall, ToolResult, TurnFinished
from lab.connectors.openai_chat import OpenAIChatAgent
from lab.connectors.pipecat_eval import PipecatEvalAgent
from lab.connectors.tool_specs import offered_specs
from lab.events.types import Action
from lab.reference_agents.replay import replay
from lab.scripted.setup import calendar_week

ROOT = Path(__file__).resolve().parents[1]
PIPECAT_PYTHON = ROOT / "benchmarks" / ".pipecat-venv" / "bin" / "python"
TURNS = ("I'd like to book an appointment on Tuesday afternoon.", "Yes, please book it.", "Thanks.")
SLOTS: list[dict[str, Any]] = json.loads((ROOT / "fixtures" / "calendar.json").read_text())["slots"]


class Tools:
    """The calendar fixture as the connector's ToolBox (no gate, no database: transport only)."""

    async def call(self, call: ToolCall) -> ToolResult:
        if call.name == "check_availability":
            found = [s for s in SLOTS if s["day"] == call.arguments.get("day")]
            return ToolResult(call.call_id, "ok", {"options": found[-1:]})
        return ToolResult(call.call_id, "ok", {"receipt_id": "bench-1", "replayed": False})


def _start(command: list[str], ready: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen = threading.Event()

    def drain() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if ready in line:
                seen.set()

    threading.Thread(target=drain, daemon=True).start()
    if not seen.wait(90):
        process.kill()
        raise SystemExit(f"{command[1]} did not start")
    return process


async def _conversation(agent: Any, turns: list[float], handshakes: list[float]) -> None:
    tools = Tools()
    started = time.perf_counter()
    async for output in agent.greet(tools):
        assert isinstance(output, TurnFinished), output
    handshakes.append(time.perf_counter() - started)
    for index, text in enumerate(TURNS):
        started = time.perf_counter()
        outputs = [o async for o in agent.hear(CallerTurn(text, f"ev-{index}"), tools)]
        assert outputs[-1] == TurnFinished(), outputs
        turns.append(time.perf_counter() - started)
    await agent.close()


def _in_process(conversations: int) -> list[float]:
    """The scripted agent's own reply per request, as the reference server computes it."""
    actions = frozenset({Action.BOOK})
    week, times = calendar_week(), []
    history: list[dict[str, Any]] = []
    for _ in range(conversations):
        history = []
        for text in TURNS:
            history.append({"role": "user", "content": text})
            started = time.perf_counter()
            reply = replay(history, tools=actions, week=week)
            times.append(time.perf_counter() - started)
            history.append({"role": "assistant", "content": reply.content})
    return times


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


async def main(conversations: int) -> None:
    server = _start(
        [sys.executable, "-m", "lab.reference_agents.openai_server", "--port", "18971"],
        "listening on",
    )
    bot = None
    try:
        url = "http://127.0.0.1:18971/v1"
        print(f"in process (replay)     per turn  {_ms(_in_process(conversations))}")
        turns: list[float] = []
        calendar = offered_specs(frozenset({Action.BOOK}))
        for _ in range(conversations):
            chat = OpenAIChatAgent(base_url=url, model="scripted", tools=calendar)
            await _conversation(chat, turns, [])
        print(f"openai connector        per turn  {_ms(turns)}")
        if not PIPECAT_PYTHON.exists():
            print("pipecat: no benchmarks/.pipecat-venv (make benchmarks/.pipecat-venv/.installed)")
            return
        bot_command = [str(PIPECAT_PYTHON), "agents/pipecat_bot/bot.py", "--host", "127.0.0.1"]
        bot = _start(
            [*bot_command, "--port", "18972", "--llm-url", url],
            "Uvicorn running on http://127.0.0.1:18972",
        )
        for settle in (0.2, 0.0):
            turns, handshakes = [], list[float]()
            for _ in range(conversations):
                bot_agent = PipecatEvalAgent(url="ws://127.0.0.1:18972/ws", settle_s=settle)
                await _conversation(bot_agent, turns, handshakes)
            print(f"pipecat (settle {settle:.1f} s) per turn  {_ms(turns)}")
            print(f"pipecat (settle {settle:.1f} s) handshake {_ms(handshakes)}")
    finally:
        for process in (bot, server):
            if process is not None:
                process.terminate()
                process.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=20)
    asyncio.run(main(parser.parse_args().conversations))
