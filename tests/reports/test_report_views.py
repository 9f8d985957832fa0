from __future__ import annotations

import asyncio
import html
import json
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from lab.events.types import Channel, Mode
from lab.reports.models import ImportedReport
from lab.reports.services import report_verify
from lab.reports.signing import public_key_pem
from lab.reports.structure import MAX_REPORT_BYTES
from lab.reports.verification import Origin
from lab.runs.ownership import OWNER_SESSION_KEY, owner_token_new
from lab.runs.services import run_start
from lab.web.management.headless import play_headless
from tests.reports.tampering import BATTERY, Tamper, encoded, resealed

pytestmark = pytest.mark.django_db


def upload(client, raw: bytes, *, name: str = "report.json", public_key: bytes | None = None):
    files = {"report": SimpleUploadedFile(name, raw, content_type="application/json")}
    if public_key is not None:
        files["public_key"] = SimpleUploadedFile("key.pub", public_key)
    return client.post(reverse("report_create"), files)


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def derived_verdict(response) -> str:
    found = re.search(r'id="derived-verdict"[^>]*data-verdict="(\w+)"', response.content.decode())
    assert found, "the page shows no re-derived verdict"
    return found.group(1)


@pytest.mark.django_db(transaction=True)
def test_the_run_page_offers_the_signed_evidence_report_for_download(client, fast_clock):
    owner = owner_token_new()
    session = client.session
    session[OWNER_SESSION_KEY] = owner
    session.save()
    run = run_start(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, owner_token=owner
    )
    asyncio.run(play_headless(run, owner_token=owner))
    page = client.get(reverse("run_page", args=[run.id]))
    link = reverse("run_report_json", args=[run.id])
    assert f'href="{link}" download' in page.content.decode()
    assert "Download evidence report" in page.content.decode()
    response = client.get(link)
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="run-{run.id}-report.json"'
    verification = report_verify(response.content)
    assert verification.consistent, verification.problems()
    assert verification.report.run_id == str(run.id)
    assert (verification.verdict, verification.origin) == ("PASS", Origin.VALID_LAB)


@pytest.mark.django_db(transaction=True)
def test_runscenarios_out_writes_each_run_as_a_signed_report(tmp_path, capsys, fast_clock):
    call_command("runscenarios", "--scenario", "tool_timeout", "--out", tmp_path)
    assert capsys.readouterr().out == "tool_timeout PASS\n"
    verification = report_verify((tmp_path / "tool_timeout.json").read_bytes())
    assert verification.consistent, verification.problems()
    assert verification.origin is Origin.VALID_LAB
    assert verification.report.contract.id == "tool_timeout"


def test_a_consistent_report_is_imported_stored_and_shown_with_its_rederived_verdict(
    client, guarded
):
    response = upload(client, guarded.raw, name="correction.json")
    assert response.status_code == 200
    page = text_of(response)
    assert "correction.json: consistent, signed by this lab, verdict PASS" in page
    assert derived_verdict(response) == "PASS"
    assert (
        "What a valid signature proves: this lab instance's key signed exactly these bytes" in page
    )
    stored = ImportedReport.objects.get()
    assert (stored.filename, stored.scenario_id) == ("correction.json", "correction")
    assert reverse("report_replay", args=[stored.id]) in page


def test_an_unguarded_report_imports_as_consistent_and_fail(client, real_reports):
    response = upload(client, real_reports[("interruption", Mode.UNGUARDED)].raw, name="u.json")
    assert "u.json: consistent, signed by this lab, verdict FAIL" in text_of(response)
    assert derived_verdict(response) == "FAIL"


@pytest.mark.parametrize("tamper", BATTERY, ids=str)
def test_the_import_page_names_each_tampering(client, guarded, tamper: Tamper):
    document = guarded.document()
    says = tamper.edit(document)
    response = upload(client, encoded(document), name="tampered.json")
    page = text_of(response)
    assert response.status_code == 200
    assert "tampered.json: INCONSISTENT" in page
    assert f'data-kind="{tamper.kind}"' in page
    assert says in page
    assert re.search(rf'data-check="{tamper.check}" data-status="failed"', page)
    assert derived_verdict(response) == "PASS"


def test_the_page_shows_stated_and_derived_values_side_by_side(client, guarded):
    document = guarded.document()
    document["evaluation"]["verdict"] = "FAIL"
    response = upload(client, resealed(document, None))
    row = re.search(
        r"<tr><td><code>verdict</code></td><td>(\w+)</td><td>(\w+)</td></tr>", text_of(response)
    )
    assert row and row.groups() == ("FAIL", "PASS")
    assert derived_verdict(response) == "PASS"


