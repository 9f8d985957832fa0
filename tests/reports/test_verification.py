from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lab.evaluation.verdicts import Verdict
from lab.events.chain import EventChain
from lab.events.types import Event, Mode, RunStarted
from lab.reports.export import report_assemble, report_bytes
from lab.reports.keys import lab_private_key, lab_public_key
from lab.reports.schema import Report
from lab.reports.verification import (
    Check,
    ContractStatus,
    Origin,
    Status,
    Verification,
    verify_report,
)
from lab.runs.retrieval import tenant_constraints
from lab.scenarios.catalog import all_contracts, contract_get
from tests.reports.tampering import BATTERY, Tamper, encoded, resealed

pytestmark = pytest.mark.django_db

SCENARIOS = sorted(all_contracts())


def verify(raw: bytes, **keys) -> Verification:
    lists = {"demo_v1": tenant_constraints()}
    return verify_report(
        raw, contracts=all_contracts(), lab_key=lab_public_key(), constraint_lists=lists, **keys
    )


def reasons(verification: Verification, check: Check, kind: str) -> list[str]:
    return [f.reason for f in verification.check(check).findings if f.kind == kind]


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_a_guarded_run_report_verifies_as_consistent_and_pass(real_reports, scenario_id):
    verification = verify(real_reports[(scenario_id, Mode.GUARDED)].raw)
    assert verification.consistent, verification.problems()
    assert verification.verdict is Verdict.PASS
    assert verification.origin is Origin.VALID_LAB
    assert verification.contract_status is ContractStatus.IDENTICAL
    assert [c.status for c in verification.checks] == [Status.OK] * 6
    assert verification.summary("r.json") == "r.json: consistent, signed by this lab, verdict PASS"


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_an_unguarded_run_report_verifies_as_consistent_and_fail(real_reports, scenario_id):
    verification = verify(real_reports[(scenario_id, Mode.UNGUARDED)].raw)
    assert verification.consistent, verification.problems()
    assert verification.verdict is Verdict.FAIL
    assert verification.summary("r.json") == "r.json: consistent, signed by this lab, verdict FAIL"


@pytest.mark.parametrize("tamper", BATTERY, ids=str)
def test_each_tampering_is_detected_with_its_own_finding(guarded, tamper: Tamper):
    document = guarded.document()
    says = tamper.edit(document)
    verification = verify(encoded(document))
    assert not verification.consistent
    assert verification.check(tamper.check).status is Status.FAILED
    assert any(says in reason for reason in reasons(verification, tamper.check, tamper.kind)), (
        verification.check(tamper.check).findings
    )
    assert "INCONSISTENT" in verification.summary("r.json")


def test_a_naive_edit_outside_the_events_breaks_the_body_digest_and_the_signature(guarded):
    document = guarded.document()
    document["runtime"]["os"] = "a machine that never ran it"
    verification = verify(encoded(document))
    assert reasons(verification, Check.INTEGRITY, "body_digest")
    assert verification.origin is Origin.INVALID
    assert reasons(verification, Check.ORIGIN, "signature_invalid")


def test_the_verdict_shown_is_derived_even_when_a_forger_reseals_a_changed_verdict(guarded):
    document = guarded.document()
    document["evaluation"]["verdict"] = "FAIL"
    verification = verify(resealed(document, Ed25519PrivateKey.generate()))
    assert verification.check(Check.INTEGRITY).status is Status.OK
    assert verification.origin is Origin.UNKNOWN_KEY
    assert verification.verdict is Verdict.PASS
    [difference] = [d for d in verification.differences if d.path == "verdict"]
    assert (difference.stated, difference.derived) == ("FAIL", "PASS")
    assert not verification.consistent


def test_a_resealed_contract_edit_is_still_caught_by_the_contract_check(guarded):
    document = guarded.document()
    document["contract"]["assertions"] = document["contract"]["assertions"][:1]
    verification = verify(resealed(document, None))
    assert verification.contract_status is ContractStatus.CHANGED
    assert reasons(verification, Check.CONTRACT, "contract_hash_mismatch")
    assert reasons(verification, Check.CONTRACT, "run_started_mismatch")
    # Re-evaluation judges by the canonical contract: all four assertions, not the one kept.
    assert verification.contract_source == "canonical"
    assert len(verification.derived.assertions) == 4
    assert not verification.consistent


def test_resealed_tool_identities_are_derived_again_from_the_commit_events(guarded):
    document = guarded.document()
    document["tools"]["commits"][0]["receipt"]["receipt_id"] = "R-FORGED"
    verification = verify(resealed(document, None))
    assert any(
        "R-FORGED" in reason for reason in reasons(verification, Check.REEVALUATION, "tools_differ")
    )


