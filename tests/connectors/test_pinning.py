"""A tenant's agent is reached only at the addresses its checked resolver answers, when each
connection is made: a name no DNS knows still reaches the address it answered, and a refusal
becomes the turn's fault in words, never a connection to wherever the name points now."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from lab.accounts.agents import checked_resolver
from lab.alerts.targets import parse_allowed_hosts
from lab.connectors.interface import AgentFault, CallerTurn
from lab.connectors.openai_chat import OpenAIChatAgent
from lab.connectors.pinning import AddressRefused
from lab.connectors.pipecat_eval import connect as pipecat_connect
from lab.connectors.registry import AgentSpec, connect
from tests.connectors.toolbox import FixtureToolBox

Start = Callable[[str | None], str]
UNKNOWN = "agent.invalid"  # RFC 2606: no resolver answers it


def renamed(url: str) -> tuple[str, int]:
    """The reference server's URL under a name only the test's resolver knows, and its port."""
    parts = urlsplit(url)
    assert parts.port is not None
    return url.replace(f"{parts.hostname}:", f"{UNKNOWN}:"), parts.port


async def test_the_openai_connector_connects_to_the_address_the_resolver_checked(
    reference_server: Start,
) -> None:
    url, port = renamed(reference_server(None))
    asked: list[tuple[str, int]] = []

    def resolve(host: str, at: int) -> list[str]:
        asked.append((host, at))
        return ["127.0.0.1"]

    agent = connect(AgentSpec(connector="openai", endpoint=url, model="asked-for", resolve=resolve))
    assert isinstance(agent, OpenAIChatAgent)
    try:
        await agent.identify()
    finally:
        await agent.close()
    # Only the server could have named its model: the request reached it through the pin.
    assert agent.identity.model == "scripted-reference"
    assert asked == [(UNKNOWN, port)]


async def test_a_refused_address_is_the_turns_fault_in_words(reference_server: Start) -> None:
    url, _ = renamed(reference_server(None))

    def refuse(host: str, port: int) -> list[str]:
        raise AddressRefused(f"its URL is refused: {host} resolves to 10.0.0.9, a private address")

    agent = connect(AgentSpec(connector="openai", endpoint=url, resolve=refuse))
    try:
        outputs = [
            o async for o in agent.hear(CallerTurn("Tuesday, please.", "ev-1"), FixtureToolBox())
        ]
    finally:
        await agent.close()
    (fault,) = [o for o in outputs if isinstance(o, AgentFault)]
    assert fault.kind == "disconnected"
    assert "its URL is refused: agent.invalid resolves to 10.0.0.9" in fault.reason


async def test_the_pipecat_connector_is_refused_before_it_opens_a_socket() -> None:
    def refuse(host: str, port: int) -> list[str]:
        raise AddressRefused(f"its URL is refused: {host}:{port} resolves to 127.0.0.1")

    agent = pipecat_connect(
        AgentSpec(connector="pipecat", endpoint="wss://bot.invalid/ws", resolve=refuse)
    )
    try:
        outputs = [o async for o in agent.greet(FixtureToolBox())]
    finally:
        await agent.close()
    assert len(outputs) == 1 and isinstance(outputs[0], AgentFault)
    assert "its URL is refused: bot.invalid:443 resolves to 127.0.0.1" in outputs[0].reason


def test_the_checked_resolver_follows_the_target_rules_and_the_operators_exceptions(
    settings,
) -> None:
    resolve = checked_resolver("openai", "http://127.0.0.1:8001/v1")
    with pytest.raises(AddressRefused, match=r"127\.0\.0\.1 is a loopback address"):
        resolve("127.0.0.1", 8001)
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1:8001")
    assert resolve("127.0.0.1", 8001) == ["127.0.0.1"]
    # It answers for the registered host only, whatever a connector asks it about.
    with pytest.raises(AddressRefused, match="not the agent's registered host"):
        resolve("169.254.169.254", 80)
    metadata = checked_resolver("pipecat", "ws://169.254.169.254/ws")
    with pytest.raises(AddressRefused, match="link-local"):
        metadata("169.254.169.254", 80)
