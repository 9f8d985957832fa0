"""The phone line a scenario's scripted caller speaks over: seeded impairments of its audio.

Pure: no Django, no I/O. The transforms are lab/audio/impairments.py; a typed (text) run has
no audio, so a line changes nothing there.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lab.audio.impairments import KEYPAD_KEYS


class _Impairment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The caller lines (0-based) it applies to; unset, every line.
    lines: list[int] | None = None

    @field_validator("lines")
    @classmethod
    def _lines_listed_once(cls, lines: list[int] | None) -> list[int] | None:
        if lines is not None and (not lines or min(lines) < 0 or len(set(lines)) != len(lines)):
            raise ValueError("lines must name each caller line once, from 0, and at least one")
        return lines

    def applies_to(self, line: int) -> bool:
        return self.lines is None or line in self.lines


class TelephoneBand(_Impairment):
    """300-3400 Hz and G.711 μ-law at 8 kHz, as phone networks deliver a caller."""

    kind: Literal["telephone_band"]


class PacketLoss(_Impairment):
    """20 ms frames lost at `rate` in bursts averaging burst_frames; a lost frame is silence."""

    kind: Literal["packet_loss"]
    rate: float = Field(gt=0, le=0.5)
    burst_frames: float = Field(default=2.0, ge=1, le=50)


class Jitter(_Impairment):
    """The line stalls at a frame with chance `rate`; frames held up to max_late_ms come bunched."""

    kind: Literal["jitter"]
    rate: float = Field(gt=0, le=0.5)
    max_late_ms: int = Field(ge=20, le=2000, multiple_of=20)


class Noise(_Impairment):
    """Background noise the caller's speech stands snr_db above (over the spoken words)."""

    kind: Literal["noise"]
    snr_db: float = Field(ge=-10, le=60)
    color: Literal["white", "pink"] = "pink"


class Clipping(_Impairment):
    """An overdriven input: gain_db of gain, then samples held within level x full scale."""

    kind: Literal["clipping"]
    level: float = Field(gt=0, le=1)
    gain_db: float = Field(default=0.0, ge=0, le=40)


class Silence(_Impairment):
    """The caller says nothing for ms before the line's words."""

    kind: Literal["silence"]
    ms: int = Field(ge=100, le=30000)


class Keypad(_Impairment):
    """Keypad (DTMF) presses before the line's words."""

    kind: Literal["keypad"]
    digits: str = Field(min_length=1, max_length=16)
    tone_ms: int = Field(default=100, ge=40, le=1000)
    gap_ms: int = Field(default=100, ge=40, le=1000)

    @field_validator("digits")
    @classmethod
    def _keys_on_a_keypad(cls, digits: str) -> str:
        unknown = sorted(set(digits) - set(KEYPAD_KEYS))
        if unknown:
            raise ValueError(f"no keypad key {''.join(unknown)!r}; keys are {KEYPAD_KEYS}")
        return digits


Impairment = Annotated[
    TelephoneBand | PacketLoss | Jitter | Noise | Clipping | Silence | Keypad,
    Field(discriminator="kind"),
]
# The order a line's audio meets them, whatever order the contract lists them in: what the
# caller does, the room and the microphone, the codec, then the network.
CHAIN = ("silence", "keypad", "noise", "clipping", "telephone_band", "packet_loss", "jitter")


class PhoneLine(BaseModel):
    """The impairments of a scenario's line, and the seed that makes them the same every run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = Field(ge=0, le=2**32 - 1)
    impairments: list[Impairment] = Field(min_length=1)

    @field_validator("impairments")
    @classmethod
    def _each_kind_once(cls, impairments: list[Impairment]) -> list[Impairment]:
        kinds = [impairment.kind for impairment in impairments]
        if len(set(kinds)) != len(kinds):
            raise ValueError("a line lists each kind of impairment once")
        return impairments

    def on(self, line: int) -> list[Impairment]:
        """The impairments line `line` meets, in the order of the chain."""
        chosen = [impairment for impairment in self.impairments if impairment.applies_to(line)]
        return sorted(chosen, key=lambda impairment: CHAIN.index(impairment.kind))

    @property
    def highest_line(self) -> int:
        return max((max(i.lines) for i in self.impairments if i.lines is not None), default=-1)
