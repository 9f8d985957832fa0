"""A deployed bot whose tools never reached the lab: its actions were not observed (pure).

A phone bot's tools call the team's systems unless the team points them at the run's sandbox;
the lab cannot tell a bot that did nothing from one that acted where the lab could not see. So
a phone call that ends with no tool call at the lab records it as an agent fault, which leaves
every assertion about actions without evidence: never a PASS by silence.
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.events.decisions import GateDecision
from lab.events.types import AgentFaulted, Event
from lab.events.vocabulary import Operation

# The connectors that call a deployed bot, whose tools live elsewhere.
PHONE_CONNECTORS = frozenset({"twilio", "telnyx", "pcm"})
REASON = (
    "actions not observed: no tool call of this call reached the lab's sandbox (point the "
    "bot's tools at /sandbox/tools/ or the run's MCP), so every assertion about actions is "
    "without evidence"
)


def actions_unobserved(events: Sequence[Event]) -> AgentFaulted | None:
    """The fault to record at the end of a phone call no tool call of reached; else None."""
    for event in events:
        payload = event.payload
        if payload.type.startswith("tool."):
            return None
        # A lookup or commit the gate blocked still came from the bot's tools.
        if isinstance(payload, GateDecision) and payload.request.operation is not Operation.PROPOSE:
            return None
    return AgentFaulted(fault_kind="unobserved", reason=REASON)
