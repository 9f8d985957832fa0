"""A recording ToolBox that answers from the fixture files, for the connector's tests.

It stands in for the lab's gated toolbox only where the connector is tested on its own.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.connectors.interface import ToolCall, ToolResult
from lab.events.types import PARTS_OF_DAY

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SLOTS: list[dict[str, Any]] = json.loads((FIXTURES / "calendar.json").read_text())["slots"]
ORDERS: list[dict[str, Any]] = json.loads((FIXTURES / "ledger.json").read_text())["orders"]


def _slots(args: dict[str, Any]) -> list[dict[str, Any]]:
    start, end = PARTS_OF_DAY[args["part_of_day"]] if args.get("part_of_day") else (0, 24)
    return [
        dict(slot)
        for slot in SLOTS
        if slot["day"] == args.get("day")
        and start <= int(slot["time"][:2]) < end
        and args.get("time") in (None, slot["time"])
    ]


@dataclass
class FixtureToolBox:
    """Records every call; `fail_lookups` makes the first N lookups time out, `lose_commits` the
    first N writes' answers (the write is made, the agent hears it may have run); the next write
    waits for `during_write` (the caller speaking to the agent meanwhile) before it answers."""

    fail_lookups: int = 0
    lose_commits: int = 0
    calls: list[ToolCall] = field(default_factory=list)
    during_write: Callable[[], Awaitable[None]] | None = None

    async def call(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        args = call.arguments
        if call.name in ("book_appointment", "issue_refund") and self.during_write is not None:
            meanwhile, self.during_write = self.during_write, None
            await meanwhile()
        match call.name:
            case "check_availability" | "look_up_order" if self.fail_lookups > 0:
                self.fail_lookups -= 1
                return ToolResult(call.call_id, "failed", reason="timeout: no answer in 2 s")
            case "check_availability":
                return ToolResult(call.call_id, "ok", {"options": _slots(args)})
            case "look_up_order":
                orders = [
                    {"order_number": o["order_number"], "max_amount_cents": o["paid_cents"]}
                    for o in ORDERS
                    if o["order_number"] == args.get("order_number")
                ]
                return ToolResult(call.call_id, "ok", {"options": orders})
            case "book_appointment" | "issue_refund" if self.lose_commits > 0:
                self.lose_commits -= 1
                reason = "the connection dropped before the answer came back; it may have run"
                return ToolResult(call.call_id, "failed", {"error": reason}, reason)
            case "book_appointment" | "issue_refund":
                number = sum(c.name in ("book_appointment", "issue_refund") for c in self.calls)
                receipt = {"receipt_id": f"rc-{number}", "args": args}
                return ToolResult(call.call_id, "ok", {"receipt": receipt})
        return ToolResult(call.call_id, "invalid", reason=f"no tool {call.name}")

    def commits(self) -> list[ToolCall]:
        return [c for c in self.calls if c.name in ("book_appointment", "issue_refund")]
