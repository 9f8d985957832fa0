"""Grading a transcript of calls the lab did not make: one audit entry per agent turn.

Pure: the clock that times each grade and the time of grading are handed in. The command
`gradeturns` and the upload page both call this, through lab.audit.importing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from lab.audit.schema import AuditChannel, AuditEntry
from lab.audit.transcript import AgentTurn
from lab.facts.schema import ConstraintList
from lab.grading.grader import Grader
from lab.grading.grounding import audit


def grade_transcript(
    turns: Sequence[AgentTurn],
    *,
    constraints: ConstraintList,
    tenant: str,
    agent: str,
    grader: Grader,
    graded_at: datetime,
    timer: Callable[[], float],
) -> list[AuditEntry]:
    """Each agent turn graded against constraints and its grounding audited, in file order.

    The entries belong to tenant, which the caller decides: never the list's own `tenant`, which
    is whatever the uploaded file says.
    timer returns seconds (time.perf_counter); each entry records how long its turn took.
    """
    list_digest = constraints.digest()
    entries = []
    for turn in turns:
        started = timer()
        grade = grader.grade(turn.request(), constraints)
        grounding = audit(turn.utterance, turn.retrieval)
        elapsed_ms = (timer() - started) * 1000
        entries.append(
            AuditEntry(
                tenant=tenant,
                agent=agent,
                call_id=turn.call_id,
                turn_id=turn.turn_id,
                channel=AuditChannel.IMPORTED,
                utterance=turn.utterance,
                caller_turn=turn.caller_turn,
                grade=grade,
                grounding=grounding,
                retrieval=turn.retrieval,
                constraint_list_version=constraints.version,
                constraint_list_digest=list_digest,
                # The chunks came from the caller's own retriever, not a lab knowledge base.
                knowledge_base_version=None,
                grade_latency_ms=max(elapsed_ms, 0.0),
                graded_at=graded_at,
            )
        )
    return entries
