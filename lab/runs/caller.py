"""The scripted caller: plays a scenario's lines, each when its cue in the conversation comes.

A line waits for the agent to finish its turn and, for a short bound on the run's clock, for the
cue it prefers (a proposal read back, a readback to cut into); then it is said anyway and the
missed cue is recorded, so an agent that never reads back meets the next line and is judged.
What the agent asks that no line says (a name, a phone number) is answered from the persona.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from lab.events.types import (
    AgentAudioStarted,
    AgentUtterance,
    CallerUtterance,
    Cue,
    CueMissed,
    Event,
    PersonaAnswered,
    PersonaField,
)
from lab.language.asks import asked_for
from lab.runs.barge_in import typed_backchannel
from lab.runs.log import RunClosed
from lab.runs.surface import ScriptedRun
from lab.scenarios.contracts import CallerLine
from lab.scenarios.meaning import CallerMeaning
from lab.scenarios.persona import DEFAULT_PERSONA, Persona

# How long the agent may take over one turn before the caller gives the run up: a guard only,
# since an outside agent's own turn deadline (LAB_AGENT_TURN_TIMEOUT_S) ends a hung run first.
SCRIPT_WAIT_S = 60.0
# Conversation seconds a line waits for its cue once the agent's turn is over (scaled like every
# delay), and at most for all of a run's cued lines together: a scenario with many cued lines
# waits less on each, so no run waits more than 15 s for cues an agent never gives.
CUE_WAIT_S = 4.0
CUE_BUDGET_S = 15.0
# Persona answers before each line: an agent that keeps asking still meets the script.
PERSONA_ANSWERS = 3
# A persona answer asks for nothing, changes nothing and confirms nothing.
PERSONA_MEANS = CallerMeaning(kind="other")


def _proposal(event: Event) -> bool:
    return event.type == "proposal.made"


def _readback(event: Event) -> bool:
    return isinstance(event.payload, AgentUtterance) and event.payload.purpose == "readback"


_CUES: dict[Cue, Callable[[Event], bool]] = {"proposal": _proposal, "readback": _readback}


async def play_script(session: ScriptedRun) -> None:
    """Play the scenario's scripted caller, then end the run."""
    session.scripted = True
    persona = session.contract.persona or DEFAULT_PERSONA
    bound_s = cue_bound_s(session.contract.caller)
    going: asyncio.Future[None] | None = None
    try:
        mark = len(session.events)
        lines = session.contract.caller
        for number, line in enumerate(lines):
            timed = line.into_readback_ms is not None or line.after == "commit_started"
            barge_in = session.voice is not None and timed
            # A barge-in's audio (into a readback, into a write) is made while the caller waits
            # for its cue, so it starts when the line says, however long synthesis takes.
            made = asyncio.ensure_future(_voiced(session, line.say)) if barge_in else None
            try:
                if line.after == "commit_started":
                    at = await _during_write(session, line, since=mark, number=number)
                else:
                    at = await wait_for_turn(
                        session, line, since=mark, number=number, persona=persona, bound_s=bound_s
                    )
                pcm = await made if made is not None else None
            finally:
                if made is not None:
                    made.cancel()
            mark = len(session.events)
            following = lines[number + 1] if number + 1 < len(lines) else None
            if session.voice is None and following and following.into_readback_ms is not None:
                # A live line hears the barge-in over the agent's own audio, as it plays.
                await session.plan_barge_in(following.say, following.into_readback_ms)
            if line.hang_up_on is not None:
                await _say_and_hang_up(
                    session, line, number, pcm=pcm, at=at, since=mark, bound_s=bound_s
                )
                return
            said = _say(session, line.say, line.means, number, pcm=pcm, at=at)
            if following is not None and following.after == "commit_started":
                going = asyncio.ensure_future(said)
                continue
            await said
            if going is not None:
                # The go-ahead's own turn (its write and the answer) is over before the next line.
                finished: asyncio.Future[None] = going
                going = None
                await finished
        # What the agent asks after the last line (a name before it books) is answered too.
        last = len(session.contract.caller) - 1
        for _ in range(PERSONA_ANSWERS):
            await _turn_over(session)
            if not await _answer_asks(session, last, persona):
                break
        # The agent's last words (often the reference number) are heard out before the end.
        await session.finish(reason_kind="completed", reason="the scripted caller finished")
    except TimeoutError:
        await session.end(
            reason_kind="abandoned",
            reason="the scripted caller waited too long for the agent",
        )
    except RunClosed:
        return
    finally:
        if going is not None:
            going.cancel()
            with contextlib.suppress(asyncio.CancelledError, RunClosed):
                await going


