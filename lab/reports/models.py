"""Imported reports, kept only once they pass structure validation so the replay has a URL."""

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
