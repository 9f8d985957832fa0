"""`manage.py gradeturns` on transcripts built from the fixture and from the seed's list."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.audit.models import AuditRecord
from lab.audit.schema import AuditRecordOut
from tests.audit.calls import ROOT, SEED_LIST, demo_calls, jsonl, seed_call

pytestmark = pytest.mark.django_db


def gradeturns(*args: str) -> tuple[int, list[str], str]:
    """Exit status, stdout lines and stderr of one run of the command."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("gradeturns", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit:
        code = int(exit.code or 0)
    return code, out.getvalue().splitlines(), err.getvalue()


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_it_prints_each_agent_turns_verdict_and_grounding_and_exits_1_on_unsupported(tmp_path):
    lines, expected = demo_calls()
    code, out, _ = gradeturns(write(tmp_path, "calls.jsonl", jsonl(lines)), "--tenant", "demo")
    assert code == 1
    assert out[:-1] == [f"{e.call_id}/{e.turn_id} {e.verdict} {e.grounding}" for e in expected]
    unsupported = sum(e.verdict == "unsupported" for e in expected)
    assert out[-1].startswith(f"{len(expected)} agent turns in {len(expected)} calls graded")
    assert f"{unsupported} unsupported" in out[-1] and "demo_v1" in out[-1]
    assert f"{len(expected)} new audit records" in out[-1]


def test_honest_calls_exit_0(tmp_path):
    lines, expected = demo_calls()
    honest = {e.call_id for e in expected if e.verdict == "supported"}
    kept = [line for line in lines if line["call_id"] in honest]
    code, out, _ = gradeturns(write(tmp_path, "ok.jsonl", jsonl(kept)), "--tenant", "demo")
    assert code == 0
    assert all(line.split()[1] == "supported" for line in out[:-1])


def test_the_seeds_list_shape_is_accepted_as_constraints_and_stored_only_where_named(tmp_path):
    lines, expected = seed_call()
    listing = write(tmp_path, "list.json", json.dumps(SEED_LIST).encode())
    transcript = write(tmp_path, "seed.jsonl", jsonl(lines))
    code, out, _ = gradeturns(transcript, "--constraints", listing)
    assert code == 1
    assert out[:-1] == [f"{e.call_id}/{e.turn_id} {e.verdict} {e.grounding}" for e in expected]
    assert "nothing stored" in out[-1]
    # The list says tenant "external": without --tenant nothing lands there, or anywhere.
    assert not AuditRecord.objects.exists()
    code, out, _ = gradeturns(transcript, "--constraints", listing, "--tenant", "shop")
    assert code == 1 and out[-1].endswith(f"{len(expected)} new audit records")
    assert set(AuditRecord.objects.values_list("tenant", flat=True)) == {"shop"}


def test_a_list_naming_another_tenant_never_stores_into_it(tmp_path):
    fixture = json.loads((ROOT / "fixtures" / "tenant-demo.v1.json").read_text())
    listing = write(tmp_path, "l.json", json.dumps({**fixture, "tenant": "victim"}).encode())
    transcript = write(tmp_path, "calls.jsonl", jsonl(demo_calls()[0]))
    gradeturns(transcript, "--constraints", listing)
    gradeturns(transcript, "--constraints", listing, "--tenant", "mine")
    assert set(AuditRecord.objects.values_list("tenant", flat=True)) == {"mine"}


def test_the_labs_versioned_format_is_accepted_as_constraints_and_versions_are_named(tmp_path):
    transcript = write(tmp_path, "calls.jsonl", jsonl(demo_calls()[0]))
    fixture = str(ROOT / "fixtures" / "tenant-demo.v1.json")
    _, by_file, _ = gradeturns(transcript, "--constraints", fixture)
    for version in ("1", "v1", "demo_v1"):
        _, by_version, _ = gradeturns(transcript, "--tenant", "demo", "--version", version)
        assert by_version[:-1] == by_file[:-1]


def test_out_writes_every_record_and_a_second_run_stores_nothing_new(tmp_path):
    lines, expected = demo_calls()
    transcript = write(tmp_path, "calls.jsonl", jsonl(lines))
    gradeturns(transcript, "--tenant", "demo", "--agent", "shop-bot", "--out", str(tmp_path / "o"))
    records = [
        AuditRecordOut.model_validate_json(line)
        for line in (tmp_path / "o" / "calls.audit.jsonl").read_text().splitlines()
    ]
    assert [r.entry.turn_id for r in records] == [e.turn_id for e in expected]
    assert {(r.entry.agent, r.entry.channel, r.entry.run_id) for r in records} == {
        ("shop-bot", "imported", None)
    }
    first = records[0].entry
    assert first.caller_turn and first.caller_turn.startswith("How much is a")
    assert first.grounding.cited == ("doc-px_flat_repair",)
    assert first.retrieval is not None and first.grounding.confidence == 11.5
    assert AuditRecord.objects.count() == len(expected)
    _, out, _ = gradeturns(transcript, "--tenant", "demo", "--agent", "shop-bot")
    assert out[-1].endswith("0 new audit records")
    assert AuditRecord.objects.count() == len(expected)


