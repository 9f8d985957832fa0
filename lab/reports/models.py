"""Imported reports (kept once they pass structure validation, so the replay has a URL) and the
public keys a reader trusts."""

from __future__ import annotations

import uuid

from django.db import models


class ImportedReport(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    filename = models.CharField(max_length=255)
    # The uploaded JSON exactly as sent: every page re-verifies it, nothing is cached from it.
    document = models.TextField()
    sha256 = models.CharField(max_length=64)
    run_id = models.CharField(max_length=64)
    scenario_id = models.CharField(max_length=64)
    event_count = models.PositiveIntegerField()
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return f"{self.filename} ({self.scenario_id})"


class TrustedKey(models.Model):
    """A public key one reader pinned: reports it signed show as signed by a key they trust."""

    # The owner token of the session that pinned it (lab.web.access), as runs are owned.
    owner = models.CharField(max_length=128, db_index=True)
    name = models.CharField(max_length=100)
    key_id = models.CharField(max_length=64)
    public_key_pem = models.TextField()
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "added_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "key_id"], name="one_pin_per_key_and_owner")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_id[:12]}…)"
