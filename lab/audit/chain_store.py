"""The audit hash chain kept by the write path and read back by `manage.py verifyaudit`.

The Django edge of lab.audit.chain: new rows get their place and hashes in the transaction that
inserts them, after their tenant's head row is locked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from django.db import connection

from lab.audit.chain import GENESIS_HASH, ChainReport, row_hash, verify_chain
from lab.audit.models import AuditChainHead, AuditRecord


def heads_locked(tenants: Iterable[str]) -> dict[str, AuditChainHead]:
    """Each tenant's head, locked until the transaction ends (call it inside one).

    A write comes first, so the transaction holds the lock before it reads the head: the row
    lock on PostgreSQL, the database's write lock on SQLite (which refuses to upgrade a read
    lock that two writers hold). Sorted, so two writers of several tenants never deadlock.
    """
    table = connection.ops.quote_name(AuditChainHead._meta.db_table)
    heads = {}
    for tenant in sorted(set(tenants)):
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (tenant, seq, hash) VALUES (%s, 0, %s) "
                "ON CONFLICT (tenant) DO NOTHING",
                [tenant, GENESIS_HASH],
            )
            cursor.execute(f"UPDATE {table} SET seq = seq WHERE tenant = %s", [tenant])
        heads[tenant] = AuditChainHead.objects.get(tenant=tenant)
    return heads


def chain_new(records: Sequence[AuditRecord], heads: dict[str, AuditChainHead]) -> None:
    """Give unsaved records their places after their tenants' heads, and move the heads."""
    for record in records:
        head = heads[record.tenant]
        record.chain_seq, record.prev_hash = head.seq + 1, head.hash
        record.row_hash = row_hash(record)
        head.seq, head.hash = record.chain_seq, record.row_hash
    for head in heads.values():
        AuditChainHead.objects.filter(pk=head.pk).update(seq=head.seq, hash=head.hash)


def chained_rows(tenant: str) -> Iterator[AuditRecord]:
    """The tenant's rows in chain order, then any outside the chain."""
    rows = AuditRecord.objects.filter(tenant=tenant)
    yield from rows.filter(chain_seq__isnull=False).order_by("chain_seq").iterator(chunk_size=2000)
    yield from rows.filter(chain_seq__isnull=True).order_by("id").iterator(chunk_size=2000)


def chain_verify(tenant: str) -> ChainReport:
    head = AuditChainHead.objects.filter(tenant=tenant).values_list("seq", "hash").first()
    return verify_chain(tenant, chained_rows(tenant), head)


def chained_tenants() -> list[str]:
    """Every tenant with audit rows or a chain head."""
    rows = set(AuditRecord.objects.values_list("tenant", flat=True).distinct())
    return sorted(rows | set(AuditChainHead.objects.values_list("tenant", flat=True)))
