"""The signed comparison report: agents' trials side by side, each cell re-derivable from events.

Pure: no Django, no I/O. A column embeds its trials' own evidence reports; verification checks
each of them (structure, contract, integrity, origin, re-evaluation) and recomputes every cell
from the verdicts they derive, never from the stated table, so a changed cell is caught even
when the file is signed anew.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.evaluation.noise import Outcome, ScenarioNoise, outcome_of
from lab.evaluation.verdicts import Verdict
from lab.reports.canonical import body_digest
from lab.reports.schema import Integrity, Signature
from lab.reports.signing import digest_sign, key_id, signature_bytes, signature_verifies

KIND = "comparison"
_UNSEALED = "0" * 64


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cell(_Strict):
    """One scenario of one agent, as the table states it."""

    scenario_id: str
    outcomes: list[Outcome]
    passed: int
    judged: int
    low: float
    high: float
    flip_rate: float


class Column(_Strict):
    agent: str
    connector: str
    model: str
    tools_digest: str
    mode: str
    channel: str
    trials: int = Field(ge=1)
    cells: list[Cell]
    # The trials' own signed evidence reports, each as its document.
    reports: list[dict[str, Any]]


class ComparisonReport(_Strict):
    kind: Literal["comparison"] = "comparison"
    schema_version: Literal[1] = 1
    columns: list[Column]
    integrity: Integrity
    signature: Signature | None = None


def cell_of(scenario_id: str, outcomes: Sequence[Outcome]) -> Cell:
    """A cell from its trials' outcomes; the numbers rounded as the file states them."""
    noise = ScenarioNoise(tuple(outcomes))
    return Cell(
        scenario_id=scenario_id,
        outcomes=list(outcomes),
        passed=noise.passed,
        judged=len(noise.judged),
        low=round(noise.interval.low, 4),
        high=round(noise.interval.high, 4),
        flip_rate=round(noise.flip_rate, 4),
    )


def comparison_seal(columns: list[Column], *, key: Ed25519PrivateKey | None) -> ComparisonReport:
    draft = ComparisonReport(
        columns=columns, integrity=Integrity(algorithm="sha256-rfc8785", body_digest=_UNSEALED)
    )
    return comparison_resealed(draft, key=key)


def comparison_resealed(
    report: ComparisonReport, *, key: Ed25519PrivateKey | None
) -> ComparisonReport:
    digest = body_digest(report.model_dump(mode="json"))
    return report.model_copy(
        update={
            "integrity": Integrity(algorithm="sha256-rfc8785", body_digest=digest),
            "signature": digest_sign(key, digest) if key is not None else None,
        }
    )


def comparison_bytes(report: ComparisonReport) -> bytes:
    return f"{json.dumps(report.model_dump(mode='json'), ensure_ascii=False)}\n".encode()


def is_comparison(document: object) -> bool:
    return isinstance(document, dict) and document.get("kind") == KIND


@dataclass(frozen=True)
class Derived:
    """What one embedded trial report derives: its scenario, its verdict, whether it holds up."""

    scenario_id: str
    verdict: Verdict | None
    event_types: tuple[str, ...]
    persona_given: bool = False
    problem: str = ""


@dataclass(frozen=True)
class ComparisonVerification:
    problems: tuple[str, ...]
    signed_by_lab: bool
    cells: int

    @property
    def consistent(self) -> bool:
        return not self.problems


def verify_comparison(
    raw: bytes,
    *,
    derive: Callable[[bytes], Derived],
    lab_key: Ed25519PublicKey | None,
    trusted: Sequence[Ed25519PublicKey] = (),
) -> ComparisonVerification:
    """Every cell recomputed from its trials' reports, each report verified on its own."""
    try:
        document = json.loads(raw)
        report = ComparisonReport.model_validate(document)
    except (ValueError, ValidationError) as error:
        return ComparisonVerification((f"not a readable comparison report: {error}",), False, 0)
    problems: list[str] = []
    if body_digest(document) != report.integrity.body_digest:
        problems.append("integrity: the body digest does not match the document")
    signed = _signed_by(report, (lab_key,) if lab_key else ())
    if report.signature is None or not (signed or _signed_by(report, trusted)):
        problems.append("origin: not signed by this lab or a key you trust")
    cells = 0
    for number, column in enumerate(report.columns, 1):
        derived = [derive(json.dumps(found).encode()) for found in column.reports]
        problems += [f"column {number}: {d.problem}" for d in derived if d.problem]
        outcomes: dict[str, list[Outcome]] = defaultdict(list)
        for d in derived:
            if d.verdict is not None:
                outcome = outcome_of(d.verdict, d.event_types, persona_given=d.persona_given)
                outcomes[d.scenario_id].append(outcome)
        stated = {cell.scenario_id: cell for cell in column.cells}
        for scenario_id in sorted(set(stated) | set(outcomes)):
            cells += 1
            problems += _cell_differences(number, column, stated, outcomes, scenario_id)
    return ComparisonVerification(tuple(problems), signed, cells)


def _cell_differences(
    number: int,
    column: Column,
    stated: Mapping[str, Cell],
    outcomes: Mapping[str, list[Outcome]],
    scenario_id: str,
) -> list[str]:
    where = f"column {number} ({column.agent}), {scenario_id}"
    if scenario_id not in stated:
        return [f"{where}: trials the table does not state"]
    found = outcomes.get(scenario_id, [])
    if len(found) != column.trials:
        return [f"{where}: {len(found)} verified trial reports for {column.trials} trials"]
    derived, cell = cell_of(scenario_id, found), stated[scenario_id]
    if derived != cell:
        return [
            f"{where}: the table states {cell.passed}/{cell.judged} [{cell.low}, {cell.high}] "
            f"flips {cell.flip_rate}; the trials' events derive {derived.passed}/{derived.judged} "
            f"[{derived.low}, {derived.high}] flips {derived.flip_rate}"
        ]
    return []


def _signed_by(report: ComparisonReport, keys: Sequence[Ed25519PublicKey]) -> bool:
    signature = report.signature
    value = signature_bytes(signature.value) if signature is not None else None
    if signature is None or value is None:
        return False
    return any(
        key_id(key) == signature.key_id
        and signature_verifies(key, value, report.integrity.body_digest)
        for key in keys
    )
