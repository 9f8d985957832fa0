"""When a hand-driven call is over: the caller has spoken, the agent has answered, and then
the caller has said nothing for QUIET_END_S. The agent says goodbye and the run ends completed.

A scripted caller ends its own runs; the quiet rule never applies while a script plays.
"""

from __future__ import annotations

import asyncio
import contextlib

from lab.events.types import Event
from lab.runs.log import RunClosed
from lab.runs.surface import WatchedRun

# Real seconds, on every channel: only people drive runs by hand.
QUIET_END_S = 20.0
# Events that account for speech already under way, not signs of life in the call.
_BOOKKEEPING = frozenset(
    {"agent.audio_started", "agent.audio_played", "turn.latency", "phone.latency", "phone.barge_in"}
)


def _alive(event: Event) -> bool:
    return event.type not in _BOOKKEEPING


async def end_when_quiet(session: WatchedRun) -> None:
    """Watch a run until it ends; close it once the call has gone quiet after an answer."""
    with contextlib.suppress(RunClosed):
        while True:
            await session.wait_idle()
            mark = len(session.events)
            try:
                async with asyncio.timeout(QUIET_END_S):
                    await session.wait_for_event(mark, _alive)
                continue
            except TimeoutError:
                pass
            spoken = any(e.type == "caller.utterance" for e in session.events)
            if session.scripted or not spoken or not session.idle:
                continue
            await session.close_quiet_call(quiet_s=QUIET_END_S)
            return
