"""barge_during_commit through the Chat Completions connector against the reference server: the
caller's check-in reaches the agent while its write runs (the call answered as pending in the
history, its result a system message when it comes); the reference agent answers with the
outcome and PASSes, and the habit rewrite-on-barge, which sends the write again, FAILs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab.connectors.chat_wire import PENDING, late_result_message, read_late_result, tool_message
from lab.connectors.interface import CallerTurn, Said, ToolCalled, ToolResult, TurnFinished
from lab.connectors.openai_chat import OpenAIChatAgent
from lab.connectors.tool_specs import offered_specs
from lab.events.types import Action
from tests.connectors.toolbox import FixtureToolBox
from tests.connectors.verdicts import MODES, scenario_verdicts

pytestmark = pytest.mark.django_db(transaction=True)

Start = Callable[[str | None], str]
SCENARIO = "barge_during_commit"


def played(
    capsys: pytest.CaptureFixture[str], url: str, mode: str, out: Path
) -> tuple[str, str, list[dict[str, Any]]]:
    """The verdict, the reasons and the payloads of the run's events."""
    arguments = ("--agent", f"openai:{url}", "--scenario", SCENARIO, "--out", str(out))
    verdicts, reasons = scenario_verdicts(capsys, *arguments, *MODES[mode])
    report = json.loads((out / f"{SCENARIO}.json").read_text())
    return verdicts[SCENARIO], reasons, [event["payload"] for event in report["events"]]


def _types(payloads: list[dict[str, Any]]) -> list[str]:
    return [p["type"] for p in payloads]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_reference_agent_hears_the_check_in_mid_write_and_books_once(
    reference_server: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
    mode: str,
) -> None:
    verdict, reasons, payloads = played(capsys, reference_server(None), mode, tmp_path)
    assert verdict == "PASS", reasons
    types = _types(payloads)
    check_in = next(i for i, p in enumerate(payloads) if p.get("text", "").startswith("Hello?"))
    assert types.index("tool.commit.started") < check_in < types.index("tool.commit.succeeded")
    assert types.count("tool.commit.started") == 1


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rewrite_on_barge_sends_the_write_again_and_fails_one_write_per_yes(
    reference_server: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
    mode: str,
) -> None:
    verdict, reasons, payloads = played(
        capsys, reference_server("rewrite-on-barge"), mode, tmp_path
    )
    assert verdict == "FAIL"
    assert "one_write_per_yes by" in reasons
    started = [p for p in payloads if p["type"] == "tool.commit.started"]
    # Both on the caller's one go-ahead; the second sent on hearing the check-in.
    assert len({p["confirmation_event_id"] for p in started}) == 1 and len(started) == 2
    check_in = next(i for i, p in enumerate(payloads) if p.get("text", "").startswith("Hello?"))
    assert payloads.index(started[0]) < check_in < payloads.index(started[1])
    executed = [p for p in payloads if p["type"] == "tool.commit.succeeded" and not p["replayed"]]
    if mode == "as-is":
        # Its own new key: the sandbox books twice.
        assert len(executed) == 2 and "booked_once by" in reasons
    else:
        # The lab's gate replays its key, so one booking: the second write is still the bug.
        assert len(executed) == 1 and "booked_once" not in reasons


def test_a_late_result_reads_back_as_its_call_and_body() -> None:
    result = ToolResult("call_7", "ok", {"receipt": {"receipt_id": "rc-1"}})
    message = late_result_message(result)
    assert message["role"] == "system"
    assert read_late_result(message["content"]) == ("call_7", tool_message(result)["content"])
    assert read_late_result("[Knowledge] nothing") is None


async def test_the_connector_answers_the_caller_mid_call_with_the_call_pending_in_the_history(
    reference_server: Start,
) -> None:
    agent = OpenAIChatAgent(
        base_url=reference_server(None),
        model="any",
        tools=offered_specs(frozenset({Action.BOOK})),
    )
    box = FixtureToolBox()

    async def check_in() -> None:
        await agent.interject(CallerTurn("Hello? Did that go through?", "ev-3"))

    try:
        _ = [o async for o in agent.hear(CallerTurn("Tuesday morning, please.", "ev-1"), box)]
        box.during_write = check_in
        outputs = [o async for o in agent.hear(CallerTurn("Yes, book it.", "ev-2"), box)]
    finally:
        await agent.close()
    assert box.during_write is None  # the write waited for the agent to answer the caller
    assert [o.call.name for o in outputs if isinstance(o, ToolCalled)] == ["book_appointment"]
    assert Said("Your reference is rc-1.") in outputs and outputs[-1] == TurnFinished()
    since = next(i for i, m in enumerate(agent.messages) if m.get("content") == "Yes, book it.")
    shape = [(m["role"], str(m.get("content"))[:40]) for m in agent.messages[since + 1 :]]
    assert [role for role, _ in shape] == [
        "assistant",
        "tool",
        "user",
        "assistant",
        "system",
        "assistant",
    ]
    assert json.loads(agent.messages[since + 2]["content"]) == PENDING
    assert shape[2][1] == "Hello? Did that go through?"
    assert read_late_result(agent.messages[since + 5]["content"]) is not None
