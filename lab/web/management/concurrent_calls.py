"""runscenarios --calls N: N simultaneous calls to one deployed agent, each its own run, and what
they measured beside what the lab itself could keep up with."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from lab.connectors.phone_call import FINISHED, CallStats
from lab.events.conversation import AgentFaulted
from lab.events.models import Run
from lab.events.types import Event
from lab.web.management.sandbox_serving import sandbox_served

# A call that never got through: the faults a failed connection leaves.
_NOT_CONNECTED = ("could not reach", "no connection within")


@dataclass(frozen=True)
class CallsMeasured:
    latencies_ms: list[int]
    failed_connections: int
    frames_sent: int
    frames_late: int
    encode_ms: float
    decode_ms: float
    gaps_ms: int = 0

    def lines(self, calls: int) -> list[str]:
        """The summary runscenarios prints under the per-call verdicts."""
        lat = sorted(self.latencies_ms)
        if lat:
            p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
            latency = f"p50={statistics.median(lat):.0f} ms p95={p95} ms over {len(lat)} replies"
        else:
            latency = "no reply heard"
        late = self.frames_late / self.frames_sent if self.frames_sent else 0.0
        per_frame = (self.encode_ms + self.decode_ms) / max(self.frames_sent, 1)
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        return [
            f"calls: {calls} at once; latency (caller's audio end → bot's first audio) {latency}",
            f"failed connections: {self.failed_connections}/{calls}; the bots' speech reached "
            f"the line with {self.gaps_ms} ms of gaps (chunks sent late)",
            # The lab's side: a sender that missed its 20 ms ticks means the lab, not the bot,
            # was the limit.
            f"lab capacity: {late:.1%} of {self.frames_sent} caller frames sent late "
            f"(0% = the lab kept real time), μ-law and resampling {per_frame:.3f} ms per 20 ms "
            f"frame, load average {load} on {os.cpu_count()} cores",
        ]


def _failed_to_connect(events: Sequence[Event]) -> bool:
    return any(
        isinstance(event.payload, AgentFaulted) and event.payload.reason.startswith(_NOT_CONNECTED)
        for event in events
    )


async def play_together(
    runs: Sequence[Run], sandbox_port: int | None, play: Callable[[Run], Awaitable[None]]
) -> list[CallStats]:
    """Play every run at once; the stats of the phone calls they made."""
    before = len(FINISHED)
    async with sandbox_served(sandbox_port):
        await asyncio.gather(*(play(run) for run in runs))
    return [stats for _, stats in FINISHED[before:]]


def measured(stats: Sequence[CallStats], logs: Sequence[Sequence[Event]]) -> CallsMeasured:
    return CallsMeasured(
        latencies_ms=[ms for call in stats for ms in call.latencies_ms],
        failed_connections=sum(_failed_to_connect(events) for events in logs),
        frames_sent=sum(call.frames_sent for call in stats),
        frames_late=sum(call.frames_late for call in stats),
        encode_ms=sum(call.encode_ms for call in stats),
        decode_ms=sum(call.decode_ms for call in stats),
        gaps_ms=sum(call.gaps_ms for call in stats),
    )
