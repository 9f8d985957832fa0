"""The audit rows' hash chain: written with every row, walked by `manage.py verifyaudit`."""

from __future__ import annotations

import importlib
import itertools
import threading
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection, connections

from lab.accounts.models import Tenant
from lab.audit.chain import GENESIS_HASH, row_hash
from lab.audit.chain_store import chain_verify
from lab.audit.models import AuditChainHead, AuditRecord
from lab.audit.services import audit_record, audit_records_store
from tests.audit.lifting import lifted
from tests.audit.test_daily import entry

pytestmark = pytest.mark.django_db


def verifyaudit(*tenants: str) -> tuple[int, str]:
    out = StringIO()
    args = [arg for tenant in tenants for arg in ("--tenant", tenant)]
    try:
        call_command("verifyaudit", *args, stdout=out)
    except CommandError as error:
        return error.returncode, out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def two_tenants() -> dict[str, list[AuditRecord]]:
    for slug in ("acme", "globex"):
        Tenant.objects.create(slug=slug)
    acme = audit_records_store([entry(n, "acme", "front-desk", 1, n) for n in range(6)]).records
    globex = [audit_record(entry=entry(n, "globex", "bot", 2, n)) for n in range(3)]
    acme.append(audit_record(entry=entry(7, "acme", "front-desk", 3, 9)))
    return {"acme": acme, "globex": globex}


def test_each_tenants_rows_form_their_own_chain_and_verify(two_tenants):
    for tenant, rows in two_tenants.items():
        rows = list(AuditRecord.objects.filter(tenant=tenant).order_by("chain_seq"))
        assert [r.chain_seq for r in rows] == list(range(1, len(rows) + 1))
        assert rows[0].prev_hash == GENESIS_HASH
        assert all(b.prev_hash == a.row_hash for a, b in itertools.pairwise(rows))
        assert all(row_hash(r) == r.row_hash for r in rows)
        head = AuditChainHead.objects.get(tenant=tenant)
        assert (head.seq, head.hash) == (len(rows), rows[-1].row_hash)
    code, out = verifyaudit()
    assert code == 0 and "acme: intact, 7 row(s)" in out and "globex: intact, 3 row(s)" in out
    # The same entry again is the row already stored: the chain does not grow.
    audit_records_store([entry(n, "acme", "front-desk", 1, n) for n in range(6)])
    assert chain_verify("acme").rows == 7


def test_a_changed_row_is_named_even_when_its_own_hash_is_recomputed(two_tenants):
    victim = two_tenants["acme"][2]
    with lifted(connection):
        AuditRecord.objects.filter(pk=victim.pk).update(utterance="Everything is free.")
    code, out = verifyaudit("acme", "globex")
    assert code == 1
    assert f"acme: BROKEN after 2 intact row(s): audit_{victim.id} (seq 3) was changed" in out
    assert "globex: intact" in out
    forged = AuditRecord.objects.get(pk=victim.pk)
    with lifted(connection):
        AuditRecord.objects.filter(pk=victim.pk).update(row_hash=row_hash(forged))
    nxt = two_tenants["acme"][3]
    report = chain_verify("acme")
    assert report.broken is not None and report.broken.record_id == nxt.id
    assert "does not link to the row before it" in report.broken.reason


def test_a_deleted_row_in_the_middle_or_at_the_end_is_found(two_tenants):
    acme = two_tenants["acme"]
    with lifted(connection):
        AuditRecord.objects.filter(pk=acme[-1].pk).delete()
    report = chain_verify("acme")
    assert report.broken is not None and "its head records 7 row(s)" in report.broken.reason
    with lifted(connection):
        AuditRecord.objects.filter(pk=acme[1].pk).delete()
    report = chain_verify("acme")
    assert report.broken is not None and report.broken.record_id == acme[2].id
    assert f"1 row(s) missing after audit_{acme[0].id}" in report.broken.reason


def test_a_row_slipped_in_outside_the_write_path_is_found(two_tenants):
    forged = entry(30, "globex", "bot", 9, 0)
    with lifted(connection):
        AuditRecord.objects.bulk_create([AuditRecord(**{**_fields_of(forged), "chain_seq": None})])
    code, out = verifyaudit("globex")
    assert code == 1 and "is not in the chain" in out


def test_an_unknown_tenant_is_no_pass():
    assert verifyaudit("nobody")[0] == 1


def test_the_migration_chains_the_rows_stored_before_the_chain(two_tenants):
    with lifted(connection):
        AuditRecord.objects.update(chain_seq=None, prev_hash="", row_hash="")
        AuditChainHead.objects.all().delete()
        assert verifyaudit()[0] == 1
        migration = importlib.import_module("lab.audit.migrations.0005_audit_chain_backfill")
        migration.chain_existing(apps, None)
    assert verifyaudit() == (0, verifyaudit()[1])
    acme = AuditRecord.objects.filter(tenant="acme").order_by("id")
    assert [r.chain_seq for r in acme] == list(range(1, 8))


def _fields_of(entry_):
    from lab.audit import services

    return services._fields(entry_, run=None, corrects=None)


@pytest.mark.django_db(transaction=True)
def test_writers_racing_on_one_tenant_never_fork_its_chain():
    if connection.vendor != "postgresql":
        # The test database is SQLite in memory, shared-cache: its table locks fail at once
        # instead of waiting; SQLite serializes writers anyway (the head update takes its lock).
        pytest.skip("row-level concurrency needs PostgreSQL (DATABASE_URL=postgres://…)")
    Tenant.objects.create(slug="acme")
    batch = [entry(n, "acme", "front-desk", 5, n) for n in range(8)]
    created: list[int] = []
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def writer(number: int) -> None:
        try:
            start.wait()
            if number % 2:
                created.append(audit_records_store(batch).created)
            else:
                for n in range(4):
                    audit_record(entry=entry(n, "acme", "front-desk", 100 + number, n))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(created) == [0, 8]
    report = chain_verify("acme")
    assert report.intact and report.rows == 8 + 2 * 4 == AuditRecord.objects.count()
