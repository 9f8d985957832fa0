"""Grading a run's agent utterances from the run's own events: live, and again on import.

Pure: no Django, no I/O, no clock. What a turn is checked against comes only from the log
(the caller turn before it, its retrieval, the slots and amounts the tools returned) and the
constraint list, so a report's events re-grade to the same verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Event,
    LookupSucceeded,
    ProposalMade,
    RetrievalDone,
    TurnGraded,
    TurnGrounding,
)
from lab.facts.days import WEEKDAYS
from lab.facts.schema import ConstraintList
from lab.grading.grader import Grader
from lab.grading.grounding import audit
from lab.grading.schema import GradeRequest, Observed, Slot


def observed(events: Sequence[Event]) -> Observed:
    """The slots and amounts this call's tools returned or its proposals offered."""
    slots: list[Slot] = []
    amounts: list[int] = []
    empty = False
    for event in events:
        match event.payload:
            case LookupSucceeded(options=options):
                empty = empty or not options
                for option in options:
                    day, time = option.get("day"), option.get("time")
                    if day in WEEKDAYS and isinstance(time, str):
                        slots.append(Slot.model_validate({"day": day, "time": time}))
                    if isinstance(option.get("max_amount_cents"), int):
                        amounts.append(int(option["max_amount_cents"]))
            case ProposalMade(args=args) if isinstance(args.get("amount_cents"), int):
                amounts.append(int(args["amount_cents"]))
    return Observed(slots=tuple(slots), amounts_cents=tuple(amounts), empty_lookup=empty)


def grade_utterance(
    events: Sequence[Event],
    utterance: Event,
    *,
    grader: Grader,
    constraints: ConstraintList,
) -> tuple[TurnGraded, TurnGrounding]:
    """The grade and grounding audit of one agent.utterance, read against the events before it."""
    said = utterance.payload
    if not isinstance(said, AgentUtterance):
        raise ValueError(f"{utterance.id} is a {utterance.type}, not an agent.utterance")
    before = [event for event in events if event.seq < utterance.seq]
    caller_turn = next(
        (e.payload.text for e in reversed(before) if isinstance(e.payload, CallerUtterance)),
        None,
    )
    retrieval = next(
        (
            e.payload
            for e in before
            if e.id == said.retrieval_event_id and isinstance(e.payload, RetrievalDone)
        ),
        None,
    )
    window = retrieval.window() if retrieval else None
    request = GradeRequest(
        utterance=said.text, caller_turn=caller_turn, retrieval=window, observed=observed(before)
    )
    grade = grader.grade(request, constraints)
    retrieval_id = said.retrieval_event_id
    return (
        TurnGraded(
            utterance_event_id=utterance.id,
            retrieval_event_id=retrieval_id,
            caller_turn=caller_turn,
            grade=grade,
        ),
        TurnGrounding(
            utterance_event_id=utterance.id,
            retrieval_event_id=retrieval_id,
            audit=audit(said.text, window),
        ),
    )
