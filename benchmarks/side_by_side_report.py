"""The side by side's tables and issue 28's aims, printed from its passes."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchmarks import voice_aims
from benchmarks.side_by_side_lines import Line, Pass
from benchmarks.voice_aims import pct

PIPECAT_CONFIGS = {
    "defaults": "pipecat defaults (Silero stop 0.2 s + smart-turn v3.2)",
    "matched": "pipecat, matched silence (Silero stop 0.5 s)",
}
LAB_CONFIG = "lab (its defaults, real consumer path)"
BUSY_CONFIG = "lab beside a busy core"
# What the turn model said where it was consulted (decisions at a candidate), per lab pass.
TURN_MODEL: dict[str, list[bool]] = {}


def cell(values: Sequence[float | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    return f"{statistics.median(known):.0f} / {pct(known, 0.95):.0f}"


def aim_figures(lines: list[Line]) -> voice_aims.Heard:
    """The figures issue 19's aims are checked on, for one configuration on one audio."""
    timed = [line.latency for line in lines if line.latency is not None]
    return voice_aims.Heard(
        latencies_ms=[ms for ms in (line.heard_ms for line in lines) if ms is not None],
        lines=len(lines),
        cut=sum(line.cut for line in lines),
        missed=sum(line.first_audio is None for line in lines),
        decided_at_candidate=sum(latency.speculative for latency in timed),
        turns=len(timed),
    )


def row(passes: list[Pass]) -> str:
    lines = [line for p in passes for line in p.lines]
    figures = aim_figures(lines)
    decided = f"{figures.decided_at_candidate}/{figures.turns}" if figures.turns else "-"
    loads = [x for p in passes for x in p.load]
    cpu_ms = sum(p.cpu_s for p in passes) * 1000 / max(len(lines), 1)
    return (
        f"| {passes[0].config} | {passes[0].variant} | {len(lines)} | "
        f"{cell(figures.latencies_ms)} | {figures.cut} | {sum(line.partial for line in lines)} | "
        f"{figures.missed} | {decided} | {cell([line.candidate_ms for line in lines])} | "
        f"{cell([line.transcript_ms for line in lines])} | "
        f"{sum(line.exact for line in lines)}/{len(lines)} | {cpu_ms:.0f} | "
        f"{max(p.peak_rss_mib for p in passes):.0f} | {min(loads):.1f} to {max(loads):.1f} |"
    )


def report(passes: list[Pass]) -> None:
    print(
        "\n| configuration | audio | lines | last voiced sample → first audio p50 / p95 ms "
        "| lines cut | answered on a partial transcript | turns missed (no reply) "
        "| decided at the candidate | candidate after the last voiced sample p50 / p95 ms "
        "| transcript after the last voiced sample p50 / p95 ms | exact transcripts "
        "| CPU ms per turn | peak RSS MiB | load average |"
    )
    print("| --- " * 14 + "|")
    keys = list(dict.fromkeys((p.config, p.variant) for p in passes))
    for key in keys:
        print(row([p for p in passes if (p.config, p.variant) == key]))
    print("\nWhat each part of the chain costs (p50 / p95 ms):\n")
    for key in keys:
        chain: dict[str, list[float]] = {}
        for p in (p for p in passes if (p.config, p.variant) == key):
            for name, values in p.chain.items():
                chain.setdefault(name, []).extend(values)
        parts = "; ".join(f"{name} {cell(values)}" for name, values in chain.items() if values)
        print(f"- {key[0]}, {key[1]}: {parts}")
    print("\nLines a side cut off, answered early or misheard:")
    for p in passes:
        for line in p.lines:
            if line.cut or line.partial or not line.exact:
                said = " | ".join(line.transcripts)
                print(f"- {p.config}, {p.variant}: {line.text!r} → {said!r}")

    def figures(config: str, variant: str) -> voice_aims.Heard:
        return aim_figures(
            [line for p in passes if (p.config, p.variant) == (config, variant) for line in p.lines]
        )

    clean, noisy = figures(LAB_CONFIG, "clean"), figures(LAB_CONFIG, "noisy")
    matched = PIPECAT_CONFIGS["matched"]
    for variant, verdicts in TURN_MODEL.items():
        print(
            f"\nturn model consulted ({variant}, all lab passes): {len(verdicts)} decisions, "
            f"{sum(verdicts)} complete, {len(verdicts) - sum(verdicts)} wait"
        )
    print(
        "\nIssue 28's aims for the lab (capacity: bench_voice --calls; words: bench_asr_corpora):"
    )
    aims = [
        *voice_aims.latency_aims(clean, noisy),
        *voice_aims.pipecat_aims(
            clean, noisy, figures(matched, "clean"), figures(matched, "noisy")
        ),
        voice_aims.busy_aim(clean, figures(BUSY_CONFIG, "clean")),
    ]
    for aim in aims:
        print(aim.line())
