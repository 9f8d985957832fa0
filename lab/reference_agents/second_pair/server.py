"""The second pair's desk behind a real OpenAI-compatible server, on loopback only.

python -m lab.reference_agents.second_pair.server --business salon|bikeshop [--habit NAME]
    [--today 2026-12-07] [--port 0] [--host 127.0.0.1]
prints `listening on http://HOST:PORT/v1` first, then serves Chat Completions (chat_server.py).
`--today` is the desk's own calendar day: the salon books the next date with the asked weekday.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from datetime import date

from lab.reference_agents.chat_server import loopback, serve
from lab.reference_agents.messages import Reply
from lab.reference_agents.second_pair.businesses import BUSINESSES, BikeShop, Salon
from lab.reference_agents.second_pair.desk import Habit, answer
from lab.reference_agents.wire import ChatRequest


@dataclass(frozen=True)
class FrontDesk:
    business: Salon | BikeShop
    habit: Habit
    today: date

    @property
    def model(self) -> str:
        return f"{self.business.name}-{self.habit}"

    def reply(self, request: ChatRequest) -> Reply:
        return answer(request.messages, self.business, self.habit, self.today)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--business", choices=sorted(BUSINESSES), required=True)
    parser.add_argument("--habit", choices=[h.value for h in Habit], default=Habit.CORRECT.value)
    parser.add_argument("--today", type=date.fromisoformat, default=date.today())
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    desk = FrontDesk(BUSINESSES[args.business], Habit(args.habit), args.today)
    asyncio.run(serve(desk, loopback(args.host), args.port))


if __name__ == "__main__":
    main(sys.argv[1:])
