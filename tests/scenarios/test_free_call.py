"""The free call: both tools in one call, no script, judged by the lab's invariants."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.chain import EventChain
from lab.events.models import Run
from lab.events.types import RunEnded
from lab.scenarios.catalog import free_contract
from tests.language.harness import Call

LINES = """# book, correct it, confirm; then a refund, corrected, confirmed; then a question
Hi, do you have anything Thursday around two?
Yes, I'm still here.
Actually, after lunch on Tuesday would suit me better.
Lock it in.
I'd also like a refund on order 4512, forty dollars.
It was thirty-five, not forty.
Yes, go ahead.
What are your opening hours?
"""


def ended(call: Call) -> list:
    chain = EventChain(list(call.events))
    chain.append(RunEnded(reason_kind="completed", reason="test"), at=datetime.now(UTC))
    return chain.events


def test_a_call_that_does_nothing_material_proves_nothing() -> None:
    call = Call()
    call.say("What can you do?")
    evaluation = evaluate(free_contract(), ended(call))
    assert evaluation.verdict is Verdict.INCONCLUSIVE


def test_an_invariant_not_exercised_does_not_hold_a_free_call_back() -> None:
    call = Call()
    for line in ["Thursday afternoon", "Yes, book it."]:
        call.say(line)
    evaluation = evaluate(free_contract(), ended(call))
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    states = {result.id: result.state for result in evaluation.assertions}
    assert states["inv_interruption_expires"] == "no_evidence"
    assert states["inv_commit_confirmed"] == "supported"


def test_a_yes_to_something_else_fails_the_free_call_when_unguarded() -> None:
    call = Call(guarded=False)
    for line in ["Thursday afternoon", "Yes, I'm still here."]:
        call.say(line)
    evaluation = evaluate(free_contract(), ended(call))
    assert evaluation.verdict is Verdict.FAIL
    failed = {result.id for result in evaluation.assertions if result.contradicting}
    assert "inv_commit_confirmed" in failed


@pytest.mark.django_db(transaction=True)
def test_runscenarios_plays_a_free_call_from_a_file_with_both_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    lines = tmp_path / "call.txt"
    lines.write_text(LINES)
    call_command("runscenarios", "--free", str(lines), "--out", str(tmp_path))
    assert capsys.readouterr().out.strip() == "free PASS"
    report = json.loads((tmp_path / "free.json").read_text())
    receipts = [
        e["payload"]["receipt"]
        for e in report["events"]
        if e["payload"]["type"] == "tool.commit.succeeded"
    ]
    assert [
        (r["action"], r["args"].get("slot_id"), r["args"].get("amount_cents")) for r in receipts
    ] == [
        ("book", "tue-1500", None),
        ("refund", None, 3500),
    ]
    said = [
        e["payload"]["text"] for e in report["events"] if e["payload"]["type"] == "agent.utterance"
    ]
    assert not any("didn't catch" in text for text in said)


@pytest.mark.django_db(transaction=True)
def test_runscenarios_fails_a_free_call_unguarded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    lines = tmp_path / "call.txt"
    lines.write_text(LINES)
    with pytest.raises(SystemExit):
        call_command("runscenarios", "--free", str(lines), "--unguarded")
    assert capsys.readouterr().out.strip() == "free FAIL"


@pytest.mark.django_db
def test_runscenarios_refuses_an_empty_free_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing to say\n\n")
    with pytest.raises(CommandError, match="no caller lines"):
        call_command("runscenarios", "--free", str(empty))


@pytest.mark.django_db
def test_the_picker_offers_just_calling_the_agent_first(client) -> None:
    page = client.get("/").content.decode()
    assert 'id="scenario-free"' in page and "Just call the agent" in page
    assert page.index('id="scenario-free"') < page.index('id="scenario-correction"')
    assert "calendar + ledger" in page
    response = client.post("/runs/", {"scenario": "free", "channel": "voice"})
    assert response.status_code == 302
    assert Run.objects.get().scenario_id == "free"
