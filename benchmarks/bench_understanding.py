"""Accuracy of the agent's understanding on the phrase corpus: per step, per form, and the
confirm / not-confirm / unclear confusion matrix; then the held-out phrases, written after
the rules were tuned (see docs/benchmarks.md for what was changed after its first run).

Run with: .venv/bin/python -m benchmarks.bench_understanding
"""

from __future__ import annotations

import os
import platform
import time
from collections import defaultdict

from lab.events.types import Confirmation
from tests.language.phrasebook import (
    OUTCOMES,
    STEPS,
    Judgement,
    confusion,
    judge,
    load,
    load_heldout,
)


def report(title: str, judgements: list[Judgement], *, show_misses: bool = True) -> None:
    by_step: defaultdict[str, list[Judgement]] = defaultdict(list)
    by_form: defaultdict[str, list[Judgement]] = defaultdict(list)
    for judgement in judgements:
        by_step[judgement.entry.step].append(judgement)
        by_form[judgement.entry.form].append(judgement)
    right = sum(j.correct for j in judgements)
    print(f"\n{title}: {right}/{len(judgements)} = {right / len(judgements):.1%}")
    for step in STEPS:
        group = by_step.get(step, [])
        if group:
            hits = sum(j.correct for j in group)
            print(f"  {step:<18} {hits:>3}/{len(group):<3} {hits / len(group):6.1%}")
    for form, group in sorted(by_form.items()):
        hits = sum(j.correct for j in group)
        print(f"  form {form:<13} {hits:>3}/{len(group):<3} {hits / len(group):6.1%}")
    print_confusion(judgements)
    misses = [j for j in judgements if not j.correct]
    if show_misses and misses:
        print("  misses:")
        for miss in misses:
            print(f"    [{miss.entry.step}] {miss.entry.text!r}: {'; '.join(miss.problems)}")


def print_confusion(judgements: list[Judgement]) -> None:
    counts = confusion(judgements)
    print("  confirmation (rows expected, columns understood):")
    print("    " + " " * 12 + "".join(f"{outcome.value:>13}" for outcome in OUTCOMES))
    for want in OUTCOMES:
        cells = "".join(f"{counts[(want, got)]:>13}" for got in OUTCOMES)
        print(f"    {want.value:<12}{cells}")
    false_yes = sum(n for (want, got), n in counts.items() if got is Confirmation.CONFIRM != want)
    print(f"  not-confirm or unclear understood as confirm: {false_yes}")


def main() -> None:
    entries = load()
    started = time.perf_counter()
    judgements = [judge(entry) for entry in entries]
    elapsed = time.perf_counter() - started
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"machine: {machine}")
    report("corpus", judgements)
    each_us = elapsed / len(entries) * 1e6
    print(f"  {len(entries) / elapsed:,.0f} utterances/s ({each_us:.0f} µs each)")
    report("held out (written after tuning)", [judge(entry) for entry in load_heldout()])
    frozen = [judge(entry) for entry in load_heldout("heldout_frozen")]
    report("held out (issue 17, written after 'caller rules frozen')", frozen)
    issue32 = [judge(entry) for entry in load_heldout("heldout_issue32")]
    report("held out (issue 32, written after 'Grader rules frozen for issue 32')", issue32)


if __name__ == "__main__":
    main()
