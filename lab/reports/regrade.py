"""The re-grade check: every agent turn graded anew from the events and the embedded list.

Pure: no Django, no I/O, no clock. The grades the log states are compared, never used, as the
re-evaluation check does for the verdict; the grading is lab.grading.run_turns, as in live runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.events.types import (
    AgentUtterance,
    Event,
    RunEnded,
    TurnGraded,
    TurnGradeRecovered,
    TurnGrounding,
)
from lab.facts.schema import ConstraintList
from lab.grading.grader import DETERMINISTIC_GRADER, DETERMINISTIC_VERSION, DeterministicGrader
from lab.grading.run_turns import grade_utterance
from lab.reports.differences import tree_differences
from lab.reports.findings import Finding
from lab.reports.results import Check, CheckResult, Regrade, TurnRegrade, capped, short
from lab.reports.schema import Report

_ABSENT = "(absent)"


def _stated(events: list[Event]) -> tuple[dict[str, Event], dict[str, Event], list[Finding]]:
    """The log's turn.graded and turn.grounding per utterance id, and what is wrong with them."""
    graded: dict[str, Event] = {}
    grounding: dict[str, Event] = {}
    utterances = {e.id for e in events if isinstance(e.payload, AgentUtterance)}
    findings = []
    for event in events:
        if not isinstance(event.payload, TurnGraded | TurnGrounding):
            continue
        target = event.payload.utterance_event_id
        seen = graded if isinstance(event.payload, TurnGraded) else grounding
        if target not in utterances:
            findings.append(
                Finding("grade_orphan", f"{event.id} ({event.type}) names {target}, no utterance")
            )
        elif target in seen:
            findings.append(
                Finding("grade_duplicate", f"{event.id} is a second {event.type} of {target}")
            )
        else:
            seen[target] = event
    return graded, grounding, findings


def _older_grader(graded: dict[str, Event]) -> dict[str, str]:
    """Turns the log says an earlier version of this lab's grader graded, with that version.

    The lab keeps only its current grader, so such turns are re-graded by it and the change is
    stated, not called a rewrite: grades are a function of (utterance, list, grader version).
    """
    older = {}
    for utterance_id, event in graded.items():
        assert isinstance(event.payload, TurnGraded)
        grade = event.payload.grade
        same_grader = grade.grader == DETERMINISTIC_GRADER
        if (
            same_grader
            and grade.grader_version.isdigit()
            and int(grade.grader_version) < int(DETERMINISTIC_VERSION)
        ):
            older[utterance_id] = grade.grader_version
    return older


def _only_grade_changed(turn: TurnRegrade, older: dict[str, str]) -> bool:
    """A turn an older grader graded whose grounding audit and event ids still match."""
    if turn.utterance_event_id not in older:
        return False
    # A claim this lab finds contradicted, stated as anything else, is never excused by age:
    # the older grader's pass is exactly what the newer one exists to correct.
    hidden = turn.derived_verdict == "unsupported" and turn.stated_verdict != "unsupported"
    graded = f"turns[{turn.utterance_event_id}].graded.grade"
    return not hidden and all(d.path.startswith(graded) for d in turn.differences)


def _facts_findings(report: Report, constraints: ConstraintList) -> list[Finding]:
    """The embedded list must be the one the runtime block says the turns were graded against."""
    facts = report.runtime.facts
    if facts is None:
        return [
            Finding("facts_absent", "the runtime names no constraint list, yet one is embedded")
        ]
    digest = constraints.digest()
    findings = []
    if facts.constraint_list_digest != digest:
        findings.append(
            Finding(
                "constraints_digest_mismatch",
                f"the runtime states list digest {short(facts.constraint_list_digest)}, the "
                f"embedded list digests to {short(digest)}",
            )
        )
    if facts.constraint_list_version != constraints.version:
        findings.append(
            Finding(
                "constraints_version_mismatch",
                f"the runtime states list {facts.constraint_list_version}, the embedded list is "
                f"{constraints.version}",
            )
        )
    return findings


def _canonical(
    embedded: ConstraintList, known: Mapping[str, ConstraintList]
) -> tuple[ConstraintList, list[Finding]]:
    """The list to grade by: this lab's own of that version when it has one, as for contracts."""
    canonical = known.get(embedded.version)
    if canonical is None:
        reason = (
            f"this lab has no constraint list {embedded.version}; the turns are re-graded "
            "against the one the file embeds, which nothing here vouches for"
        )
        return embedded, [Finding("constraints_unknown", reason, blocking=False)]
    if canonical.digest() != embedded.digest():
        reason = (
            f"the embedded {embedded.version} (digest {short(embedded.digest())}) is not this "
            f"lab's {embedded.version} (digest {short(canonical.digest())}); the turns are "
            "re-graded against this lab's"
        )
        return canonical, [Finding("constraints_changed", reason)]
    return canonical, []


