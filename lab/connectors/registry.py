"""Which connector reaches an agent spec ("scripted", "openai:URL", "pipecat:ws://…/ws"): a table.

A connector module the lab ships is imported only when a run names it (`lab.connectors.<module>`
must define `connect(spec: AgentSpec) -> AgentUnderTest`); tests register their own doubles.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import AgentUnderTest
from lab.events.actions import LAB_ACTIONS
from lab.events.vocabulary import Action

SCRIPTED = "scripted"
# Connectors the lab ships, by spec prefix, and the module that holds each one's `connect`.
_SHIPPED: dict[str, str] = {
    "openai": "lab.connectors.openai_chat",
    "pipecat": "lab.connectors.pipecat_eval",
    "twilio": "lab.connectors.twilio_media",
    "telnyx": "lab.connectors.telnyx_media",
    "pcm": "lab.connectors.pcm_stream",
}
API_KEY_ENV = "LAB_AGENT_API_KEY"

Factory = Callable[["AgentSpec"], AgentUnderTest]
_REGISTERED: dict[str, Factory] = {}


class ConnectorUnavailable(LookupError):
    """A spec naming a connector this lab does not have (or cannot load)."""


@dataclass(frozen=True)
class AgentSpec:
    """An agent under test as a run names it; api_key is read from the environment, never stored."""

    connector: str
    endpoint: str = ""
    model: str = ""
    api_key: str | None = None
    # The sandbox tools the run offers, by name (tool_specs.TOOL_SPECS), for connectors that
    # hand an agent its function definitions; set by the session, never stored.
    tools: tuple[str, ...] = ()
    # The agent's own tools (its tools file): offered as they are instead; set by the session.
    toolset: Toolset | None = None
    # A tenant's registered agent: its host's checked addresses (lab.connectors.pinning), or an
    # AddressRefused; the connector connects only to what it answers. Never stored.
    resolve: Callable[[str, int], Sequence[str]] | None = None
    # The run is on the voice channel: a connector that takes audio gets the caller's and may
    # bring the agent's own voice; set by the session, never stored.
    voice: bool = False
    # A tenant's registered agent, "tenant/slug": its tool calls at its own stable sandbox
    # find this run's call (lab.accounts.agent_sandbox); set by the session.
    owner: str = ""

    @property
    def scripted(self) -> bool:
        return self.connector == SCRIPTED

    @property
    def known_actions(self) -> frozenset[Action]:
        """The actions a scenario played against this agent may mean."""
        return self.toolset.known_actions if self.toolset else frozenset(LAB_ACTIONS)

    def label(self) -> str:
        parts = [self.connector, self.endpoint, f"(model {self.model})" if self.model else ""]
        return " ".join(part for part in parts if part)


def parse_spec(spec: str, *, model: str = "", api_key: str | None = None) -> AgentSpec:
    """'scripted' or 'NAME:ENDPOINT'; raises ConnectorUnavailable naming what is wrong."""
    text = spec.strip()
    if text in ("", SCRIPTED):
        return AgentSpec(connector=SCRIPTED)
    name, colon, endpoint = text.partition(":")
    if not colon or not endpoint:
        raise ConnectorUnavailable(
            f"agent spec {spec!r} is neither 'scripted' nor CONNECTOR:ENDPOINT "
            f"(e.g. openai:http://127.0.0.1:11434/v1)"
        )
    return AgentSpec(connector=name, endpoint=endpoint, model=model, api_key=api_key)


def register_connector(name: str, factory: Factory) -> None:
    _REGISTERED[name] = factory


def unregister_connector(name: str) -> None:
    _REGISTERED.pop(name, None)


def _factory(name: str) -> Factory:
    if name in _REGISTERED:
        return _REGISTERED[name]
    module_name = _SHIPPED.get(name)
    if module_name is None:
        known = ", ".join(sorted({SCRIPTED, *_SHIPPED, *_REGISTERED}))
        raise ConnectorUnavailable(f"unknown agent connector {name!r}; known: {known}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConnectorUnavailable(
            f"the {name!r} connector is not available in this lab ({error})"
        ) from None
    factory = getattr(module, "connect", None)
    if not callable(factory):
        raise ConnectorUnavailable(f"{module_name} defines no connect(spec)")
    return factory


def check_connector(spec: AgentSpec) -> None:
    """Raise ConnectorUnavailable now, before a run is created, if spec cannot be connected."""
    if not spec.scripted:
        _factory(spec.connector)


def connect(spec: AgentSpec) -> AgentUnderTest:
    """The agent under test behind spec; the scripted agent runs in process, not through here."""
    if spec.scripted:
        raise ConnectorUnavailable("the scripted agent runs in process; it has no connector")
    return _factory(spec.connector)(spec)
