"""Import re-grades every agent turn from the events and the list, beside the log's grades."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from lab.events.chain import GENESIS_HASH, chain_event
from lab.events.types import Event
from lab.grading.grader import DETERMINISTIC_VERSION
from lab.grading.schema import Verdict
from lab.reports.export import report_assemble, report_bytes
from lab.reports.keys import lab_private_key
from lab.reports.runtime import facts_used
from lab.reports.schema import Runtime, SpeechModel, VadSettings
from lab.reports.services import report_verify
from lab.reports.verification import Check, Status, Verification
from lab.runs.retrieval import tenant_constraints
from lab.scenarios.catalog import contract_get
from tests.reports.graded_call import TRUE_ANSWER, WRONG_ANSWER, graded_call
from tests.reports.tampering import resealed

pytestmark = pytest.mark.django_db


def _report(answer: str) -> bytes:
    return _report_of(graded_call(answer))


def _report_of(events: list[Event]) -> bytes:
    """A report of these events, sealed with this lab's key."""
    started = events[0].payload
    runtime = Runtime(
        lab_version="test",
        git_commit="0" * 40,
        python="CPython 3",
        os="test",
        asr=SpeechModel(name="asr", files_sha256="0" * 64),
        tts=SpeechModel(name="tts", files_sha256="0" * 64),
        vad=VadSettings(aggressiveness=2, end_silence_ms=500),
        gate_version=started.gate_version,
        agent_version=started.agent_version,
        evaluator_version=started.evaluator_version,
        channel=started.channel,
        mode=started.mode,
        facts=facts_used(tenant_constraints()),
    )
    report = report_assemble(
        run_id=started.run_id,
        generated_at=events[0].at,
        runtime=runtime,
        contract=contract_get("free"),
        events=events,
        key=lab_private_key(),
        constraints=tenant_constraints(),
    )
    return report_bytes(report)


def _rechained(document: dict[str, Any], events: list[Event]) -> None:
    chained: list[Event] = []
    for event in events:
        prev = chained[-1].hash if chained else GENESIS_HASH
        chained.append(
            chain_event(seq=event.seq, at=event.at, payload=event.payload, prev_hash=prev)
        )
    document["events"] = [e.model_dump(mode="json") for e in chained]


def _graded_supported(raw: bytes) -> bytes:
    """The forger's edit: the unsupported grade rewritten to supported, re-chained, re-signed."""
    document = json.loads(raw)
    events = [Event.model_validate(e) for e in document["events"]]
    graded = next(e for e in events if e.type == "turn.graded")
    assert graded.payload.grade.verdict == "unsupported"
    forged = graded.payload.model_copy(
        update={"grade": graded.payload.grade.model_copy(update={"verdict": Verdict.SUPPORTED})}
    )
    events[events.index(graded)] = graded.model_copy(update={"payload": forged})
    _rechained(document, events)
    return resealed(document, lab_private_key())


def _regrade(verification: Verification):
    return verification.check(Check.REGRADE)


@pytest.mark.parametrize("answer", [TRUE_ANSWER, WRONG_ANSWER])
def test_a_genuine_report_regrades_identically(answer):
    verification = report_verify(_report(answer))
    assert verification.consistent, verification.problems()
    assert _regrade(verification).status is Status.OK
    (turn,) = verification.regrade.turns
    expected = "supported" if answer == TRUE_ANSWER else "unsupported"
    assert (turn.stated_verdict, turn.derived_verdict, turn.matches) == (expected, expected, True)
    assert verification.report.runtime.facts.constraint_list_version == "demo_v1"
    assert verification.report.constraints == tenant_constraints()


def test_a_grade_rewritten_to_supported_is_a_mismatch_and_inconsistent():
    verification = report_verify(_graded_supported(_report(WRONG_ANSWER)))
    assert verification.check(Check.INTEGRITY).status is Status.OK  # the forger re-chained
    assert verification.origin_proven
    assert not verification.consistent
    result = _regrade(verification)
    assert result.status is Status.FAILED
    assert [f.kind for f in result.findings] == ["grade_differs"]
    (turn,) = verification.regrade.turns
    assert (turn.stated_verdict, turn.derived_verdict) == ("supported", "unsupported")
    assert "INCONSISTENT (re-grade:" in verification.summary("r.json")


