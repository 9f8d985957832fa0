"""Writing a report: assemble the evidence, digest its body, sign the digest.

Pure: no Django, no I/O, no clock; the caller supplies the time, runtime and key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lab.evaluation.evaluator import evaluate
from lab.events.types import Event
from lab.facts.schema import ConstraintList
from lab.reports.canonical import body_digest
from lab.reports.schema import SCHEMA_VERSION, Integrity, Report, Runtime
from lab.reports.signing import digest_sign
from lab.reports.tools import tool_identities
from lab.scenarios.contracts import Contract

_UNSEALED = "0" * 64


def report_assemble(
    *,
    run_id: str,
    generated_at: datetime,
    runtime: Runtime,
    contract: Contract,
    events: Sequence[Event],
    key: Ed25519PrivateKey,
    constraints: ConstraintList | None = None,
) -> Report:
    """The signed report of a run: its evidence, the verdict evaluated now, digest and signature.

    constraints is the list its turns were graded against, embedded for the importer's re-grade.
    """
    draft = Report(
        schema_version=SCHEMA_VERSION,
        run_id=run_id,
        generated_at=generated_at,
        runtime=runtime,
        contract=contract,
        contract_hash=contract.contract_hash,
        evaluation=evaluate(contract, events),
        events=list(events),
        tools=tool_identities(events),
        constraints=constraints,
        integrity=Integrity(algorithm="sha256-rfc8785", body_digest=_UNSEALED),
    )
    return report_seal(draft, key=key)


def report_seal(report: Report, *, key: Ed25519PrivateKey | None) -> Report:
    """The report with its body digest recomputed and, given a key, signed."""
    digest = body_digest(report.model_dump(mode="json"))
    return report.model_copy(
        update={
            "integrity": Integrity(algorithm="sha256-rfc8785", body_digest=digest),
            "signature": digest_sign(key, digest) if key is not None else None,
        }
    )


def report_bytes(report: Report) -> bytes:
    """The document as written to disk and served: UTF-8 JSON, one member per line."""
    text = json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False)
    return f"{text}\n".encode()
