"""Every agent utterance of a live run graded and audited: turn.graded, turn.grounding, audit row.

The session edge around the pure lab.grading.run_turns: it records the two events right after
the utterance and stores the audit row off the event loop. A run reopened after a crash gets the
grades and rows the stopped process never recorded (`grades_recover`), each marked as recovered.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Literal

from channels.db import database_sync_to_async
from django.utils import timezone

from lab.audit.models import AuditRecord
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
    TurnGraded,
    TurnGradeRecovered,
    TurnGrounding,
)
from lab.facts.knowledge import build_knowledge_base
from lab.facts.schema import ConstraintList
from lab.grading.grader import DeterministicGrader, Grader
from lab.grading.grounding import require_citation
from lab.grading.run_turns import grade_utterance
from lab.runs.retrieval import tenant_constraints
from lab.scripted.steps import Say

Record = Callable[[EventPayload], Awaitable[Event]]
GradeKind = Literal["turn.graded", "turn.grounding"]
RECOVERY_REASON = (
    "the lab stopped after this utterance was recorded and before its grade was; graded on "
    "reopening the run, from the events before it, as it would have been then"
)


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
        await self._store(events, utterance, graded, grounding, latency_ms)

    async def recover(self, utterances: list[Event], stored: set[str]) -> int:
        """Grade the utterances a stopped process left ungraded, each recorded as recovered,
        and store the audit rows it left unwritten (turn ids in stored have theirs)."""
        events = self.events()
        stated = _stated_grades(events)
        recovered = 0
        for utterance in utterances:
            graded, grounding = stated.get(utterance.id, (None, None))
            latency_ms = 0.0  # unknown for a grade the log already holds
            if graded is None or grounding is None:
                started = time.perf_counter()
                fresh = grade_utterance(
                    events, utterance, grader=self.grader, constraints=self.constraints
                )
                latency_ms = (time.perf_counter() - started) * 1000
                missing: tuple[GradeKind, ...] = (
                    *(("turn.graded",) if graded is None else ()),
                    *(("turn.grounding",) if grounding is None else ()),
                )
                await self.record(
                    TurnGradeRecovered(
                        utterance_event_id=utterance.id, missing=missing, reason=RECOVERY_REASON
                    )
                )
                if graded is None:
                    graded = fresh[0]
                    await self.record(graded)
                if grounding is None:
                    grounding = fresh[1]
                    await self.record(grounding)
                recovered += 1
            if utterance.id not in stored:
                await self._store(events, utterance, graded, grounding, latency_ms)
        return recovered

    async def _store(
        self,
        events: list[Event],
        utterance: Event,
        graded: TurnGraded,
        grounding: TurnGrounding,
        latency_ms: float,
    ) -> None:
        if not self.run.tenant:
            return  # a public run writes into no tenant
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


def _stated_grades(
    events: list[Event],
) -> dict[str, tuple[TurnGraded | None, TurnGrounding | None]]:
    """Each utterance's recorded grade and grounding events, by utterance id."""
    stated: dict[str, tuple[TurnGraded | None, TurnGrounding | None]] = {}
    for event in events:
        match event.payload:
            case TurnGraded(utterance_event_id=target) as graded:
                stated[target] = (graded, stated.get(target, (None, None))[1])
            case TurnGrounding(utterance_event_id=target) as grounding:
                stated[target] = (stated.get(target, (None, None))[0], grounding)
    return stated


def _audited_turns(run: Run) -> set[str]:
    return set(AuditRecord.objects.filter(run=run).values_list("turn_id", flat=True))


async def grades_recover(run: Run, events: list[Event], record: Record) -> int:
    """On reopening a run (or in the start-up sweep): grade what a crash left ungraded and store
    the audit rows it left unwritten; returns how many utterances were graded late."""
    utterances = [e for e in events if isinstance(e.payload, AgentUtterance)]
    if not utterances:
        return 0
    stated = _stated_grades(events)
    stored = await database_sync_to_async(_audited_turns)(run)
    pending = [
        e for e in utterances if e.id not in stored or None in stated.get(e.id, (None, None))
    ]
    if not pending:
        return 0
    auditor = TurnAuditor(run=run, record=record, events=lambda: events)
    return await auditor.recover(pending, stored)