@pytest.mark.parametrize(
    ("data", "args", "words"),
    [
        (
            b'{"call_id": "c", "turn_id": "t", "speaker": "bot", "text": "x"}\n',
            [],
            "line 1: speaker",
        ),
        (b'\n{"call_id": "c", "turn_id": "t", "speaker": "agent"}\n', [], "line 2: missing field"),
        (b'{"call_id": "c"', [], "line 1: not a JSON object"),
        (
            b'{"call_id":"c","turn_id":"t","speaker":"agent","text":"x",'
            b'"retrieval":[{"id":"a","text":"x","score":"high"}]}',
            [],
            "line 1: retrieval[0].score",
        ),
        (b"", [], "no agent turns"),
    ],
)
def test_bad_transcripts_exit_2_with_the_line_and_store_nothing(tmp_path, data, args, words):
    code, out, err = gradeturns(write(tmp_path, "bad.jsonl", data), "--tenant", "demo", *args)
    assert (code, out) == (2, [])
    assert words in err
    assert AuditRecord.objects.count() == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--tenant", "nobody"], "no constraint list for tenant 'nobody'"),
        (["--tenant", "demo", "--version", "9"], "has no version 9"),
        (["--tenant", "demo", "--version", "other_v1"], "expected a number or demo_vN"),
        (["--tenant", "../etc"], "not a tenant name"),
        (["--tenant", "demo", "--agent", "Shop Bot"], "not an agent slug"),
        (["--constraints", "/nonexistent/list.json"], "cannot read the constraint list"),
        ([], "name the facts"),
        (["--constraints", "x.json", "--version", "1"], "--version needs --tenant"),
        (["--constraints", "x.json", "--out", "o"], "--out writes the stored records"),
    ],
)
def test_bad_facts_exit_2_with_what_is_wrong(tmp_path, args, words):
    transcript = write(tmp_path, "calls.jsonl", jsonl(demo_calls()[0]))
    code, _, err = gradeturns(transcript, *args)
    assert code == 2 and words in err


def test_a_bad_constraint_list_is_refused_with_the_path_of_the_error(tmp_path):
    broken = {**SEED_LIST, "hours": {"sat": "15:00-09:00"}}
    listing = write(tmp_path, "list.json", json.dumps(broken).encode())
    transcript = write(tmp_path, "seed.jsonl", jsonl(seed_call()[0]))
    code, _, err = gradeturns(transcript, "--constraints", listing)
    assert code == 2 and "hours.sat" in err
    oversized = write(tmp_path, "big.json", b" " * (1024 * 1024 + 1))
    code, _, err = gradeturns(transcript, "--constraints", oversized)
    assert code == 2 and "over the limit" in err


def test_the_shell_sees_exit_codes_0_1_and_2(tmp_path):
    env = os.environ | {"DATABASE_URL": f"sqlite:///{tmp_path / 'lab.sqlite3'}"}

    def shell(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "manage.py", *args]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)

    lines, expected = demo_calls()
    transcript = write(tmp_path, "calls.jsonl", jsonl(lines))
    bad = write(tmp_path, "bad.jsonl", jsonl(lines[:1]) + b"{oops}\n")
    assert shell("migrate", "--noinput", "-v0").returncode == 0
    graded = shell("gradeturns", transcript, "--tenant", "demo")
    assert graded.returncode == 1, graded.stderr
    first = expected[0]
    assert graded.stdout.splitlines()[0] == f"{first.call_id}/{first.turn_id} supported ok"
    refused = shell("gradeturns", bad, "--tenant", "demo")
    assert refused.returncode == 2 and "line 2: not a JSON object" in refused.stderr
    assert "Traceback" not in refused.stderr
    honest = write(tmp_path, "ok.jsonl", jsonl(lines[:2]))
    assert shell("gradeturns", honest, "--tenant", "demo").returncode == 0


def test_the_readme_example_list_grades_a_call_of_its_own_business(tmp_path):
    lines = [
        {"call_id": "d1", "turn_id": "d1-c1", "speaker": "caller", "text": "Do you take checks?"},
        {"call_id": "d1", "turn_id": "d1-a1", "speaker": "agent", "text": "Yes, checks are fine."},
        {"call_id": "d1", "turn_id": "d1-c2", "speaker": "caller", "text": "How much is it?"},
        {"call_id": "d1", "turn_id": "d1-a2", "speaker": "agent", "text": "It's one forty-nine."},
    ]
    listing = str(ROOT / "fixtures" / "seed-detailing.json")
    code, out, _ = gradeturns(write(tmp_path, "d.jsonl", jsonl(lines)), "--constraints", listing)
    assert code == 1
    assert [line.split()[:2] for line in out[:-1]] == [
        ["d1/d1-a1", "unsupported"],
        ["d1/d1-a2", "supported"],
    ]
    assert "shine_v1" in out[-1]
