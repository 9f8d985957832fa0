"""Issue 28's voice aims checked against one benchmark run's figures (no Django, no clock).

bench_side_by_side checks the latency, noise, pipecat-ratio, busy-core, cut-line and candidate
aims on the lab's passes; bench_voice --calls the capacity aims; bench_asr_corpora the words.
Each prints one line per aim, met or missed.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

P50_AIM_MS = 400
P95_AIM_MS = 600
# The lab's clean p50 and p95 as a share of pipecat's with matched silence, at most.
PIPECAT_RATIO = 0.4
# Noisy audio may cost at most this share more than clean, at p50 and at p95.
NOISY_MARGIN = 0.15
# Beside one busy core: the p95 at most this many times the quiet pass's.
BUSY_FACTOR = 1.5
CANDIDATE_SHARE = 0.5
CALLS_AIM = 8
CALLS_P95_MS = 1200
CALLS_COMPLETE = 16


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


def _ms(quantiles: tuple[float, float]) -> str:
    return f"p50 {quantiles[0]:.0f} / p95 {quantiles[1]:.0f} ms"


def pipecat_aims(
    clean: Heard, noisy: Heard, matched_clean: Heard, matched_noisy: Heard
) -> list[Aim]:
    """The lab against pipecat with matched silence: a ratio clean, ahead of it noisy."""
    lab_c, lab_n = _p50_p95(clean), _p50_p95(noisy)
    pc_c, pc_n = _p50_p95(matched_clean), _p50_p95(matched_noisy)
    aims = []
    if lab_c is None or pc_c is None:
        aims.append(Aim(f"clean ratio to pipecat matched ≤ {PIPECAT_RATIO}", False, "no figures"))
    else:
        ratios = (lab_c[0] / pc_c[0], lab_c[1] / pc_c[1])
        aims.append(
            Aim(
                f"clean ratio to pipecat matched ≤ {PIPECAT_RATIO} (p50 and p95)",
                max(ratios) <= PIPECAT_RATIO,
                f"{ratios[0]:.2f} / {ratios[1]:.2f}",
            )
        )
    if lab_n is None or pc_n is None:
        aims.append(Aim("noisy ahead of pipecat matched", False, "no figures"))
    else:
        aims.append(
            Aim(
                "noisy ahead of pipecat matched (p50 and p95)",
                lab_n[0] < pc_n[0] and lab_n[1] < pc_n[1],
                f"lab {_ms(lab_n)}, pipecat {_ms(pc_n)}",
            )
        )
    return aims


def busy_aim(quiet: Heard, busy: Heard) -> Aim:
    """Beside a busy core: no turn missed and the p95 within BUSY_FACTOR of the quiet pass's."""
    quiet_q, busy_q = _p50_p95(quiet), _p50_p95(busy)
    text = f"beside a busy core: no missed turn, p95 ≤ {BUSY_FACTOR} x quiet p95"
    if quiet_q is None or busy_q is None:
        return Aim(text, False, "a pass answered none")
    return Aim(
        text,
        busy.missed == 0 and busy_q[1] <= BUSY_FACTOR * quiet_q[1],
        f"{busy.missed} missed of {busy.lines}; busy {_ms(busy_q)}, "
        f"{busy_q[1] / quiet_q[1]:.2f} x quiet p95 {quiet_q[1]:.0f}",
    )


def calls_aims(p95_by_calls: Mapping[int, float], missed_by_calls: Mapping[int, int]) -> list[Aim]:
    """8 calls at p95 ≤ CALLS_P95_MS; 16 calls complete with none missed."""
    p95 = p95_by_calls.get(CALLS_AIM)
    missed = missed_by_calls.get(CALLS_COMPLETE)
    return [
        Aim(
            f"{CALLS_AIM} simultaneous calls on one process: p95 ≤ {CALLS_P95_MS} ms",
            p95 is not None and p95 <= CALLS_P95_MS,
            "not tried" if p95 is None else f"p95 {p95:.0f} ms",
        ),
        Aim(
            f"{CALLS_COMPLETE} simultaneous calls complete with none missed",
            missed == 0,
            "not tried" if missed is None else f"{missed} turns missed",
        ),
    ]


def words_aim(wrong_short: Mapping[str, int], wrong_full: Mapping[str, int]) -> Aim:
    """On every corpus, voice and noise: no more lines wrong than the 30 s window."""
    worse = {k: (wrong_short.get(k, 0), n) for k, n in wrong_full.items()}
    worse.update({k: (n, wrong_full.get(k, 0)) for k, n in wrong_short.items()})
    over = {k: v for k, v in worse.items() if v[0] > v[1]}
    return Aim(
        "words: on every corpus and voice, clean and noisy, no more lines wrong than 30 s",
        not over,
        f"{sum(wrong_short.values())} wrong against {sum(wrong_full.values())}; worse on "
        + (", ".join(f"{k} {a} vs {b}" for k, (a, b) in sorted(over.items())) or "none"),
    )