def test_a_stripped_signature_leaves_a_consistent_report_whose_origin_is_absent(guarded):
    document = guarded.document()
    del document["signature"]
    verification = verify(encoded(document))
    assert verification.consistent
    assert verification.origin is Origin.ABSENT
    assert verification.check(Check.ORIGIN).status is Status.NOTICE
    assert verification.summary("r.json").startswith(
        "r.json: consistent, origin unproven (unsigned): its events give PASS, but nothing shows"
    )


def test_a_signature_by_another_key_is_proven_only_for_a_reader_who_trusts_that_key(guarded):
    other = Ed25519PrivateKey.generate()
    raw = resealed(guarded.document(), other)
    unknown = verify(raw)
    assert unknown.consistent
    assert unknown.origin is Origin.UNKNOWN_KEY
    assert not unknown.origin_proven
    assert "origin unproven (signed by an unknown key)" in unknown.summary("r.json")
    trusted = verify(
        raw, trusted_keys=[Ed25519PrivateKey.generate().public_key(), other.public_key()]
    )
    assert trusted.origin is Origin.VALID_TRUSTED
    assert trusted.origin_proven
    assert "signed by a key you trust" in trusted.check(Check.ORIGIN).summary
    assert (
        trusted.summary("r.json") == "r.json: consistent, signed by a key you trust, verdict PASS"
    )


def test_a_valid_signature_says_what_it_proves_and_what_it_does_not(guarded):
    summary = verify(guarded.raw).check(Check.ORIGIN).summary
    assert "it proves this lab instance's key signed exactly these bytes" in summary
    assert "it does not prove that the events happened as recorded" in summary
    assert "not fabricated by whoever holds the key" in summary


def test_a_non_canonical_spelling_of_the_named_key_is_refused(guarded):
    document = guarded.document()
    document["signature"]["public_key_pem"] = document["signature"]["public_key_pem"].rstrip()
    verification = verify(encoded(document))
    assert reasons(verification, Check.ORIGIN, "key_not_canonical")
    assert verification.origin is Origin.INVALID


def _relabelled(report: Report, scenario_id: str) -> tuple[Report, list[Event]]:
    """The report's contract under a new id, with a log rechained to name it."""
    contract = report.contract.model_copy(update={"id": scenario_id})
    chain = EventChain()
    for event in report.events:
        payload = event.payload
        if isinstance(payload, RunStarted):
            payload = payload.model_copy(
                update={"scenario_id": scenario_id, "contract_hash": contract.contract_hash}
            )
        chain.append(payload, at=event.at)
    return report.model_copy(update={"contract": contract}), chain.events


def test_a_scenario_this_lab_does_not_know_is_judged_by_the_embedded_contract_and_says_so(guarded):
    report, events = _relabelled(Report.model_validate_json(guarded.raw), "house_rules")
    raw = report_bytes(
        report_assemble(
            run_id=report.run_id,
            generated_at=report.generated_at,
            runtime=report.runtime,
            contract=report.contract,
            events=events,
            key=lab_private_key(),
            constraints=report.constraints,
        )
    )
    verification = verify(raw)
    assert verification.consistent
    assert verification.contract_status is ContractStatus.UNKNOWN_ID
    assert verification.contract_source == "embedded"
    assert verification.check(Check.CONTRACT).status is Status.NOTICE
    assert verification.verdict is Verdict.PASS
    assert "contract unknown to this lab" in verification.summary("r.json")


def test_a_report_of_a_contract_version_this_lab_lacks_is_judged_by_the_embedded_one(guarded):
    report = Report.model_validate_json(guarded.raw)
    older = report.contract.model_copy(update={"version": 7})
    verification = verify_report(
        report_bytes(
            report_assemble(
                run_id=report.run_id,
                generated_at=report.generated_at,
                runtime=report.runtime,
                contract=older,
                events=report.events,
                key=lab_private_key(),
            )
        ),
        contracts={"correction": contract_get("correction")},
        lab_key=lab_public_key(),
    )
    assert verification.contract_status is ContractStatus.UNKNOWN_VERSION
    assert verification.contract_source == "embedded"
    # The run.started of the real run names version 1, so the relabelled file is caught anyway.
    assert reasons(verification, Check.CONTRACT, "run_started_mismatch")


def test_the_report_derives_its_tool_identities_from_the_commit_events(real_reports):
    report = Report.model_validate_json(real_reports[("double_confirmation", Mode.GUARDED)].raw)
    executed, replayed = report.tools.commits
    assert (executed.outcome, replayed.outcome) == ("executed", "replayed")
    assert executed.receipt == replayed.receipt
    assert report.tools.idempotency_keys == [executed.idempotency_key]
    assert report.tools.execution_ids == [executed.receipt.execution_id]
    assert report.tools.adapters == ["calendar-sandbox-1"]
