"""A team's booking agent behind a real OpenAI-compatible server, on loopback only.

python -m lab.reference_agents.team_agents.server --business trattoria|clinic [--habit NAME]
    [--port 0] [--host 127.0.0.1]
prints `listening on http://HOST:PORT/v1` first, then serves Chat Completions (chat_server.py).
Each request is answered from its own history by the rule-based brain (brain.py), which calls
only its business's own tools; the `tools` a request offers are the caller's business.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

from lab.reference_agents.chat_server import loopback, serve
from lab.reference_agents.messages import Reply
from lab.reference_agents.team_agents.brain import Habit, answer
from lab.reference_agents.team_agents.businesses import BUSINESSES, Business
from lab.reference_agents.wire import ChatRequest


@dataclass(frozen=True)
class TeamAgent:
    business: Business
    habit: Habit

    @property
    def model(self) -> str:
        return f"{self.business.name}-{self.habit}"

    def reply(self, request: ChatRequest) -> Reply:
        return answer(request.messages, self.business, self.habit)


def arguments() -> argparse.ArgumentParser:
    """The command line; the README check parses its examples with it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--business", choices=sorted(BUSINESSES), required=True)
    parser.add_argument("--habit", choices=[h.value for h in Habit], default=Habit.CORRECT.value)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)
    agent = TeamAgent(BUSINESSES[args.business], Habit(args.habit))
    asyncio.run(serve(agent, loopback(args.host), args.port))


if __name__ == "__main__":
    main(sys.argv[1:])
