"""The comparison report of stored trials, and its verification against this lab's keys."""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from lab.reports.comparison import (
    Column,
    ComparisonReport,
    ComparisonVerification,
    Derived,
    cell_of,
    comparison_seal,
    verify_comparison,
)
from lab.reports.keys import lab_private_key, lab_public_key
from lab.reports.services import report_for_run, report_verify
from lab.runs.comparison import Comparison


def comparison_report_for(comparison: Comparison) -> ComparisonReport:
    """Every column's cells with its trials' own evidence reports, signed by this lab."""
    columns = []
    for column in comparison.columns:
        table = column.table
        runs = [cell.run for row in table.rows for cell in row.cells if cell.run is not None]
        columns.append(
            Column(
                agent=table.agent,
                connector=column.connector,
                model=column.model,
                tools_digest=column.tools_digest,
                mode=table.mode,
                channel=table.channel,
                trials=table.group.trials,
                cells=[
                    cell_of(row.scenario_id, [cell.outcome for cell in row.cells])
                    for row in table.rows
                ],
                reports=[report_for_run(run).model_dump(mode="json") for run in runs],
            )
        )
    return comparison_seal(columns, key=lab_private_key())


def comparison_verify(
    raw: bytes, *, trusted: Sequence[Ed25519PublicKey] = ()
) -> ComparisonVerification:
    """Each embedded trial report verified on its own, then every cell recomputed from them."""

    def derive(trial: bytes) -> Derived:
        found = report_verify(trial, trusted=trusted)
        if found.report is None or found.derived is None:
            return Derived("", None, (), problem="an embedded trial report is unreadable")
        scenario = found.report.contract.id
        problem = ""
        if not (found.consistent and found.origin_proven):
            problem = f"a trial report of {scenario} does not verify: {found.summary('it')}"
        types = tuple(event.type for event in found.report.events)
        given = found.report.contract.persona is not None
        return Derived(scenario, found.derived.verdict, types, given, problem)

    return verify_comparison(raw, derive=derive, lab_key=lab_public_key(), trusted=trusted)
