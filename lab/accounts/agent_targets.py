"""Where a tenant's registered agent may be reached, and which variable may hold its key (pure).

The agent's URL is a request the lab makes on the tenant's behalf, so it follows the alert
webhooks' target rules (lab.alerts.targets: no internal address unless the operator's
LAB_ALERT_ALLOWED_HOSTS names it). A ws(s) URL is checked as the http(s) one it upgrades from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from lab.alerts.targets import (
    HostRule,
    Resolver,
    Target,
    TargetRefused,
    check_target,
    system_resolver,
)

SCRIPTED = "scripted"


@dataclass(frozen=True)
class ConnectorRule:
    label: str
    # URL scheme → the http(s) scheme whose target rules it follows; empty: no URL at all.
    schemes: dict[str, str]
    example: str = ""


# The connectors lab.connectors.registry ships. MCP is no connector: an outside agent reached
# through one of these calls the run's tools over MCP with the token its run page issues.
CONNECTORS: dict[str, ConnectorRule] = {
    SCRIPTED: ConnectorRule("the lab's scripted agent", {}),
    "openai": ConnectorRule(
        "OpenAI-compatible chat", {"http": "http", "https": "https"}, "https://llm.example.com/v1"
    ),
    "pipecat": ConnectorRule(
        "pipecat bot (eval wire)", {"ws": "http", "wss": "https"}, "wss://bot.example.com/ws"
    ),
    "twilio": ConnectorRule(
        "phone bot (Twilio Media Streams)",
        {"ws": "http", "wss": "https"},
        "wss://bot.example.com/media",
    ),
    "pcm": ConnectorRule(
        "phone bot (16 kHz PCM WebSocket)",
        {"ws": "http", "wss": "https"},
        "wss://bot.example.com/pcm",
    ),
}

# Only variables the lab's operator set aside for agents' keys: a tenant must not be able to
# send the lab's own secrets (its signing key, database URL…) to a server of its choosing.
SECRET_ENV_PREFIX = "LAB_AGENT_KEY_"
_SECRET_ENV = re.compile(rf"{SECRET_ENV_PREFIX}[A-Z0-9_]{{1,64}}")


def connector_kind(connector: str) -> ConnectorRule:
    """The connector's rules; TargetRefused names the known ones otherwise."""
    kind = CONNECTORS.get(connector)
    if kind is None:
        raise TargetRefused(f"choose a connector: {', '.join(CONNECTORS)}")
    return kind


def endpoint_check(
    connector: str,
    url: str,
    *,
    allowed: frozenset[HostRule] = frozenset(),
    own: tuple[str, int] | None = None,
    resolve: Resolver = system_resolver,
    unresolved_ok: bool = False,
) -> Target | None:
    """The connector's URL checked against the target rules (None: scripted, which has none);
    raises TargetRefused saying what is wrong in words a form can show."""
    kind = connector_kind(connector)
    if not kind.schemes:
        if url:
            raise TargetRefused("the scripted agent runs inside the lab: leave the URL empty")
        return None
    if not url:
        raise TargetRefused(f"the {connector} connector needs a URL, e.g. {kind.example}")
    parts = urlsplit(url)
    wanted = " or ".join(f"{scheme}://" for scheme in kind.schemes)
    if parts.scheme not in kind.schemes:
        raise TargetRefused(f"the {connector} connector needs a {wanted} URL, e.g. {kind.example}")
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise TargetRefused(
            "the URL may carry no user, password, query or fragment (keys hide there): "
            "name the key's environment variable instead"
        )
    as_http = parts._replace(scheme=kind.schemes[parts.scheme]).geturl()
    return check_target(
        as_http, allowed=allowed, own=own, resolve=resolve, unresolved_ok=unresolved_ok
    )


def secret_env_check(name: str) -> str:
    """The name of the variable holding the agent's key ("" for none); ValueError otherwise."""
    if name and not _SECRET_ENV.fullmatch(name):
        raise ValueError(
            f"the key's variable must be named {SECRET_ENV_PREFIX}… in capitals, digits and _ "
            f"(e.g. {SECRET_ENV_PREFIX}ACME): give its name, never the key itself"
        )
    return name
