"""A registered agent's settings, checked once: the agents page and `registeragent` share them."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from lab.accounts.agent_targets import CONNECTORS, SCRIPTED, secret_env_check
from lab.accounts.agents import agent_target_check
from lab.agent_tools.loading import MAX_BYTES, ToolsFileError, parse_tools_file


class AgentForm(BaseModel):
    """An agent's settings as the form sends them; each error is keyed by its field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="", max_length=200)
    connector: str
    endpoint: str = Field(default="", max_length=500)
    model: str = Field(default="", max_length=200)
    secret_env: str = Field(default="", max_length=100)
    # The agent's own tools file, as JSON text (lab.agent_tools); empty: the lab's own tools.
    tools: str = Field(default="", max_length=MAX_BYTES)

    @field_validator("connector")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in CONNECTORS:
            raise ValueError(f"choose one of {', '.join(CONNECTORS)}")
        return value

    @field_validator("endpoint")
    @classmethod
    def _reachable(cls, value: str, info: ValidationInfo) -> str:
        # The alert webhooks' target rules; a name that does not resolve yet is checked again,
        # resolved, when a run connects.
        connector = info.data.get("connector")
        if connector is not None:
            agent_target_check(connector, value, resolved=False)
        return value

    @field_validator("model", "secret_env")
    @classmethod
    def _not_for_scripted(cls, value: str, info: ValidationInfo) -> str:
        if value and info.data.get("connector") == SCRIPTED:
            raise ValueError("the scripted agent has no model and needs no key: leave it empty")
        if info.field_name != "secret_env":
            return value
        # A key's variable names its tenant; the caller says which tenant the form is for.
        tenant = info.context.get("tenant", "") if isinstance(info.context, dict) else ""
        return secret_env_check(value, tenant)

    @field_validator("tools")
    @classmethod
    def _tools_file(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            return ""
        if info.data.get("connector") == SCRIPTED:
            raise ValueError("the scripted agent uses the lab's own tools: leave it empty")
        try:
            parsed = parse_tools_file(value, source="tools file")
        except ToolsFileError as error:
            raise ValueError(str(error)) from None
        return parsed.model_dump_json()

    def stored(self) -> dict[str, Any]:
        """The fields as the Agent row keeps them (the tools file as JSON, or None)."""
        fields = self.model_dump()
        fields["tools"] = json.loads(self.tools) if self.tools else None
        return fields


class NewAgentForm(AgentForm):
    slug: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_-]*$")