def test_a_key_the_user_supplies_can_vouch_for_a_signature(client, guarded):
    other = Ed25519PrivateKey.generate()
    raw = resealed(guarded.document(), other)
    response = upload(
        client, raw, name="r.json", public_key=public_key_pem(other.public_key()).encode()
    )
    assert "r.json: consistent, signed by a key you trust, verdict PASS" in text_of(response)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"not json at all", "not valid JSON at line 1, column 1"),
        (b'{"schema_version": 1, "events": [', "the JSON ends early"),
        (b"[" * 100 + b"]" * 100, "arrays and objects nest 100 deep"),
        (b'{"schema_version": 9}', "schema_version 9 is unknown; this lab reads version 1"),
        (b'{"schema_version": 1, "run_id": 5}', "run_id: Input should be a valid string"),
        (b"", "the file is empty"),
    ],
)
def test_a_file_that_is_not_a_report_is_refused_clearly_and_not_stored(client, raw, message):
    response = upload(client, raw, name="bad.json")
    assert response.status_code == 400
    page = text_of(response)
    assert "bad.json: REJECTED (structure:" in page
    assert message in page
    assert "Nothing was stored." in page
    assert not ImportedReport.objects.exists()


def test_a_wrongly_typed_field_in_a_real_report_is_refused_with_its_path(client, guarded):
    document = guarded.document()
    index = next(
        i for i, e in enumerate(document["events"]) if e["payload"]["type"] == "intent.revised"
    )
    document["events"][index]["payload"]["revision"] = "1"
    response = upload(client, json.dumps(document).encode())
    assert response.status_code == 400
    path = f"events[{index}].payload.intent.revised.revision: Input should be a valid integer"
    assert path in text_of(response)
    assert not ImportedReport.objects.exists()


def test_a_file_over_ten_megabytes_is_refused_without_being_read(client):
    response = upload(client, b" " * (MAX_REPORT_BYTES + 1), name="huge.json")
    assert response.status_code == 400
    assert f"The report 'huge.json' is {MAX_REPORT_BYTES + 1:,} bytes" in text_of(response)
    assert not ImportedReport.objects.exists()


def test_an_upload_with_no_file_is_refused_with_a_message(client):
    response = client.post(reverse("report_create"), {})
    assert response.status_code == 400
    assert "No file was uploaded: choose a report (.json) to check." in text_of(response)
    assert not ImportedReport.objects.exists()


def test_a_public_key_that_is_not_ed25519_pem_is_refused(client, guarded):
    response = upload(client, guarded.raw, public_key=b"-----BEGIN PUBLIC KEY-----\nnope\n")
    assert response.status_code == 400
    assert "The public key 'key.pub' is not a PEM public key" in text_of(response)
    assert not ImportedReport.objects.exists()


def test_the_stored_report_page_verifies_the_file_again(client, guarded):
    upload(client, guarded.raw, name="again.json")
    stored = ImportedReport.objects.get()
    response = client.get(reverse("report_page", args=[stored.id]))
    assert response.status_code == 200
    assert "again.json: consistent, signed by this lab, verdict PASS" in text_of(response)


def test_the_replay_page_holds_one_step_per_event_with_the_checklist_as_evidence_arrives(
    client, guarded
):
    upload(client, guarded.raw)
    stored = ImportedReport.objects.get()
    response = client.get(reverse("report_replay", args=[stored.id]))
    assert response.status_code == 200
    page = response.content.decode()
    steps = re.findall(r'<template class="replay-step">(.*?)</template>', page, re.S)
    events = guarded.document()["events"]
    assert len(steps) == len(events) + 1
    verdicts = [re.search(r'id="verdict" data-verdict="(\w+)"', step).group(1) for step in steps]
    assert verdicts[0] == "INCONCLUSIVE"
    assert verdicts[-1] == "PASS"
    assert all(f'id="{event["id"]}"' in step for event, step in zip(events, steps[1:], strict=True))
    correction = next(i for i, e in enumerate(events) if "Thursday" in e["payload"].get("text", ""))
    assert "Actually, make that Thursday afternoon." in steps[correction + 1]
    assert 'src="/static/js/replay.js"' in page
    assert 'id="replay-step"' in page


def test_an_unknown_report_id_is_not_found(client):
    response = client.get("/reports/00000000-0000-0000-0000-000000000000/replay/")
    assert response.status_code == 404
