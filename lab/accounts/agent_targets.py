"""Where a tenant's registered agent may be reached, and which variable may hold its key (pure).

The agent's URL is a request the lab makes on the tenant's behalf, so it follows the alert
webhooks' target rules (lab.alerts.targets: no internal address unless the operator's
LAB_OUTBOUND_ALLOWED_HOSTS names it). A ws(s) URL is checked as the http(s) one it upgrades from.
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
    "telnyx": ConnectorRule(
        "phone bot (Telnyx media streaming)",
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
# send the lab's own secrets (its signing key, database URL…) to a server of its choosing. Each
# name carries its tenant (LAB_AGENT_KEY_<TENANT>__<NAME>), so no tenant can name another's key.
SECRET_ENV_PREFIX = "LAB_AGENT_KEY_"
_KEY_NAME = re.compile(r"[A-Z0-9]+(?:_[A-Z0-9]+)*")
_SECRET_ENV_MAX = 100


def tenant_secret_prefix(tenant: str) -> str:
    """How the names of a tenant's key variables begin: LAB_AGENT_KEY_<TENANT>__."""
    return f"{SECRET_ENV_PREFIX}{re.sub(r'[^A-Z0-9]', '_', tenant.upper())}__"


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


def secret_env_check(name: str, tenant: str) -> str:
    """The name of the variable holding the tenant's agent's key ("" for none); ValueError
    unless it is one of the tenant's own (its NAME after the `__` has no `__` of its own, so a
    name belongs to one tenant prefix only)."""
    if not name:
        return name
    prefix = tenant_secret_prefix(tenant)
    rest = name.removeprefix(prefix)
    if rest == name or not _KEY_NAME.fullmatch(rest) or len(name) > _SECRET_ENV_MAX:
        raise ValueError(
            f"the key's variable must be named {prefix}NAME (NAME in capitals and digits, "
            f"words joined by single _, e.g. {prefix}BOT): it carries the tenant, so it is "
            "this tenant's alone; give its name, never the key itself"
        )
    return name


def secret_env_owned(name: str, tenant: str) -> bool:
    """Whether name is one of the tenant's key variables (see secret_env_check)."""
    try:
        return bool(secret_env_check(name, tenant))
    except ValueError:
        return False
