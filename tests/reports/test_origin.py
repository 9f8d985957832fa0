"""Origin is a result of its own: a consistent report no trusted key signed is no trusted PASS."""

from __future__ import annotations

import html
import re
from io import StringIO
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from lab.evaluation.verdicts import Verdict
from lab.events.types import Mode
from lab.reports.keys import configured_trusted_keys
from lab.reports.models import TrustedKey
from lab.reports.services import report_verify
from lab.reports.signing import public_key_pem
from lab.reports.verification import Origin
from tests.reports.tampering import forge_away_the_second_booking

pytestmark = pytest.mark.django_db

FORGER = Ed25519PrivateKey.generate()


@pytest.fixture(scope="module")
def twice_booked(real_reports):
    report = real_reports[("double_confirmation", Mode.UNGUARDED)]
    assert report_verify(report.raw).verdict is Verdict.FAIL
    return report


@pytest.fixture(scope="module", params=["unsigned", "unknown key"])
def forged(request, twice_booked) -> bytes:
    key = FORGER if request.param == "unknown key" else None
    return forge_away_the_second_booking(twice_booked.document(), key)


def upload(client: Client, raw: bytes, name: str = "forged.json"):
    files = {"report": SimpleUploadedFile(name, raw, content_type="application/json")}
    return client.post(reverse("report_create"), files)


def verifyreport(*args: str) -> tuple[int, list[str]]:
    out = StringIO()
    try:
        call_command("verifyreport", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


def test_the_forgery_is_consistent_and_passes_but_its_origin_is_unproven(forged):
    verification = report_verify(forged)
    assert verification.consistent, verification.problems()
    assert verification.verdict is Verdict.PASS
    assert verification.origin in (Origin.ABSENT, Origin.UNKNOWN_KEY)
    assert not verification.origin_proven
    summary = verification.summary("forged.json")
    assert summary.startswith("forged.json: consistent, origin unproven (")
    assert "verdict PASS" not in summary


def test_the_page_shows_the_forgery_as_origin_unproven_never_as_a_trusted_pass(client, forged):
    page = html.unescape(upload(client, forged).content.decode())
    assert re.search(r'id="origin" data-origin="[^"]+" data-proven="false"', page)
    assert 'id="origin-warning"' in page
    assert "Origin unproven." in page
    assert "this PASS is not evidence of what a run did" in page
    assert 'class="result proven"' not in page
    assert '<div class="origin-unproven">' in page
    assert "forged.json: consistent, signed by" not in page


def test_the_cli_refuses_the_forgery_unless_told_to_allow_unsigned_reports(tmp_path, forged):
    path = tmp_path / "forged.json"
    path.write_bytes(forged)
    status, lines = verifyreport(str(path))
    assert status == 1
    assert lines[-1].startswith(f"{path}: consistent, origin unproven (")
    assert verifyreport(str(path), "--allow-unsigned")[0] == 0


def test_the_cli_accepts_a_report_signed_by_a_key_it_is_told_to_trust(tmp_path, twice_booked):
    path = tmp_path / "r.json"
    path.write_bytes(forge_away_the_second_booking(twice_booked.document(), FORGER))
    stranger = tmp_path / "stranger.pub"
    stranger.write_text(public_key_pem(Ed25519PrivateKey.generate().public_key()))
    assert verifyreport(str(path), "--trust", str(stranger))[0] == 1
    signer = tmp_path / "signer.pub"
    signer.write_text(public_key_pem(FORGER.public_key()))
    status, lines = verifyreport(str(path), "--trust", str(stranger), "--trust", str(signer))
    assert status == 0
    assert lines[-1] == f"{path}: consistent, signed by a key you trust, verdict PASS"


def test_a_genuine_report_is_signed_by_this_lab_in_the_proven_style(client, guarded):
    page = html.unescape(upload(client, guarded.raw, "genuine.json").content.decode())
    assert "genuine.json: consistent, signed by this lab, verdict PASS" in page
    assert 'class="result proven"' in page
    assert 'id="origin-warning"' not in page


def test_a_reader_pins_a_key_and_only_their_session_trusts_it(twice_booked):
    raw = forge_away_the_second_booking(twice_booked.document(), FORGER)
    reader, other = Client(), Client()
    response = reader.post(
        reverse("trusted_keys"),
        {"name": "Partner lab", "public_key_pem": public_key_pem(FORGER.public_key())},
    )
    assert response.status_code == 302
    listing = reader.get(reverse("trusted_keys")).content.decode()
    assert "Partner lab" in listing
    page = html.unescape(upload(reader, raw).content.decode())
    assert "forged.json: consistent, signed by a key you trust, verdict PASS" in page
    assert "signed by a key you trust (Partner lab)" in page
    assert "origin unproven" in html.unescape(upload(other, raw).content.decode())
    assert "Partner lab" not in other.get(reverse("trusted_keys")).content.decode()
    pin = TrustedKey.objects.get()
    assert other.post(reverse("trusted_key_remove", args=[pin.id])).status_code == 404
    assert reader.post(reverse("trusted_key_remove", args=[pin.id])).status_code == 302
    assert not TrustedKey.objects.exists()


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"name": "x", "public_key_pem": "hello"}, "the key is not a PEM public key"),
        ({"name": "", "public_key_pem": "x"}, "name: String should have at least 1 character"),
        ({"name": "x"}, "public_key_pem: String should have at least 1 character"),
    ],
)
def test_a_key_that_cannot_be_pinned_is_refused_with_a_message(client, fields, says):
    response = client.post(reverse("trusted_keys"), fields)
    assert response.status_code == 400
    assert says in html.unescape(response.content.decode())
    assert not TrustedKey.objects.exists()


def test_keys_named_in_lab_trusted_keys_are_trusted_by_every_reader(tmp_path: Path, twice_booked):
    signer = tmp_path / "signer.pub"
    signer.write_text(public_key_pem(FORGER.public_key()))
    raw = forge_away_the_second_booking(twice_booked.document(), FORGER)
    with override_settings(LAB_TRUSTED_KEYS=[str(signer)]):
        assert len(configured_trusted_keys()) == 1
        page = html.unescape(upload(Client(), raw).content.decode())
    assert "forged.json: consistent, signed by a key you trust, verdict PASS" in page
