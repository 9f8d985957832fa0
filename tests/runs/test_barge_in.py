"""BargeIn on a stand-in session: backchannels, echo, and real interruptions over agent speech."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

from lab.audio.frames import FRAME_MS, split_frames
from lab.events.types import CallerBackchannel, EchoIgnored, Event, Mode
from lab.runs.barge_in import BargeIn, typed_backchannel
from lab.runs.speech import SpeechTimeline
from tests.audio.speechlike import delayed, pcm, speechlike

SILENT = bytes(640)


@dataclass
class Session:
    """What BargeIn reads and calls of a RunSession, on a clock the test moves."""

    mode: Mode = Mode.GUARDED
    clock: float = 100.0
    timeline: SpeechTimeline = field(default_factory=SpeechTimeline)
    recorded: list[object] = field(default_factory=list)
    interrupts: list[str] = field(default_factory=list)
    cuts: list[tuple[str, float]] = field(default_factory=list)
    seconds: float = 5.0

    def __post_init__(self) -> None:
        self.run = SimpleNamespace(mode=self.mode)
        self.timeline.enqueue(
            event_id="utt-1",
            text="I have Tuesday at nine.",
            seconds=self.seconds,
            now=self.clock,
            proposal_id="p-1",
        )

    @property
    def careful_barge_in(self) -> bool:
        return self.mode == Mode.GUARDED

    def now(self) -> float:
        return self.clock

    async def record(self, payload: object) -> object:
        self.recorded.append(payload)
        return payload

    async def interrupt(self, *, cause_event_id: str, at: float) -> None:
        self.interrupts.append(cause_event_id)
        self.cuts.extend((cut.utterance.event_id, at) for cut in self.timeline.cut(at))


def started(event_id: str = "ev-start") -> asyncio.Future[Event]:
    """The vad.speech_started event as the frame path hands it over: written already."""
    written: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
    written.set_result(SimpleNamespace(id=event_id))  # type: ignore[arg-type]
    return written


async def speak(
    barge: BargeIn,
    session: Session,
    mic: bytes,
    *,
    voiced_ms: int,
    arrivals: list[float] | None = None,
) -> None:
    """Feed mic PCM frame by frame: the first `voiced_ms` are voiced, speech starts at once.
    Frame i reaches BargeIn `arrivals[i]` s after the first (default: every FRAME_MS)."""
    start = session.clock
    for index, frame in enumerate(split_frames(mic)):
        session.clock = start + (arrivals[index] if arrivals else index * FRAME_MS / 1000)
        stream_ms = 1000 + index * FRAME_MS
        voiced = index * FRAME_MS < voiced_ms
        barge.frame(frame.pcm, voiced, stream_ms)
        if index == 2:
            await barge.speech_started(started(), 1000)
        await asyncio.sleep(0)
    session.clock += FRAME_MS / 1000
    await barge.settled()


def stalled(frames: int, stalls: dict[int, float], take_s: float = 0.002) -> list[float]:
    """Arrivals of frames captured every FRAME_MS on a loop that stalls before frame i for
    `stalls[i]` s, then takes the backlog one frame every `take_s`."""
    out: list[float] = []
    for index in range(frames):
        at = index * FRAME_MS / 1000 + stalls.get(index, 0.0)
        out.append(max(at, out[-1] + take_s) if out else at)
    return out


def kinds(session: Session) -> list[type]:
    return [type(p) for p in session.recorded]


async def test_an_acknowledgement_over_the_agent_is_a_backchannel_and_never_cuts_it() -> None:
    session = Session()
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 30), voiced_ms=600)
    assert session.interrupts == []
    assert await barge.absorbs("Mm-hmm.", 940, 1600) is True
    assert session.interrupts == [] and session.timeline.holds("utt-1")
    [backchannel] = session.recorded
    assert isinstance(backchannel, CallerBackchannel)
    assert (backchannel.text, backchannel.during_utterance_event_id) == ("Mm-hmm.", "utt-1")


@pytest.mark.parametrize("text", ["No.", "Friday.", "Wait."])
async def test_a_short_line_with_content_interrupts_once_its_transcript_is_known(text) -> None:
    session = Session()
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 25), voiced_ms=420)
    assert session.interrupts == []
    assert await barge.absorbs(text, 940, 1500) is False
    assert session.interrupts == ["ev-start"]
    assert not session.recorded


async def test_speech_longer_than_a_backchannel_interrupts_before_any_transcript() -> None:
    session = Session()
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 40), voiced_ms=760)
    assert session.interrupts == ["ev-start"]
    assert await barge.absorbs("Okay okay.", 940, 1800) is False
    assert session.interrupts == ["ev-start"]


async def test_an_interruption_decided_after_the_agent_finished_cuts_it_where_the_caller_began():
    session = Session(seconds=0.5)
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 40), voiced_ms=760)
    # Speech was declared 2 frames in; the 700 ms bound passed after the agent's 0.5 s ended.
    assert session.cuts == [("utt-1", pytest.approx(100.04))]


async def test_unguarded_any_speech_over_the_agent_cuts_it_and_reaches_it() -> None:
    session = Session(mode=Mode.UNGUARDED)
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 30), voiced_ms=600)
    assert session.interrupts == ["ev-start"]
    assert await barge.absorbs("Mm-hmm.", 940, 1600) is False
    assert not session.recorded


async def test_speech_while_the_agent_is_silent_is_left_alone() -> None:
    session = Session()
    session.clock += 10  # the utterance has played out
    barge = BargeIn(session)  # type: ignore[arg-type]
    await speak(barge, session, bytes(640 * 40), voiced_ms=760)
    assert session.interrupts == []
    assert await barge.absorbs("Mm-hmm.", 940, 1800) is False
    assert not session.recorded


AGENT = speechlike(3.0, seed=3)


def echo_session(
    mic: np.ndarray, delay_ms: int, mode: Mode = Mode.GUARDED
) -> tuple[Session, BargeIn, bytes]:
    session = Session(mode=mode)
    barge = BargeIn(session)  # type: ignore[arg-type]
    # The agent's audio starts playing just as the mic stream reaches 1000 ms.
    barge.agent_audio("utt-1", pcm(AGENT), session.clock)
    return session, barge, pcm(mic)


@pytest.mark.parametrize("delay_ms", [60, 180, 250])
async def test_the_agents_own_voice_in_the_mic_is_echo_not_barge_in(delay_ms: int) -> None:
    echo = delayed(AGENT, delay_ms, 0.25, len(AGENT))
    session, barge, mic = echo_session(echo, delay_ms)
    await speak(barge, session, mic[: 32000 * 2], voiced_ms=2000)
    assert session.interrupts == []
    [ignored] = session.recorded
    assert isinstance(ignored, EchoIgnored) and ignored.score >= 0.9
    assert await barge.absorbs("I have Tuesday at nine.", 940, 3000) is True
    assert session.interrupts == []


# The loop stalls now and then (recognition or synthesis holding it) and then reads the backlog.
STALLS = {15: 0.3, 40: 0.15, 60: 0.45, 85: 0.25, 120: 0.35}


@pytest.mark.parametrize("delay_ms", [60, 240])
async def test_the_agents_own_voice_read_in_bursts_after_stalls_is_still_echo(
    delay_ms: int,
) -> None:
    echo = delayed(AGENT, delay_ms, 0.25, len(AGENT))
    session, barge, mic = echo_session(echo, delay_ms)
    await speak(barge, session, mic[: 32000 * 3], voiced_ms=3000, arrivals=stalled(150, STALLS))
    assert session.interrupts == []
    [ignored] = session.recorded
    assert isinstance(ignored, EchoIgnored) and ignored.score >= 0.9
    assert await barge.absorbs("I have Tuesday at nine.", 940, 4000) is True
    assert session.interrupts == []


def drained(frames: int, *, at: int, late_s: float, held: int) -> list[float]:
    """Arrivals on a loop that stalls `late_s` before frame `at` and then reads the backlog no
    faster than it was captured for `held` frames (which looks like a pause), then catches up."""
    out: list[float] = []
    for index in range(frames):
        captured = index * FRAME_MS / 1000
        if index < at + held:
            out.append(captured + (late_s if index >= at else 0.0))
        else:
            out.append(max(captured, out[-1] + 0.01))
    return out


@pytest.mark.parametrize("delay_ms", [60, 240])
@pytest.mark.parametrize("late_s", [0.15, 0.3, 0.5])
async def test_the_agents_own_voice_read_as_slowly_as_it_was_captured_is_still_echo(
    delay_ms: int, late_s: float
) -> None:
    # The late run looks like a pause to the mic's clock, but the audio never stopped.
    echo = delayed(AGENT, delay_ms, 0.25, len(AGENT))
    session, barge, mic = echo_session(echo, delay_ms)
    arrivals = drained(150, at=20, late_s=late_s, held=40)
    await speak(barge, session, mic[: 32000 * 3], voiced_ms=3000, arrivals=arrivals)
    assert barge.mic_clock.paused
    assert session.interrupts == []
    assert await barge.absorbs("I have Tuesday at nine.", 940, 4000) is True
    assert session.interrupts == []


async def test_a_caller_over_the_echo_read_as_slowly_as_it_was_captured_still_interrupts() -> None:
    echo = delayed(AGENT, 120, 0.25, len(AGENT))
    caller = np.concatenate([np.zeros(16000), speechlike(2.0, seed=11)])
    session, barge, mic = echo_session(echo + caller[: len(echo)], 120)
    arrivals = drained(150, at=20, late_s=0.3, held=40)
    await speak(barge, session, mic[: 32000 * 3], voiced_ms=3000, arrivals=arrivals)
    assert session.interrupts == ["ev-start"]


@pytest.mark.parametrize("pause_ms", [100, 400])
async def test_the_agents_own_voice_after_the_client_paused_its_mic_is_still_echo(
    pause_ms: int,
) -> None:
    # The mic is off for the pause while the room plays on: the stream goes on with later audio.
    echo = delayed(AGENT, 240, 0.25, len(AGENT))
    skip = pause_ms * 16
    mic = np.concatenate([echo[:16000], echo[16000 + skip :]])[: 16000 * 2]
    arrivals = [
        index * FRAME_MS / 1000 + (pause_ms / 1000 if index >= 50 else 0) for index in range(100)
    ]
    session, barge, pcm_mic = echo_session(mic, 240)
    await speak(barge, session, pcm_mic, voiced_ms=2000, arrivals=arrivals)
    assert session.interrupts == []
    assert kinds(session) == [EchoIgnored]
    assert await barge.absorbs("I have Tuesday at nine.", 940, 3000) is True


async def test_a_caller_talking_over_the_echo_read_in_bursts_still_interrupts() -> None:
    echo = delayed(AGENT, 120, 0.25, len(AGENT))
    caller = np.concatenate([np.zeros(16000), speechlike(2.0, seed=11)])
    session, barge, mic = echo_session(echo + caller[: len(echo)], 120)
    await speak(barge, session, mic[: 32000 * 3], voiced_ms=3000, arrivals=stalled(150, STALLS))
    assert session.interrupts == ["ev-start"]
    assert EchoIgnored in kinds(session)


async def test_a_caller_talking_over_the_echo_still_interrupts() -> None:
    echo = delayed(AGENT, 120, 0.25, len(AGENT))
    caller = np.concatenate([np.zeros(16000), speechlike(2.0, seed=11)])
    session, barge, mic = echo_session(echo + caller[: len(echo)], 120)
    # Guarded, speech over the echo interrupts once it outlasts an acknowledgement.
    await speak(barge, session, mic[: 32000 * 3], voiced_ms=3000)
    assert session.interrupts == ["ev-start"]
    assert EchoIgnored in kinds(session)


def acknowledged_over_echo(mode: Mode = Mode.GUARDED) -> tuple[Session, BargeIn, bytes]:
    """The agent's echo in the mic, and half a second of the caller over it one second in."""
    echo = delayed(AGENT, 120, 0.25, len(AGENT))
    caller = np.concatenate([np.zeros(16000), speechlike(0.5, seed=11), np.zeros(len(echo))])
    return echo_session(echo + caller[: len(echo)], 120, mode)


