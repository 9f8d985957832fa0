from __future__ import annotations

from typing import Any

from lab.connectors.interface import AgentIdentity as Exported
from lab.events.chain import digest
from lab.events.types import AgentIdentity, Channel, Mode, RunStarted

FIELDS: dict[str, Any] = dict(
    run_id="r",
    scenario_id="correction",
    scenario_version=1,
    contract_hash="h",
    mode=Mode.GUARDED,
    channel=Channel.TYPED,
    evaluator_version="evaluator-1",
    gate_version="gate-1",
    agent_version="scripted-agent-2",
)


def test_run_started_without_an_agent_serializes_and_hashes_as_before_the_field_existed():
    data = RunStarted(**FIELDS).model_dump(mode="json")
    assert "agent" not in data
    assert digest(data) == digest({"type": "run.started", **FIELDS})


def test_run_started_names_an_outside_agent_and_reads_it_back():
    agent = AgentIdentity(connector="openai", endpoint="http://127.0.0.1:9/v1", model="m")
    data = RunStarted(**FIELDS, agent=agent).model_dump(mode="json")
    assert data["agent"]["endpoint"] == "http://127.0.0.1:9/v1"
    assert RunStarted.model_validate(data).agent == agent
    assert Exported is AgentIdentity
    assert agent.label() == "openai http://127.0.0.1:9/v1 (model m)"
