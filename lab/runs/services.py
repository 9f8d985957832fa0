"""Creating runs: the write the scenario picker and the headless runner share."""

from __future__ import annotations

from lab.accounts.agents import AgentRef
from lab.connectors.registry import AgentSpec
from lab.events.models import Run, TrialGroup
from lab.events.types import Channel, Mode
from lab.runs.ownership import headless_owner_token, token_digest
from lab.scenarios.catalog import contract_get


def run_start(
    *,
    scenario_id: str,
    mode: Mode,
    channel: Channel,
    owner_token: str | None = None,
    ungrounded: bool = False,
    agent: AgentSpec | None = None,
    tenant_agent: AgentRef | None = None,
    trial: tuple[TrialGroup, int] | None = None,
) -> Run:
    """Create a run of a known scenario owned by owner_token (default: this process's headless
    owner, for runs it plays itself); raises UnknownScenario for any other id.

    agent names an agent under test the lab did not write (None or scripted: the lab's own).
    tenant_agent, already checked (lab.accounts.agents), is whose run it is: its audit rows go
    to that tenant, and the run reads its key from the variable the agent names (the name is
    kept, never the key). Without one the run is public and writes into no tenant. trial is the
    repeat-trial group and 1-based index the run fills (runscenarios --trials)."""
    contract = contract_get(scenario_id)
    return Run.objects.create(
        scenario_id=contract.id,
        scenario_version=contract.version,
        contract_hash=contract.contract_hash,
        mode=mode.value,
        channel=channel.value,
        ungrounded=ungrounded,
        agent_connector="" if agent is None or agent.scripted else agent.connector,
        agent_endpoint="" if agent is None or agent.scripted else agent.endpoint,
        agent_model="" if agent is None or agent.scripted else agent.model,
        agent_key_env=tenant_agent.secret_env if tenant_agent and agent else "",
        agent_tools=agent.toolset.file.model_dump(mode="json") if agent and agent.toolset else None,
        owner_hash=token_digest(owner_token or headless_owner_token()),
        tenant=tenant_agent.tenant if tenant_agent else "",
        agent=tenant_agent.slug if tenant_agent else "",
        trial_group=trial[0] if trial else None,
        trial_index=trial[1] if trial else None,
    )
