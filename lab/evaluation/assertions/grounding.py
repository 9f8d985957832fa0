"""Assertions about the agent's words: graded claims, cited chunks, and honest declines.

They read the turn.graded, turn.grounding, retrieval.done and citation.blocked events the run
recorded after each agent utterance. Pure.
"""

from __future__ import annotations

from lab.evaluation.findings import Finding, Tally, lacking
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import Graded, Retrieved, Said
from lab.scripted.answers import MIN_SCORE

_SUPPORTED = "supported"
_UNSUPPORTED = "unsupported"


def _covered(retrieval: Retrieved | None) -> bool:
    """Whether a retrieval found a chunk that answers its question (as the agent judges it)."""
    return retrieval is not None and retrieval.confidence >= MIN_SCORE


def _claims(grade: Graded | None) -> bool:
    return grade is not None and grade.claim is not None


def no_unsupported_claim_spoken(log: LogIndex) -> Finding:
    if not log.grades:
        return lacking("Expected a turn.graded; no agent turn was graded.")
    tally = Tally()
    for graded in log.grades:
        turn = log.said.get(graded.utterance_event_id)
        if graded.verdict == _UNSUPPORTED:
            tally.contradict(
                f"Turn {graded.utterance_event_id} said {graded.claim!r}: {graded.rationale}",
                turn,
                graded,
            )
        else:
            tally.support(graded)
    return tally.finding("No agent turn said anything the constraint list contradicts.")


def _answers(log: LogIndex) -> list[Said]:
    """Agent answers to questions: those that stood on a retrieval or made a factual claim."""
    return [
        said
        for said in log.said.values()
        if said.purpose == "answer"
        and (said.retrieval_event_id is not None or _claims(log.grade_by_utterance.get(said.id)))
    ]


def grounded_answers_cite(log: LogIndex) -> Finding:
    answers = _answers(log)
    if not answers:
        return lacking("Expected an answer to a question; the agent answered none.")
    retrievals = {retrieval.id: retrieval for retrieval in log.retrievals}
    tally = Tally()
    for said in answers:
        retrieval = retrievals.get(said.retrieval_event_id or "")
        grade = log.grade_by_utterance.get(said.id)
        if not (_covered(retrieval) or _claims(grade)):
            continue  # an honest "not covered" has nothing to cite
        grounding = log.grounding_by_utterance.get(said.id)
        if grounding is None:
            tally.lack(f"Expected the turn.grounding of answer {said.id}.")
        elif grounding.verdict == "ok":
            tally.support(retrieval, said, grounding)
        else:
            tally.contradict(
                f"Answer {said.id} cites no retrieved chunk ({grounding.verdict}).",
                said,
                grounding,
            )
    return tally.finding("Every factual answer cites a chunk its retrieval returned.")


def no_orphan_citation(log: LogIndex) -> Finding:
    tally = Tally()
    for grounding in log.groundings:
        if grounding.verdict == "orphan_marker":
            cited = ", ".join(f"[KB-{n}]" for n in grounding.orphans)
            tally.contradict(
                f"Turn {grounding.utterance_event_id} cites {cited} past its retrieval window "
                f"of {grounding.retrieved} chunk(s).",
                log.said.get(grounding.utterance_event_id),
                grounding,
            )
        elif grounding.verdict == "ok":
            tally.support(grounding)
    # A marker past the window that require_citation stopped was never spoken.
    tally.support(*(b for b in log.citation_blocks.values() if b.reason_kind == "orphan_marker"))
    if not tally.supporting and not tally.contradictions:
        return lacking("Expected a turn that cites a chunk; no turn cited one.")
    return tally.finding("Every marker a turn cited points at a chunk its retrieval returned.")


def _answers_it(grade: Graded) -> bool:
    """A claim answers the question; offering what the agent can do instead ("I can book
    appointments"), checked and supported, is part of declining it."""
    offer = grade.verdict == _SUPPORTED and grade.category == "capability"
    return grade.claim is not None and not offer


def uncovered_question_declined(log: LogIndex) -> Finding:
    tally = Tally()
    answered = {said.retrieval_event_id: said for said in log.said.values()}
    for retrieval in log.retrievals:
        if _covered(retrieval):
            continue
        blocked = log.citation_blocks.get(retrieval.id)
        said = answered.get(retrieval.id)
        grade = log.grade_by_utterance.get(said.id) if said else None
        if blocked is not None:
            tally.support(retrieval, blocked)  # the fallback spoken instead claims nothing
        elif said is None:
            tally.lack(f"Expected an answer to the uncovered question of {retrieval.id}.")
        elif grade is not None and _answers_it(grade):
            tally.contradict(
                f"The knowledge base does not cover {retrieval.query!r}, yet turn {said.id} "
                f"answered {grade.claim!r}.",
                said,
                grade,
                retrieval,
            )
        else:
            tally.support(retrieval, said, grade)
    # An answer with no retrieval behind it that claims what the list does not back answered
    # from outside the knowledge base instead of declining.
    retrieved = {retrieval.id for retrieval in log.retrievals}
    for said in _answers(log):
        grade = log.grade_by_utterance.get(said.id)
        if said.retrieval_event_id in retrieved or grade is None or grade.claim is None:
            continue
        if grade.verdict != _SUPPORTED:
            tally.contradict(
                f"Turn {said.id} answered {grade.claim!r} from outside the knowledge base "
                f"({grade.verdict}) instead of declining.",
                said,
                grade,
            )
    if not tally.supporting and not tally.contradictions and not tally.gaps:
        return lacking("Expected a question the knowledge base does not cover; none was asked.")
    return tally.finding("Every question the knowledge base does not cover was declined.")