async def _say_and_hang_up(
    session: ScriptedRun,
    line: CallerLine,
    number: int,
    *,
    pcm: bytes | None,
    at: float | None,
    since: int,
    bound_s: float,
) -> None:
    """Say the last line, then hang up once the agent starts a write (or, when none starts, once
    its turn is over and the cue bound has passed): the run ends with any write in flight, and
    ending settles it (lab.runs.tools.ToolCalls.settle_open)."""
    said = asyncio.ensure_future(_say(session, line.say, line.means, number, pcm=pcm, at=at))
    write = asyncio.ensure_future(session.wait_for_event(since, _commit_started))
    try:
        async with asyncio.timeout(SCRIPT_WAIT_S):
            await asyncio.wait({said, write}, return_when=asyncio.FIRST_COMPLETED)
        if not write.done():
            await _turn_over(session)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(bound_s * session.scale):
                    await asyncio.shield(write)
    finally:
        # The turn waiting on the write is dropped; the write itself is shielded and settled.
        for task in (said, write):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RunClosed):
                await task
    started = "while the agent's write was in flight" if _write_started(write) else "after its turn"
    await session.end(reason_kind="completed", reason=f"the scripted caller hung up {started}")


async def _during_write(
    session: ScriptedRun, line: CallerLine, *, since: int, number: int
) -> float | None:
    """Wait for the write the previous line's go-ahead starts, then pause_ms into it, while the
    agent waits for its answer; a turn that ends without one records the cue missed."""
    started = session.now()
    # The go-ahead is said in the background: its turn is under way once it is heard.
    async with asyncio.timeout(SCRIPT_WAIT_S):
        await session.wait_for_event(since, _caller_spoke)
    write = await _within_turn(session, since, _commit_started)
    if write is None:
        waited_ms = round((session.now() - started) / session.scale * 1000)
        await session.record(CueMissed(line=number, cue="commit_started", waited_ms=waited_ms))
        await _turn_over(session)
    await asyncio.sleep(line.pause_ms / 1000 * session.scale)
    return None


def _caller_spoke(event: Event) -> bool:
    return isinstance(event.payload, CallerUtterance)


def _commit_started(event: Event) -> bool:
    return event.type == "tool.commit.started"


def _write_started(write: asyncio.Future[Event]) -> bool:
    return write.done() and not write.cancelled() and write.exception() is None


def cue_bound_s(lines: list[CallerLine]) -> float:
    """How long each cued line waits for its cue, in conversation seconds."""
    cued = sum(_cue_of(line) is not None for line in lines)
    return min(CUE_WAIT_S, CUE_BUDGET_S / max(cued, 1))


def _cue_of(line: CallerLine) -> Cue | None:
    if line.into_readback_ms is not None:
        return "readback"
    return "proposal" if line.after == "proposal" else None


async def _voiced(session: ScriptedRun, text: str) -> bytes | None:
    assert session.voice is not None
    return await session.voice.caller_voice(text)


async def _say(
    session: ScriptedRun,
    text: str,
    means: CallerMeaning | None,
    number: int,
    *,
    pcm: bytes | None = None,
    at: float | None = None,
) -> None:
    if session.voice is not None:
        # What the recognizer makes of this line is read as the line is meant.
        session.voiced_meaning = means
        await session.voice.speak_as_caller(text, pcm, line=number)
    elif not await typed_backchannel(session, text, at=at):
        await session.caller_says(text, source="script", means=means, at=at)


