from __future__ import annotations

from io import StringIO

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from lab.events.types import Mode
from lab.reports.signing import public_key_pem
from lab.reports.structure import MAX_REPORT_BYTES
from tests.reports.tampering import BATTERY, Tamper, encoded, resealed

pytestmark = pytest.mark.django_db


def verifyreport(*args: str) -> tuple[int, str]:
    """The command's exit status and what it printed."""
    out = StringIO()
    try:
        call_command("verifyreport", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_it_exits_zero_and_prints_one_summary_line_per_consistent_report(tmp_path, real_reports):
    guarded = tmp_path / "guarded.json"
    guarded.write_bytes(real_reports[("correction", Mode.GUARDED)].raw)
    unguarded = tmp_path / "unguarded.json"
    unguarded.write_bytes(real_reports[("correction", Mode.UNGUARDED)].raw)
    status, out = verifyreport(str(guarded), str(unguarded))
    assert status == 0
    lines = out.splitlines()
    assert f"{guarded}: consistent, signed by this lab, verdict PASS" in lines
    assert f"{unguarded}: consistent, signed by this lab, verdict FAIL" in lines
    assert lines[-1].startswith(f"{unguarded}: ")


def test_it_shows_each_check_in_order_above_the_summary(tmp_path, guarded):
    path = tmp_path / "r.json"
    path.write_bytes(guarded.raw)
    _, out = verifyreport(str(path))
    checks = [line.split(":")[0].strip() for line in out.splitlines()[1:6]]
    assert checks == [
        "1. structure",
        "2. contract",
        "3. integrity",
        "4. origin",
        "5. re-evaluation",
    ]
    assert "it proves this lab instance's key signed exactly these bytes" in out


@pytest.mark.parametrize("tamper", BATTERY, ids=str)
def test_it_names_each_tampering_and_exits_nonzero(tmp_path, guarded, tamper: Tamper):
    document = guarded.document()
    says = tamper.edit(document)
    path = tmp_path / "tampered.json"
    path.write_bytes(encoded(document))
    status, out = verifyreport(str(path))
    assert status == 1
    summary = out.splitlines()[-1]
    assert summary.startswith(f"{path}: INCONSISTENT (")
    assert f"{tamper.check}: " in summary
    assert any(f"x {tamper.kind}: " in line and says in line for line in out.splitlines()), out


def test_one_inconsistent_report_among_several_makes_the_exit_status_nonzero(tmp_path, guarded):
    good = tmp_path / "good.json"
    good.write_bytes(guarded.raw)
    document = guarded.document()
    document["evaluation"]["verdict"] = "FAIL"
    bad = tmp_path / "bad.json"
    bad.write_bytes(resealed(document, None))
    status, out = verifyreport(str(good), str(bad))
    assert status == 1
    assert f"{good}: consistent, signed by this lab, verdict PASS" in out
    assert (
        f"{bad}: INCONSISTENT (re-evaluation: verdict: the file states FAIL, the events give PASS)"
        in out
    )


def test_a_trusted_public_key_vouches_for_its_signature(tmp_path, guarded):
    other = Ed25519PrivateKey.generate()
    report = tmp_path / "r.json"
    report.write_bytes(resealed(guarded.document(), other))
    key = tmp_path / "other.pub"
    key.write_text(public_key_pem(other.public_key()))
    status, out = verifyreport(str(report), "--trust", str(key))
    assert status == 0
    assert out.splitlines()[-1] == f"{report}: consistent, signed by a key you trust, verdict PASS"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{not json", "not valid JSON at line 1, column 2"),
        (b'{"schema_version": 1, "run_id": "r', "the JSON ends early"),
        (b'{"schema_version": 3}', "schema_version 3 is unknown"),
        (b'{"schema_version": 1, "run_id": 5}', "run_id: Input should be a valid string"),
        (b"[" * 64 + b"]" * 64, "nest 64 deep"),
        (b" " * (MAX_REPORT_BYTES + 1), f"larger than the {MAX_REPORT_BYTES:,}-byte limit"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    status, out = verifyreport(str(path))
    assert status == 1
    assert out.splitlines()[-1].startswith(f"{path}: REJECTED (structure: ")
    assert says in out.splitlines()[-1]


def test_a_missing_file_is_reported_and_fails_the_run(tmp_path):
    status, out = verifyreport(str(tmp_path / "nowhere.json"))
    assert status == 1
    assert out == f"{tmp_path / 'nowhere.json'}: UNREADABLE (No such file or directory)\n"


def test_a_public_key_that_is_not_ed25519_pem_stops_the_command(tmp_path, guarded):
    report = tmp_path / "r.json"
    report.write_bytes(guarded.raw)
    key = tmp_path / "bad.pub"
    key.write_text("hello")
    with pytest.raises(CommandError, match=r"the public key .* is not a PEM public key"):
        call_command("verifyreport", str(report), "--trust", str(key))