def _graded_by_v1(raw: bytes, verdict: Verdict | None = None) -> bytes:
    """The report as grader v1 left it: its grade names version 1 (and v1's verdict)."""
    document = json.loads(raw)
    events = [Event.model_validate(e) for e in document["events"]]
    graded = next(e for e in events if e.type == "turn.graded")
    update: dict[str, Any] = {"grader_version": "1"}
    if verdict is not None:
        update["verdict"] = verdict
    old = graded.payload.model_copy(
        update={"grade": graded.payload.grade.model_copy(update=update)}
    )
    events[events.index(graded)] = graded.model_copy(update={"payload": old})
    _rechained(document, events)
    return resealed(document, lab_private_key())


def test_a_report_graded_by_the_older_grader_is_regraded_and_the_change_stated():
    verification = report_verify(_graded_by_v1(_report(TRUE_ANSWER), Verdict.LLM_FLAGGED))
    assert verification.consistent, verification.problems()
    result = _regrade(verification)
    assert [(f.kind, f.blocking) for f in result.findings] == [("grader_changed", False)]
    current = f"v{DETERMINISTIC_VERSION}"
    assert "v1" in result.findings[0].reason and current in result.findings[0].reason
    (turn,) = verification.regrade.turns
    assert (turn.stated_verdict, turn.derived_verdict) == ("llm_flagged", "supported")


def test_an_older_graders_pass_of_a_contradicted_claim_is_still_inconsistent():
    verification = report_verify(_graded_by_v1(_report(WRONG_ANSWER), Verdict.SUPPORTED))
    assert not verification.consistent
    assert [f.kind for f in _regrade(verification).findings] == ["grade_differs"]


def test_an_embedded_list_that_makes_the_lie_true_is_not_this_labs_list():
    document = json.loads(_graded_supported(_report(WRONG_ANSWER)))
    for service in document["constraints"]["services"]:
        if service["id"] == "px_bike_fit":
            service["price_cents"] = 9000
    forged_list = tenant_constraints().model_validate(document["constraints"])
    document["runtime"]["facts"]["constraint_list_digest"] = forged_list.digest()
    result = _regrade(report_verify(resealed(document, lab_private_key())))
    assert "constraints_changed" in [f.kind for f in result.findings if f.blocking]


def test_grades_without_an_embedded_list_cannot_pass():
    document = json.loads(_report(TRUE_ANSWER))
    document["constraints"] = None
    verification = report_verify(resealed(document, lab_private_key()))
    assert [f.kind for f in _regrade(verification).findings] == ["constraints_absent"]
    assert not verification.consistent


def test_the_import_page_shows_stated_beside_derived_grades(client):
    genuine = client.post(
        "/reports/", {"report": SimpleUploadedFile("g.json", _report(WRONG_ANSWER))}
    ).content.decode()
    assert 'id="regrade" data-mismatched="0"' in genuine
    assert 'data-check="re-grade" data-status="ok"' in genuine
    page = client.post(
        "/reports/",
        {"report": SimpleUploadedFile("t.json", _graded_supported(_report(WRONG_ANSWER)))},
    ).content.decode()
    assert 'data-consistent="false"' in page
    assert 'id="regrade" data-mismatched="1"' in page
    assert 'data-matches="false"' in page and "MISMATCH" in page
    assert '<span class="badge grade supported">supported</span>' in page  # stated
    assert '<span class="badge grade unsupported">unsupported</span>' in page  # derived


def _verifyreport(path) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("verifyreport", str(path), stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_verifyreport_prints_the_regrade_line(tmp_path):
    genuine = tmp_path / "genuine.json"
    genuine.write_bytes(_report(WRONG_ANSWER))
    status, out = _verifyreport(genuine)
    assert status == 0
    assert "  6. re-grade: ok - 1 turn(s) re-graded against the lab's demo_v1" in out
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(_graded_supported(_report(WRONG_ANSWER)))
    status, out = _verifyreport(tampered)
    assert status == 1
    assert "  6. re-grade: failed - 1 turn(s) re-graded against the lab's demo_v1; 1 differ" in out
    assert "supported/ok                    unsupported/ok" in out
    assert f"{tampered}: INCONSISTENT (re-grade:" in out


def test_the_regrade_core_imports_nothing_from_django():
    script = (
        "import sys, lab.reports.regrade, lab.reports.differences; print('django' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