async def wait_for_turn(
    session: ScriptedRun,
    line: CallerLine,
    *,
    since: int,
    number: int,
    persona: Persona,
    bound_s: float,
) -> float | None:
    """Wait for the line's moment: the agent's turn over, and its cue if it comes in time.

    A barge-in returns the moment the script speaks on the run's clock: a loaded loop that wakes
    late must not move a line meant for the middle of a readback past its end. None: say it now.
    """
    cue = _cue_of(line)
    started = session.now()
    deadline = started + bound_s * session.scale
    found = await _await_cue(session, cue, since, deadline, number, persona)
    if cue is not None and found is None:
        waited_ms = round((session.now() - started) / session.scale * 1000)
        await session.record(CueMissed(line=number, cue=cue, waited_ms=waited_ms))
    if found is not None and line.into_readback_ms is not None:
        return await _into_readback(session, found, line.into_readback_ms, since)
    await asyncio.sleep(line.pause_ms / 1000 * session.scale)
    return None


async def _await_cue(
    session: ScriptedRun,
    cue: Cue | None,
    since: int,
    deadline: float,
    number: int,
    persona: Persona,
) -> Event | None:
    """The cue event once the agent's turn is over (a readback at once), or None without it;
    what the agent asks meanwhile is answered from the persona."""
    match = _CUES[cue] if cue is not None else None
    found: Event | None = None
    answers = 0
    while True:
        if match is not None and found is None:
            found = await _within_turn(session, since, match)
            if found is not None and cue == "readback":
                return found
            if found is not None:
                continue  # a proposal is read back in full: the turn goes on until it is over
        else:
            await _turn_over(session)
        if answers < PERSONA_ANSWERS and await _answer_asks(session, number, persona):
            answers += 1
            continue
        if found is not None or match is None or session.now() >= deadline:
            return found
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(deadline - session.now()):
                found = await session.wait_for_event(since, match)


async def _turn_over(session: ScriptedRun) -> None:
    async with asyncio.timeout(SCRIPT_WAIT_S):
        await session.wait_idle()


async def _within_turn(
    session: ScriptedRun, since: int, match: Callable[[Event], bool]
) -> Event | None:
    """The cue if it comes before the agent's turn is over; None once the turn is over."""
    cue = asyncio.ensure_future(session.wait_for_event(since, match))
    idle = asyncio.ensure_future(session.wait_idle())
    try:
        async with asyncio.timeout(SCRIPT_WAIT_S):
            await asyncio.wait({cue, idle}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        idle.cancel()
        if not cue.done():
            cue.cancel()
    return cue.result() if cue.done() and not cue.cancelled() else None


async def _into_readback(session: ScriptedRun, readback: Event, into_ms: int, since: int) -> float:
    if session.voice is not None:
        async with asyncio.timeout(SCRIPT_WAIT_S):
            await session.wait_for_event(
                since,
                lambda e: (
                    isinstance(e.payload, AgentAudioStarted)
                    and e.payload.utterance_event_id == readback.id
                ),
            )
    at = session.timeline.starts[readback.id] + into_ms / 1000 * session.scale
    await asyncio.sleep(max(at - session.now(), 0))
    return at


async def _answer_asks(session: ScriptedRun, number: int, persona: Persona) -> bool:
    """Answer from the persona what the agent's latest turn asked; False if it asked nothing
    the persona knows."""
    asked = latest_asks(session.events)
    if asked is None:
        return False
    utterance_id, fields = asked
    answer = persona.answer(fields)
    if answer is None:
        return False
    await session.record(PersonaAnswered(asked=list(fields), utterance_event_id=utterance_id))
    await _say(session, answer, PERSONA_MEANS, number)
    return True


def latest_asks(events: list[Event]) -> tuple[str, tuple[PersonaField, ...]] | None:
    """What the agent's turn since the caller last spoke asks for, with the last utterance that
    asks; None if it asks for nothing."""
    fields: dict[PersonaField, None] = {}
    utterance_id: str | None = None
    for event in reversed(events):
        match event.payload:
            case CallerUtterance():
                break
            case AgentUtterance(text=text):
                asked = asked_for(text)
                if asked and utterance_id is None:
                    utterance_id = event.id
                fields = dict.fromkeys(asked) | fields
    if utterance_id is None:
        return None
    return utterance_id, tuple(fields)
