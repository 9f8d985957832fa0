"""Concurrent workers claiming from one outbox on PostgreSQL (SQLite serializes writers anyway)."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections
from django.utils import timezone

from lab.accounts.models import Tenant
from lab.alerts.delivery import message_claim
from lab.alerts.models import OutboxMessage
from lab.alerts.outbox import endpoint_create
from lab.audit.services import audit_records_store
from tests.alerts.support import graded_entries

WORKERS = 4


@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_each_claim_a_message_at_most_once():
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency needs PostgreSQL (DATABASE_URL=postgres://…)")
    Tenant.objects.create(slug="demo")
    for number in range(10):
        endpoint_create(tenant="demo", url=f"http://127.0.0.1:9/{number}")
    audit_records_store(graded_entries())
    total = OutboxMessage.objects.count()
    assert total >= 50
    now = timezone.now()
    claims: list[tuple[str, int]] = []
    start = threading.Barrier(WORKERS)

    def work(name: str) -> None:
        try:
            start.wait()
            while (message := message_claim(worker=name, lease_s=60, now=now)) is not None:
                claims.append((name, message.id))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(f"w{n}",)) for n in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    per_message = Counter(message_id for _, message_id in claims)
    assert len(per_message) == total
    assert set(per_message.values()) == {1}
