"""The rollup's daily trend as SVG geometry, drawn server-side (the CSP allows no inline script).

Pure: numbers in, coordinates out; templates/rollup/rollup.html turns them into <rect>s and lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lab.api.schemas import TrendDay

LEFT, RIGHT, TOP, BOTTOM = 44.0, 12.0, 12.0, 28.0
MAX_X_LABELS = 8


@dataclass(frozen=True)
class Bar:
    """One day: all turns as a bar, the flagged ones as a bar over its foot."""

    day: TrendDay
    x: float
    width: float
    turns_y: float
    turns_height: float
    flagged_y: float
    flagged_height: float


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: float
    plot_right: float
    baseline: float
    bars: tuple[Bar, ...]
    no_marker_points: str  # an SVG polyline's points
    orphan_marker_points: str
    y_labels: tuple[Label, ...]
    x_labels: tuple[Label, ...]
    peak: int


def trend_chart(trend: Sequence[TrendDay], *, width: int = 720, height: int = 220) -> Chart:
    """Bars of turns and flagged turns per day, lines of no_marker and orphan_marker counts."""
    if not trend:
        raise ValueError("a trend has at least one day")
    plot_width, plot_height = width - LEFT - RIGHT, height - TOP - BOTTOM
    baseline = TOP + plot_height
    peak = max(day.turns for day in trend)
    scale = plot_height / max(peak, 1)
    slot = plot_width / len(trend)

    def y(count: int) -> float:
        return round(baseline - count * scale, 2)

    bars = tuple(
        Bar(
            day=day,
            x=round(LEFT + i * slot + slot * 0.15, 2),
            width=round(slot * 0.7, 2),
            turns_y=y(day.turns),
            turns_height=round(day.turns * scale, 2),
            flagged_y=y(day.flagged),
            flagged_height=round(day.flagged * scale, 2),
        )
        for i, day in enumerate(trend)
    )

    def points(counts: Sequence[int]) -> str:
        return " ".join(
            f"{round(LEFT + (i + 0.5) * slot, 2)},{y(count)}" for i, count in enumerate(counts)
        )

    step = math.ceil(len(trend) / MAX_X_LABELS)
    shown = range((len(trend) - 1) % step, len(trend), step)  # ending on the last day
    x_labels = tuple(
        Label(
            x=round(LEFT + (i + 0.5) * slot, 2), y=height - 8, text=trend[i].day.strftime("%b %d")
        )
        for i in shown
    )
    ticks = sorted({0, peak // 2, peak}) if peak else [0]
    y_labels = tuple(Label(x=LEFT - 6, y=y(tick), text=str(tick)) for tick in ticks)
    return Chart(
        width=width,
        height=height,
        plot_left=LEFT,
        plot_right=width - RIGHT,
        baseline=baseline,
        bars=bars,
        no_marker_points=points([day.no_marker for day in trend]),
        orphan_marker_points=points([day.orphan_marker for day in trend]),
        y_labels=y_labels,
        x_labels=x_labels,
        peak=peak,
    )
