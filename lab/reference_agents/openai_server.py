"""The lab's scripted agent behind a real OpenAI-compatible server, on loopback only.

python -m lab.reference_agents.openai_server --port 0 [--habit NAME] [--host 127.0.0.1]
prints `listening on http://HOST:PORT/v1` first, then serves POST /v1/chat/completions
(whole or streamed) and GET /v1/models (chat_server.py). Each request is answered from its own
history (replay.py), so the server keeps no conversation state.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

from lab.events.types import Action
from lab.language.days import Week
from lab.reference_agents.chat_server import loopback, serve
from lab.reference_agents.habits import HABITS, Habit
from lab.reference_agents.messages import Reply
from lab.reference_agents.replay import replay
from lab.reference_agents.wire import ChatRequest, offered_actions
from lab.scripted.setup import calendar_week


@dataclass
class ReferenceAgent:
    """What every request is answered with: the habit and the calendar's week."""

    habit: Habit | None
    week: Week

    @property
    def model(self) -> str:
        return f"scripted-{self.habit.name}" if self.habit else "scripted-reference"

    @classmethod
    def build(cls, habit: str | None) -> ReferenceAgent:
        return cls(HABITS[habit] if habit else None, calendar_week())

    def reply(self, request: ChatRequest) -> Reply:
        return replay(
            request.messages,
            tools=offered_actions(request) or frozenset(Action),
            week=self.week,
            habit=self.habit,
        )


def arguments() -> argparse.ArgumentParser:
    """The command line; the README check parses its examples with it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--habit", choices=sorted(HABITS), default=None)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)
    asyncio.run(serve(ReferenceAgent.build(args.habit), loopback(args.host), args.port))


if __name__ == "__main__":
    main(sys.argv[1:])
