"""The evidence report: one JSON document per run, defined once as pydantic models.

Pure: no Django, no I/O. `report_json_schema()` is the published schema; regenerate the committed
copy with `.venv/bin/python -m lab.reports.schema > docs/report-schema.json`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, FailFast, Field

from lab.evaluation.verdicts import Evaluation
from lab.events.types import Action, Channel, Event, Mode, Receipt
from lab.facts.schema import ConstraintList
from lab.scenarios.contracts import Contract

SCHEMA_VERSION: Literal[1] = 1
_HEX64 = r"^[0-9a-f]{64}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SpeechModel(_Strict):
    name: str
    files_sha256: str = Field(description="SHA-256 over the sorted names and hashes of its files.")


class VadSettings(_Strict):
    # Reports written before the engine was recorded ran on webrtcvad.
    engine: Literal["silero", "webrtcvad"] = Field(
        default="webrtcvad", description="What judged each frame speech or silence."
    )
    aggressiveness: int = Field(description="webrtcvad's, 0-3; unused under Silero.")
    end_silence_ms: int


class TurnModel(_Strict):
    """The learned end-of-turn model the voice path consulted at each candidate pause."""

    name: str
    package: str = Field(description="The distribution that ships the model file.")
    license: str
    file_sha256: str = Field(pattern=_HEX64)
    candidate_ms: int = Field(description="The pause after which a turn decision is made.")


class RetrievalComponent(_Strict):
    """The retriever that chose each answer's chunks."""

    name: str = Field(description="The retriever id that retrieval.done events name.")
    library: str
    library_version: str


class FactsUsed(_Strict):
    """The constraint list the turns were graded against and the knowledge base built from it."""

    tenant: str
    constraint_list_version: str
    constraint_list_digest: str = Field(pattern=_HEX64)
    knowledge_base_version: str


class Runtime(_Strict):
    """What produced the report: the lab build, the machine and the engines of the run.

    retrieval, facts and turn_model were added within schema version 1; a report without them
    is readable (turn_model is absent where no turn model ran).
    """

    lab_version: str
    git_commit: str
    python: str
    os: str
    asr: SpeechModel
    tts: SpeechModel
    vad: VadSettings
    gate_version: str
    agent_version: str
    evaluator_version: str
    channel: Channel
    mode: Mode
    retrieval: RetrievalComponent | None = None
    facts: FactsUsed | None = None
    turn_model: TurnModel | None = None


class ToolCommit(_Strict):
    """One commit attempt as the tool.commit.* events record it."""

    attempt_id: str
    action: Action
    idempotency_key: str
    proposal_id: str | None
    authorized_by: str | None
    started_event_id: str | None
    outcome: Literal["executed", "replayed", "failed", "pending"]
    outcome_event_id: str | None
    receipt: Receipt | None
    failure_kind: str | None


# Long lists stop at their first bad item: a flood of bad items would otherwise cost seconds.
FirstError = FailFast()


class ToolIdentities(_Strict):
    """The adapters, receipts, idempotency keys and executions the run's commits name."""

    adapters: Annotated[list[str], FirstError]
    idempotency_keys: Annotated[list[str], FirstError]
    receipt_ids: Annotated[list[str], FirstError]
    execution_ids: Annotated[list[str], FirstError]
    commits: Annotated[list[ToolCommit], FirstError]


class Integrity(_Strict):
    algorithm: Literal["sha256-rfc8785"]
    body_digest: str = Field(
        pattern=_HEX64,
        description=(
            "SHA-256 of the RFC 8785 canonical JSON of the whole document "
            "without its integrity and signature members."
        ),
    )


class Signature(_Strict):
    algorithm: Literal["ed25519"]
    key_id: str = Field(pattern=_HEX64, description="SHA-256 of the raw 32-byte public key.")
    public_key_pem: str = Field(description="The signing key's SubjectPublicKeyInfo PEM.")
    value: str = Field(
        description="Base64 Ed25519 signature of the 32 raw bytes of integrity.body_digest."
    )


class Report(_Strict):
    """A run's evidence: everything needed to re-derive its verdict without trusting it."""

    model_config = ConfigDict(title="Voice Reliability Lab evidence report")

    schema_version: Literal[1]
    run_id: str
    generated_at: datetime
    runtime: Runtime
    contract: Contract
    contract_hash: str = Field(pattern=_HEX64)
    evaluation: Evaluation = Field(
        description="The verdict as stated when the report was written; importers re-derive it."
    )
    events: Annotated[list[Event], FirstError]
    tools: ToolIdentities
    constraints: ConstraintList | None = Field(
        default=None,
        description=(
            "The constraint list the turns were graded against, embedded so that an importer "
            "re-grades every turn; absent from reports written before grading."
        ),
    )
    integrity: Integrity
    signature: Signature | None = None


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a report, as served and committed."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **Report.model_json_schema(),
    }


if __name__ == "__main__":
    print(json.dumps(report_json_schema(), indent=2))
