"""Stored runs and their append-only events."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class TrialGroup(models.Model):
    """The runs of one `runscenarios --trials K` invocation: each scenario played K times."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    trials = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    # A group the picker plays in a server's background: until when its player has said it is
    # alive (renewed as it plays). Once that lapses, its unfinished runs are ended as abandoned.
    # None: a group played in the foreground (runscenarios --trials), never abandoned.
    player_until = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"trials {self.id} (K={self.trials})"


class Run(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        ENDED = "ended"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario_id = models.CharField(max_length=64)
    scenario_version = models.PositiveIntegerField()
    contract_hash = models.CharField(max_length=64)
    mode = models.CharField(max_length=16)
    channel = models.CharField(max_length=16)
    # Ungrounded mode: the agent answers questions without retrieval (beside the gate's mode).
    ungrounded = models.BooleanField(default=False)
    # The agent under test, when the lab did not write it: its connector ("" is the scripted
    # agent), endpoint and model name. Never a secret: a connector reads its key from the env.
    agent_connector = models.CharField(max_length=32, blank=True, default="")
    agent_endpoint = models.CharField(max_length=500, blank=True, default="")
    agent_model = models.CharField(max_length=200, blank=True, default="")
    # A tenant's registered agent: the NAME of the variable its key is read from when the run
    # connects ("" for none). Runs for no tenant read LAB_AGENT_API_KEY instead.
    agent_key_env = models.CharField(max_length=100, blank=True, default="")
    # The agent's own tools file (lab.agent_tools), as validated when the run was made: every
    # process that drives or serves the run reads its tools the same way. None: the lab's tools.
    agent_tools = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    # Who may see and drive the run: SHA-256 of the owner token its browser session holds
    # (lab/runs/ownership.py), and of the read-only share link's token once one exists.
    owner_hash = models.CharField(max_length=64)
    share_hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    # SHA-256 of the bearer token that opens the run's sandboxed tools over MCP, until it ends
    # (lab/connectors/mcp_access.py).
    mcp_hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    # A signed-in starter also owns the run, so it follows them to any browser they sign in from.
    owner_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="runs",
    )
    # Whose agent the run is for (lab.accounts.agents): its audit rows, cases and alerts land in
    # this tenant. Empty for a public run of the scenarios: its grades stay on the run's page and
    # report, and nothing lands in any tenant.
    tenant = models.CharField(max_length=64, blank=True, default="")
    agent = models.CharField(max_length=64, blank=True, default="")
    # The driver lease (lab/runs/lease.py): which live session may append, and until when
    # others must wait before taking over. The holder is fenced on every append.
    driver_token = models.CharField(max_length=64, blank=True, default="")
    driver_expires_at = models.DateTimeField(null=True, blank=True)
    # Which repeat trial of which invocation the run is (lab/runs/trials.py); a run is evidence
    # of its own, so it outlives its group.
    trial_group = models.ForeignKey(
        TrialGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    trial_index = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner_hash", "-created_at"], name="run_owner_recent")]
        constraints = [
            models.UniqueConstraint(
                fields=["trial_group", "scenario_id", "trial_index"],
                name="run_trial_unique_per_group",
            )
        ]

    def __str__(self) -> str:
        grounding = ", ungrounded" if self.ungrounded else ""
        return f"{self.scenario_id} ({self.mode}{grounding}, {self.channel})"


class StoredEvent(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    event_id = models.CharField(max_length=16)
    type = models.CharField(max_length=48)
    at = models.DateTimeField()
    payload = models.JSONField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["run", "seq"], name="event_seq_unique_per_run"),
            models.UniqueConstraint(fields=["run", "event_id"], name="event_id_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"
