from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lab.facts.loader import load_tenant
from lab.grading.grader import DETERMINISTIC_GRADER, DeterministicGrader, Grader
from lab.grading.schema import Category, GradeRequest, Observed, Severity, Slot, TurnGrade, Verdict

FACTS = load_tenant("demo")
GRADER: Grader = DeterministicGrader()
ROOT = Path(__file__).resolve().parents[2]


def grade(text: str, caller: str | None = None, observed: Observed | None = None) -> TurnGrade:
    request = GradeRequest(utterance=text, caller_turn=caller, observed=observed or Observed())
    return GRADER.grade(request, FACTS)


def test_a_grade_has_the_seed_shape_and_names_what_it_was_checked_against():
    result = grade(
        "A tune-up runs about $129, and we offer a full 30-day money-back guarantee.",
        caller="How much for a tune-up and can I get a refund if I change my mind?",
    )
    assert result.verdict is Verdict.UNSUPPORTED and result.severity is Severity.CRITICAL
    assert result.category is Category.PRICE
    assert result.constraint_ref == ("px_basic_tune", "policies.refund")
    assert "$129.00" in (result.claim or "") and "30-day" in (result.claim or "")
    assert result.rationale.endswith(".") and ". " not in result.rationale  # one sentence
    assert 0 <= result.confidence <= 1
    assert (result.grader, result.grader_version) == (DETERMINISTIC_GRADER, "3")
    assert result.constraint_list_version == "demo_v1"
    # Price, guarantee and window are wrong; money back to the card is right.
    verdicts = [(finding.claim, finding.verdict) for finding in result.claims]
    assert [claim for claim, v in verdicts if v is Verdict.UNSUPPORTED] == [
        "basic tune-up price $129.00",
        "money-back guarantee",
        "30-day",
    ]
    assert TurnGrade.model_validate_json(result.model_dump_json()) == result


def test_filler_is_supported_with_no_claim_or_category():
    result = grade("Let me check that for you. One moment.")
    assert (result.verdict, result.claim, result.category) == (Verdict.SUPPORTED, None, None)
    assert result.severity is Severity.INFO and result.claims == ()


def test_a_wrong_slot_only_warns_while_a_flag_always_warns():
    closed_day = grade("I can book you in on Sunday at 10.")
    assert (closed_day.verdict, closed_day.severity) == (Verdict.UNSUPPORTED, Severity.WARN)
    assert grade("A tune-up takes 45 minutes.").severity is Severity.WARN


def test_markers_are_not_read_as_numbers_and_identifiers_are_not_claims():
    result = grade(
        "Done: Thursday at 2:00 PM [KB-7]. Your reference is rc-4512-9.",
        observed=Observed(slots=(Slot(day="thursday", time="14:00"),)),
    )
    assert result.verdict is Verdict.SUPPORTED
    assert [finding.category for finding in result.claims] == [Category.AVAILABILITY]


def test_a_slot_nothing_in_the_call_established_is_flagged_not_passed():
    assert grade("I have Tuesday at 9:30 AM. Shall I book it?").verdict is Verdict.LLM_FLAGGED
    observed = Observed(slots=(Slot(day="tuesday", time="09:30"),))
    booked = grade("I have Tuesday at 9:30 AM. Shall I book it?", observed=observed)
    assert booked.verdict is Verdict.SUPPORTED and "observed.slots" in booked.constraint_ref


def test_the_worst_claim_decides_and_every_claim_is_kept():
    result = grade("A flat repair is $25. Wheel truing is $35 and takes about 20 minutes.")
    assert result.verdict is Verdict.LLM_FLAGGED
    assert [f.verdict for f in result.claims] == [
        Verdict.SUPPORTED,
        Verdict.SUPPORTED,
        Verdict.LLM_FLAGGED,
    ]


def test_the_pure_cores_import_nothing_from_django():
    modules = [
        "lab.facts.schema",
        "lab.facts.seed",
        "lab.facts.knowledge",
        "lab.facts.loader",
        "lab.retrieval.bm25",
        "lab.retrieval.window",
        "lab.grading.grader",
        "lab.grading.grounding",
    ]
    script = f"import sys; import {', '.join(modules)}; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_a_receipt_code_is_an_identifier_not_a_number_to_check():
    booked = Observed(slots=(Slot(day="tuesday", time="09:30"),))
    for code in ("R-7CD40D35", "R-12AB34CD", "AB12345"):
        result = grade(f"Done: Tuesday at 9:30 AM. Your reference is {code}.", observed=booked)
        assert result.verdict is Verdict.SUPPORTED, (code, result.rationale)
    # A real price beside a code is still read and checked.
    wrong = grade("Your reference is R-7CD40D35, and the basic tune-up is $99.")
    assert wrong.verdict is Verdict.UNSUPPORTED