async def test_an_acknowledgement_over_the_echo_is_a_backchannel_not_an_interruption() -> None:
    session, barge, mic = acknowledged_over_echo()
    await speak(barge, session, mic, voiced_ms=3000)
    assert session.interrupts == []
    assert await barge.absorbs("I have Tuesday at nine. Mm-hmm.", 940, 4000) is True
    assert session.interrupts == []
    assert kinds(session) == [EchoIgnored, CallerBackchannel]
    assert session.recorded[-1].text == "I have Tuesday at nine. Mm-hmm."


async def test_words_with_content_over_the_echo_interrupt_once_their_transcript_is_known() -> None:
    session, barge, mic = acknowledged_over_echo()
    await speak(barge, session, mic, voiced_ms=3000)
    assert await barge.absorbs("I have Tuesday at nine. No.", 940, 4000) is False
    assert session.interrupts == ["ev-start"]


async def test_unguarded_a_caller_heard_over_the_echo_cuts_it_at_once() -> None:
    session, barge, mic = acknowledged_over_echo(Mode.UNGUARDED)
    await speak(barge, session, mic, voiced_ms=3000)
    assert session.interrupts == ["ev-start"]


async def test_a_typed_acknowledgement_over_the_agent_is_a_backchannel_when_guarded() -> None:
    guarded, unguarded = Session(), Session(mode=Mode.UNGUARDED)
    assert await typed_backchannel(guarded, "Okay.") is True  # type: ignore[arg-type]
    assert await typed_backchannel(guarded, "No, Friday.") is False  # type: ignore[arg-type]
    assert await typed_backchannel(unguarded, "Okay.") is False  # type: ignore[arg-type]
    assert kinds(guarded) == [CallerBackchannel]
