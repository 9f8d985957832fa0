"""One scripted caller line over the contract's phone line: its audio and what the line did.

Pure: the transforms are lab/audio/impairments.py; each impairment of each line draws from its
own generator, seeded by (the line's seed, the caller line, the impairment), so a line sounds
the same in every run and adding one impairment leaves the others' draws alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lab.audio import impairments as imp
from lab.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from lab.events.types import LineImpaired
from lab.scenarios.line import (
    CHAIN,
    Clipping,
    Jitter,
    Keypad,
    Noise,
    PacketLoss,
    PhoneLine,
    Silence,
    TelephoneBand,
)


@dataclass(frozen=True)
class ImpairedLine:
    """The line's audio as the lab receives it, frame-aligned, and how late each frame comes."""

    pcm: bytes
    delays_ms: list[int]
    record: LineImpaired


@dataclass
class _Tally:
    lost: int = 0
    snr_db: float | None = None
    clipped: int | None = None
    keypad: str | None = None
    kinds: list[str] = field(default_factory=list)


def impair_line(
    phone: PhoneLine, line: int, speech: bytes, *, lead_ms: int, tail_ms: int
) -> ImpairedLine:
    """lead, the spoken words and tail, as they reach the lab over the line."""
    words = np.frombuffer(speech, dtype=np.int16)
    before: list[np.ndarray] = []
    chain = phone.on(line)
    tally = _Tally(kinds=[impairment.kind for impairment in chain])
    for impairment in chain:
        match impairment:
            case Silence(ms=ms):
                before.append(imp.silence(ms))
            case Keypad(digits=digits, tone_ms=tone_ms, gap_ms=gap_ms):
                before.append(imp.keypad(digits, tone_ms, gap_ms))
                tally.keypad = digits
    start = sum(part.size for part in before) + SAMPLE_RATE * lead_ms // 1000
    audio = np.concatenate([*before, imp.silence(lead_ms), words, imp.silence(tail_ms)])
    # Whole frames, so a lost frame and a late one are the frames the lab is sent.
    audio = np.concatenate([audio, np.zeros(-audio.size % FRAME_SAMPLES, np.int16)])
    frames = audio.size // FRAME_SAMPLES
    delays = [0] * frames
    for impairment in chain:
        rng = np.random.default_rng([phone.seed, line, CHAIN.index(impairment.kind)])
        match impairment:
            case Noise(snr_db=snr_db, color=color):
                noise = imp.noise_for(words, audio.size, snr_db, color, rng, at=start)
                audio = imp.add_noise(audio, noise)
                heard = audio[start : start + words.size].astype(np.float64)
                tally.snr_db = round(
                    10 * np.log10(imp.power(words) / max(imp.power(heard - words), 1e-12)), 2
                )
            case Clipping(level=level, gain_db=gain_db):
                clipped = imp.clip(audio, level, gain_db)
                tally.clipped = int(
                    np.count_nonzero(np.abs(clipped) == round(level * imp.FULL_SCALE))
                )
                audio = clipped
            case Jitter(rate=rate, max_late_ms=max_late_ms):
                delays = imp.jitter_delays(frames, rate, max_late_ms, rng)
            case PacketLoss(rate=rate, burst_frames=burst_frames):
                lost = imp.burst_loss(frames, rate, burst_frames, rng)
                tally.lost = int(lost.sum())
                audio = imp.drop_frames(audio, lost)
            case TelephoneBand():
                audio = imp.telephone_band(audio)
    record = LineImpaired(
        line=line,
        seed=phone.seed,
        kinds=tally.kinds,
        frames=frames,
        frames_lost=tally.lost,
        frames_late=sum(1 for delay in delays if delay),
        max_late_ms=max(delays, default=0),
        snr_db=tally.snr_db,
        clipped_samples=tally.clipped,
        keypad=tally.keypad,
    )
    return ImpairedLine(pcm=audio.astype("<i2").tobytes(), delays_ms=delays, record=record)
