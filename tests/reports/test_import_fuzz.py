"""Hostile uploads: each gets a clear answer from the import page and the CLI, never a crash."""

from __future__ import annotations

import html
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.reports.mutations import mutations

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def battery(guarded) -> list[tuple[str, bytes]]:
    return list(mutations(guarded.raw))


def verifyreport(*args: str) -> tuple[int, list[str]]:
    out = StringIO()
    try:
        call_command("verifyreport", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


def test_the_battery_is_a_few_hundred_distinct_mutations(battery):
    assert len(battery) >= 250
    assert len({raw for _, raw in battery}) == len(battery)


def test_no_mutated_upload_gets_a_server_error(battery):
    client = Client(raise_request_exception=False)
    answers = {}
    for name, raw in battery:
        files = {"report": SimpleUploadedFile("m.json", raw, content_type="application/json")}
        response = client.post(reverse("report_create"), files)
        page = html.unescape(response.content.decode())
        said = next(
            (
                word
                for word in ("REJECTED", "INCONSISTENT", "consistent")
                if f"m.json: {word}" in page
            ),
            None,
        )
        answers[name] = (response.status_code, said)
    crashed = {name: answer for name, answer in answers.items() if answer[0] >= 500}
    unclear = {name: answer for name, answer in answers.items() if answer[1] is None}
    assert not crashed, crashed
    assert not unclear, unclear
    assert all(status in (200, 400) for status, _ in answers.values())


def test_the_cli_gives_every_mutated_file_its_own_verdict_line(tmp_path, battery):
    paths = []
    for index, (_, raw) in enumerate(battery):
        path = tmp_path / f"m{index:03}.json"
        path.write_bytes(raw)
        paths.append(path)
    status, lines = verifyreport(*map(str, paths), "--allow-unsigned")
    assert status == 1
    verdicts = [line for line in lines if line.startswith(str(tmp_path))]
    for path, (name, _) in zip(paths, battery, strict=True):
        mine = [line for line in verdicts if line.startswith(f"{path}: ")]
        assert len(mine) == 1, (name, mine)
        assert mine[0].split(": ", 1)[1].startswith(("REJECTED", "INCONSISTENT", "consistent"))


def test_a_five_thousand_digit_integer_is_a_structure_error_and_the_next_file_is_still_checked(
    tmp_path: Path, guarded
):
    huge = tmp_path / "huge.json"
    huge.write_bytes(b'{"schema_version": 1, "run_id": ' + b"9" * 5000 + b"}")
    good = tmp_path / "good.json"
    good.write_bytes(guarded.raw)
    status, lines = verifyreport(str(huge), str(good))
    assert f"{huge}: REJECTED (structure: an integer of 5,000 digits is outside the numbers" in (
        "\n".join(lines)
    )
    assert any(line.startswith(f"{good}: consistent, ") for line in lines), lines
    assert status == 1


def test_a_file_the_lab_fails_to_check_gets_an_error_line_and_the_others_their_verdicts(
    tmp_path: Path, guarded, monkeypatch
):
    from lab.web.management.commands import verifyreport as command

    checked = command.report_verify

    def crashing(raw: bytes, **keys):
        if raw == b"{}":
            raise RuntimeError("a bug in a check")
        return checked(raw, **keys)

    monkeypatch.setattr(command, "report_verify", crashing)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_bytes(b"{}")
    second.write_bytes(guarded.raw)
    status, lines = verifyreport(str(first), str(second))
    assert f"{first}: ERROR (the lab could not check it: RuntimeError: a bug in a check)" in lines
    assert any(line.startswith(f"{second}: consistent, ") for line in lines), lines
    assert status == 1
