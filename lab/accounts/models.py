"""Tenants, their members' roles, their agents, and users' API tokens (stored as digests)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from lab.accounts.agent_targets import CONNECTORS, SCRIPTED
from lab.accounts.roles import Role


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    # Also alert on severity "warn", not only "critical".
    alert_on_warn = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=[(r.value, r.value) for r in Role])

    class Meta:
        unique_together = [("user", "tenant")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.tenant}"


class Agent(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="agents")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200, blank=True)
    # How runs reach it (lab.connectors.registry) and where; the URL follows the alert webhooks'
    # target rules (lab.accounts.agent_targets), checked on save and when a run connects.
    connector = models.CharField(
        max_length=32, choices=[(c, c) for c in CONNECTORS], default=SCRIPTED
    )
    endpoint = models.CharField(max_length=500, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    # The NAME of the environment variable that holds its API key (LAB_AGENT_KEY_…), never the
    # key: the key is read when a run connects and goes nowhere but the agent's server.
    secret_env = models.CharField(max_length=100, blank=True, default="")
    # Its own tools file (lab.agent_tools), as validated at save: its runs are served and read
    # in its own tool names and shapes. None: the lab's own tools.
    tools = models.JSONField(null=True, blank=True)
    # Its stable HTTP sandbox (lab.accounts.agent_sandbox): SHA-256 hex of the bearer token its
    # deployed bot's tools send, shown once when issued; "" for none. The tool calls it refused
    # (no live call of the agent matched) are counted, the last one said in words.
    sandbox_digest = models.CharField(max_length=64, blank=True, default="")
    sandbox_refusals = models.PositiveIntegerField(default=0)
    sandbox_last_refusal = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "slug"], name="agent_slug_per_tenant")
        ]

    def __str__(self) -> str:
        return f"{self.tenant}/{self.slug}"


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    # SHA-256 hex of the raw token: the raw token is shown once and never stored.
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
