"""Every agent utterance of a live run graded and audited: turn.graded, turn.grounding, audit row.

The session edge around the pure lab.grading.run_turns: it records the two events right after
the utterance and stores the audit row off the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from channels.db import database_sync_to_async
from django.utils import timezone

from lab.agent.dialogue import Say
from lab.audit.schema import AuditChannel, AuditEntry
from lab.audit.services import audit_record
from lab.events.models import Run
from lab.events.types import (
    AgentUtterance,
    Channel,
    CitationBlocked,
    Event,
    EventPayload,
    RetrievalDone,
)
from lab.facts.knowledge import build_knowledge_base
from lab.facts.schema import ConstraintList
from lab.grading.grader import DeterministicGrader, Grader
from lab.grading.grounding import require_citation
from lab.grading.run_turns import grade_utterance
from lab.runs.retrieval import tenant_constraints

Record = Callable[[EventPayload], Awaitable[Event]]


class TurnAuditor:
    """Grades each recorded agent utterance against the lab's list; the audit row goes to the
    tenant the run is for (Run.tenant), and a public run stores none."""

    def __init__(
        self,
        *,
        run: Run,
        record: Record,
        events: Callable[[], list[Event]],
        grader: Grader | None = None,
        constraints: ConstraintList | None = None,
        require_citation: bool = False,
    ) -> None:
        self.run = run
        self.record = record
        self.events = events
        self.grader: Grader = grader or DeterministicGrader()
        self.constraints = constraints or tenant_constraints()
        self.knowledge_base = build_knowledge_base(self.constraints).version
        self.require_citation = require_citation

    async def cite_or_block(self, step: Say) -> Say:
        """The step to speak: under require_citation an uncited grounded answer is replaced."""
        if not self.require_citation or step.retrieval_event_id is None:
            return step
        retrieval = self._retrieval(self.events(), step.retrieval_event_id)
        window = retrieval.window() if retrieval else None
        decision = require_citation(step.text, window, required=True)
        if decision.allowed or decision.reason_kind is None or decision.fallback is None:
            return step
        await self.record(
            CitationBlocked(
                retrieval_event_id=step.retrieval_event_id,
                blocked_text=step.text,
                reason_kind=decision.reason_kind,
                reason=decision.reason,
                fallback=decision.fallback,
            )
        )
        # The fallback stands on nothing retrieved, so it carries no retrieval reference.
        return replace(step, text=decision.fallback, retrieval_event_id=None)

    @staticmethod
    def _retrieval(events: list[Event], event_id: str | None) -> RetrievalDone | None:
        found = next((e.payload for e in events if e.id == event_id), None)
        return found if isinstance(found, RetrievalDone) else None

    async def after(self, utterance: Event) -> None:
        """Record the utterance's grade and grounding events, then its audit row (if the run
        belongs to a tenant)."""
        events = self.events()
        started = time.perf_counter()
        graded, grounding = grade_utterance(
            events, utterance, grader=self.grader, constraints=self.constraints
        )
        latency_ms = (time.perf_counter() - started) * 1000
        await self.record(graded)
        await self.record(grounding)
        if not self.run.tenant:
            return
        said = utterance.payload
        assert isinstance(said, AgentUtterance)
        retrieval = self._retrieval(events, said.retrieval_event_id)
        entry = AuditEntry(
            tenant=self.run.tenant,
            agent=self.run.agent,
            call_id=str(self.run.id),
            run_id=self.run.id,
            turn_id=utterance.id,
            channel=AuditChannel.VOICE if self.run.channel == Channel.VOICE else AuditChannel.TYPED,
            utterance=said.text,
            caller_turn=graded.caller_turn,
            grade=graded.grade,
            grounding=grounding.audit,
            retrieval=retrieval.window() if retrieval else None,
            constraint_list_version=self.constraints.version,
            constraint_list_digest=self.constraints.digest(),
            knowledge_base_version=self.knowledge_base,
            grade_latency_ms=latency_ms,
            spoken_at=utterance.at,
            graded_at=timezone.now(),
        )
        await database_sync_to_async(audit_record)(entry=entry, run=self.run)
