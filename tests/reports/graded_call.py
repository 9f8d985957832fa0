"""A short free call whose one answer is graded as the live pipeline grades it, built in memory."""

from __future__ import annotations

from datetime import UTC, datetime

from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events.chain import EventChain
from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Channel,
    Event,
    Mode,
    RetrievalDone,
    RunEnded,
    RunStarted,
)
from lab.grading.grader import DeterministicGrader
from lab.grading.run_turns import grade_utterance
from lab.policy.gate import GATE_VERSION
from lab.runs.retrieval import tenant_constraints, tenant_retriever
from lab.scenarios.catalog import contract_get
from lab.scripted.dialogue import AGENT_VERSION

AT = datetime(2025, 1, 6, 10, 0, tzinfo=UTC)
QUESTION = "How much is a bike fit?"
TRUE_ANSWER = "A bike fit consultation is $45.00 [KB-1]."
# The list says $45.00: the grader calls this unsupported, whatever the marker cites.
WRONG_ANSWER = "A bike fit consultation is $90.00 [KB-1]."


def graded_call(answer: str, *, run_id: str = "run-graded") -> list[Event]:
    """run.started, the caller's question, its retrieval, the answer, its grade and grounding."""
    contract = contract_get("free")
    chain = EventChain()
    chain.append(
        RunStarted(
            run_id=run_id,
            scenario_id=contract.id,
            scenario_version=contract.version,
            contract_hash=contract.contract_hash,
            mode=Mode.GUARDED,
            channel=Channel.TYPED,
            evaluator_version=EVALUATOR_VERSION,
            gate_version=GATE_VERSION,
            agent_version=AGENT_VERSION,
        ),
        at=AT,
    )
    asked = chain.append(CallerUtterance(text=QUESTION, source="typed"), at=AT)
    window = tenant_retriever().retrieve(QUESTION)
    retrieval = chain.append(
        RetrievalDone(
            understood_event_id=asked.id,
            query=QUESTION,
            retriever=window.retriever,
            knowledge_base=window.knowledge_base or "",
            chunks=window.chunks,
            confidence=window.confidence,
        ),
        at=AT,
    )
    said = chain.append(
        AgentUtterance(
            text=answer, purpose="answer", duration_ms=2000, retrieval_event_id=retrieval.id
        ),
        at=AT,
    )
    for payload in grade_utterance(
        chain.events, said, grader=DeterministicGrader(), constraints=tenant_constraints()
    ):
        chain.append(payload, at=AT)
    chain.append(RunEnded(reason_kind="completed", reason="the caller hung up"), at=AT)
    return chain.events
