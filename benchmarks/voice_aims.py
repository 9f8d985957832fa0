"""Issue 19's voice aims checked against one benchmark run's figures (no Django, no clock).

bench_side_by_side checks the latency, noise, cut-line and candidate aims on the lab's passes;
bench_voice --calls checks the capacity aim. Each prints one line per aim, met or missed.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

P50_AIM_MS = 400
P95_AIM_MS = 700
# Noisy audio may cost at most this share more than clean, at p50 and at p95.
NOISY_MARGIN = 0.15
CANDIDATE_SHARE = 0.5
CALLS_AIM = 8
CALLS_P95_MS = 1500


def pct(values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile `q` of `values` (not empty)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True, slots=True)
class Heard:
    """One side's lines on one audio: latencies from the last voiced sample, and what went wrong."""

    latencies_ms: Sequence[float]
    lines: int
    cut: int
    missed: int
    # Turns decided at a short-silence candidate (else at the silence fallback), of `turns`.
    decided_at_candidate: int = 0
    turns: int = 0


@dataclass(frozen=True, slots=True)
class Aim:
    text: str
    met: bool
    measured: str

    def line(self) -> str:
        return f"- {'met' if self.met else 'MISSED'}: {self.text} (measured: {self.measured})"


def _p50_p95(heard: Heard) -> tuple[float, float] | None:
    if not heard.latencies_ms:
        return None
    return statistics.median(heard.latencies_ms), pct(heard.latencies_ms, 0.95)


def latency_aims(clean: Heard, noisy: Heard) -> list[Aim]:
    """The aims on one side's clean and noisy passes; a figure that is missing misses its aim."""
    clean_q, noisy_q = _p50_p95(clean), _p50_p95(noisy)
    aims = [
        Aim(
            f"p50 ≤ {P50_AIM_MS} ms and p95 ≤ {P95_AIM_MS} ms clean",
            clean_q is not None and clean_q[0] <= P50_AIM_MS and clean_q[1] <= P95_AIM_MS,
            "no clean line answered" if clean_q is None else _ms(clean_q),
        )
    ]
    if clean_q is None or noisy_q is None:
        aims.append(Aim(f"noisy within {NOISY_MARGIN:.0%} of clean", False, "a pass answered none"))
    else:
        ratios = [n / c if c > 0 else float("inf") for n, c in zip(noisy_q, clean_q, strict=True)]
        aims.append(
            Aim(
                f"noisy within {NOISY_MARGIN:.0%} of clean (p50 and p95)",
                all(r <= 1 + NOISY_MARGIN for r in ratios),
                f"noisy {_ms(noisy_q)}: p50 {ratios[0] - 1:+.0%}, p95 {ratios[1] - 1:+.0%}",
            )
        )
    lines, cut = clean.lines + noisy.lines, clean.cut + noisy.cut
    aims.append(Aim("0 lines cut", lines > 0 and cut == 0, f"{cut} of {lines}"))
    turns = clean.turns + noisy.turns
    decided = clean.decided_at_candidate + noisy.decided_at_candidate
    aims.append(
        Aim(
            f"≥ {CANDIDATE_SHARE:.0%} of the turns decided at the candidate",
            turns > 0 and decided >= CANDIDATE_SHARE * turns,
            f"{decided} of {turns}",
        )
    )
    return aims


def calls_held(p95_by_calls: Mapping[int, float]) -> int:
    """The most simultaneous calls tried whose p95 stayed within CALLS_P95_MS (0: none)."""
    return max((calls for calls, p95 in p95_by_calls.items() if p95 <= CALLS_P95_MS), default=0)


def capacity_aim(p95_by_calls: Mapping[int, float]) -> Aim:
    held = calls_held(p95_by_calls)
    tried = ", ".join(f"{calls} calls {p95:.0f}" for calls, p95 in sorted(p95_by_calls.items()))
    return Aim(
        f"≥ {CALLS_AIM} simultaneous calls per process at p95 ≤ {CALLS_P95_MS} ms",
        held >= CALLS_AIM,
        f"{held} held; p95 ms: {tried or 'none tried'}",
    )


def _ms(quantiles: tuple[float, float]) -> str:
    return f"p50 {quantiles[0]:.0f} / p95 {quantiles[1]:.0f} ms"