def _turn(
    events: list[Event],
    utterance: Event,
    stated_graded: Event | None,
    stated_grounding: Event | None,
    constraints: ConstraintList,
    incomplete: bool,
) -> TurnRegrade:
    assert isinstance(utterance.payload, AgentUtterance)
    graded, grounding = grade_utterance(
        events, utterance, grader=DeterministicGrader(), constraints=constraints
    )
    where = f"turns[{utterance.id}]"
    differences = (
        *tree_differences(
            f"{where}.graded",
            stated_graded.payload.model_dump(mode="json") if stated_graded else _ABSENT,
            graded.model_dump(mode="json"),
        ),
        *tree_differences(
            f"{where}.grounding",
            stated_grounding.payload.model_dump(mode="json") if stated_grounding else _ABSENT,
            grounding.model_dump(mode="json"),
        ),
    )
    stated_grade = stated_graded.payload if stated_graded else None
    stated_check = stated_grounding.payload if stated_grounding else None
    assert stated_grade is None or isinstance(stated_grade, TurnGraded)
    assert stated_check is None or isinstance(stated_check, TurnGrounding)
    stated_verdict = stated_grade.grade.verdict if stated_grade else None
    stated_audit = stated_check.audit.verdict if stated_check else None
    return TurnRegrade(
        utterance_event_id=utterance.id,
        text=utterance.payload.text,
        stated_verdict=None if stated_verdict is None else str(stated_verdict),
        derived_verdict=str(graded.grade.verdict),
        stated_grounding=None if stated_audit is None else str(stated_audit),
        derived_grounding=str(grounding.audit.verdict),
        differences=differences,
        incomplete=incomplete,
    )


def _cut_short(
    events: list[Event], graded: dict[str, Event], grounding: dict[str, Event]
) -> set[str]:
    """Utterances whose grade a stopped run never recorded: ungraded, after every graded one,
    in a log that never ends (no run.ended: the lab stopped and nothing reopened the run).

    The live pipeline records each grade before the agent says anything more, so only the
    last utterances can lack one for that reason; anywhere else a missing grade is a change.
    """
    if any(isinstance(e.payload, RunEnded) for e in events):
        return set()
    utterances = [e.id for e in events if isinstance(e.payload, AgentUtterance)]
    short: list[str] = []
    for utterance in reversed(utterances):
        if utterance in graded and utterance in grounding:
            break
        short.append(utterance)
        if utterance in graded or utterance in grounding:
            break  # stopped between the grade and the grounding: nothing earlier is short
    return set(short)


def _recovered(events: list[Event]) -> list[Finding]:
    """The grades a reopened run recorded late, named as such (they are compared all the same)."""
    return [
        Finding(
            "grade_recovered",
            f"{e.payload.utterance_event_id}: {', '.join(e.payload.missing)} recorded late, on "
            f"reopening the run after the lab stopped ({e.id})",
            blocking=False,
        )
        for e in events
        if isinstance(e.payload, TurnGradeRecovered)
    ]


def check_regrade(
    report: Report, known: Mapping[str, ConstraintList]
) -> tuple[CheckResult, Regrade | None]:
    """Each agent utterance graded again, beside the stated grades.

    known is this lab's constraint lists by version: an embedded list of a known version must be
    this lab's, so that a forger cannot embed a list that makes a false claim true.
    """
    events = report.events
    graded, grounding, findings = _stated(events)
    embedded = report.constraints
    if embedded is None:
        if graded or grounding:
            findings.append(
                Finding(
                    "constraints_absent",
                    f"the log states {len(graded)} grade(s) but the report embeds no constraint "
                    "list to check them against",
                )
            )
            return CheckResult(Check.REGRADE, "cannot re-grade", capped(findings)), None
        summary = "no graded turns and no constraint list: nothing to re-grade"
        return CheckResult(Check.REGRADE, summary, capped(findings)), None
    findings += _facts_findings(report, embedded)
    constraints, notes = _canonical(embedded, known)
    findings += notes
    short = _cut_short(events, graded, grounding)
    findings += _recovered(events)
    turns = tuple(
        _turn(events, e, graded.get(e.id), grounding.get(e.id), constraints, e.id in short)
        for e in events
        if isinstance(e.payload, AgentUtterance)
    )
    older = _older_grader(graded)
    for turn in turns:
        if turn.incomplete:
            findings.append(
                Finding(
                    "grade_incomplete",
                    f"{turn.utterance_event_id}: the log ends before this utterance's grade "
                    f"(derived {turn.derived_verdict}/{turn.derived_grounding}); the run "
                    "stopped abnormally and was not reopened, so the report is incomplete",
                    blocking=False,
                )
            )
        elif not turn.matches and _only_grade_changed(turn, older):
            first = turn.differences[0]
            findings.append(
                Finding(
                    "grader_changed",
                    f"{turn.utterance_event_id}: graded {turn.stated_verdict} by "
                    f"{DETERMINISTIC_GRADER} v{older[turn.utterance_event_id]}, "
                    f"{turn.derived_verdict} by this lab's v{DETERMINISTIC_VERSION} "
                    f"(first at {first.path}); the grade shown is this lab's",
                    blocking=False,
                )
            )
        elif not turn.matches:
            stated = turn.stated_verdict or "no grade"
            first = turn.differences[0]
            findings.append(
                Finding(
                    "grade_differs",
                    f"{turn.utterance_event_id}: the log states {stated}/"
                    f"{turn.stated_grounding or 'no audit'}, re-graded "
                    f"{turn.derived_verdict}/{turn.derived_grounding} (first at {first.path})",
                )
            )
    regrade = Regrade(constraint_list_version=constraints.version, turns=turns)
    source = "embedded" if constraints is embedded and notes else "lab's"
    basis = f"{len(turns)} turn(s) re-graded against the {source} {constraints.version}"
    summary = (
        f"{basis}; {regrade.mismatched} differ from the log's grades"
        if regrade.mismatched
        else f"{basis}; every grade and grounding verdict matches the log"
    )
    if short:
        summary += f"; incomplete: {len(short)} ungraded when the run stopped"
    return CheckResult(Check.REGRADE, summary, capped(findings)), regrade
