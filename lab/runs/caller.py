"""The scripted caller: plays a scenario's lines, each when its cue in the conversation comes."""

from __future__ import annotations

import asyncio

from lab.events.types import AgentAudioStarted, AgentUtterance
from lab.runs.barge_in import typed_backchannel
from lab.runs.log import RunClosed
from lab.runs.surface import ScriptedRun
from lab.scenarios.contracts import CallerLine

SCRIPT_WAIT_S = 60.0


async def play_script(session: ScriptedRun) -> None:
    """Play the scenario's scripted caller, then end the run."""
    session.scripted = True
    try:
        mark = len(session.events)
        for number, line in enumerate(session.contract.caller):
            barge_in = session.voice is not None and line.into_readback_ms is not None
            # A barge-in's audio is made while the caller waits for its cue, so it starts when
            # the line says, however long a busy machine takes to synthesize it.
            made = asyncio.ensure_future(_voiced(session, line.say)) if barge_in else None
            try:
                cue = await wait_for_turn(session, line, since=mark)
                pcm = await made if made is not None else None
            finally:
                if made is not None:
                    made.cancel()
            mark = len(session.events)
            if session.voice is not None:
                # What the recognizer makes of this line is read as the line is meant.
                session.voiced_meaning = line.means
                await session.voice.speak_as_caller(line.say, pcm, line=number)
            elif not await typed_backchannel(session, line.say, at=cue):
                await session.caller_says(line.say, source="script", means=line.means, at=cue)
        # The agent's last words (often the reference number) are heard out before the end.
        await session.finish(reason_kind="completed", reason="the scripted caller finished")
    except TimeoutError:
        await session.end(
            reason_kind="abandoned",
            reason="the scripted caller waited too long for the agent",
        )
    except RunClosed:
        return


async def _voiced(session: ScriptedRun, text: str) -> bytes | None:
    assert session.voice is not None
    return await session.voice.caller_voice(text)


async def wait_for_turn(session: ScriptedRun, line: CallerLine, *, since: int) -> float | None:
    """Wait for the line's cue: a readback to barge into, a proposal, or an idle agent.

    A barge-in returns the moment the script speaks on the run's clock: a loaded loop that wakes
    late must not move a line meant for the middle of a readback past its end.
    """
    async with asyncio.timeout(SCRIPT_WAIT_S):
        if line.into_readback_ms is not None:
            readback = await session.wait_for_event(
                since,
                lambda e: isinstance(e.payload, AgentUtterance) and e.payload.purpose == "readback",
            )
            if session.voice is not None:
                await session.wait_for_event(
                    since,
                    lambda e: (
                        isinstance(e.payload, AgentAudioStarted)
                        and e.payload.utterance_event_id == readback.id
                    ),
                )
            cue = (
                session.timeline.starts[readback.id] + line.into_readback_ms / 1000 * session.scale
            )
            await asyncio.sleep(max(cue - session.now(), 0))
            return cue
        if line.after == "proposal":
            await session.wait_for_event(since, lambda e: e.type == "proposal.made")
        await session.wait_idle()
    await asyncio.sleep(line.pause_ms / 1000 * session.scale)
    return None
