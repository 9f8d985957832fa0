"""Lifting the write-once triggers, for throwaway test databases only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from lab.audit.write_once import TABLES, WriteOnce, execute


@contextmanager
def lifted(
    connection: BaseDatabaseWrapper, tables: tuple[WriteOnce, ...] = TABLES
) -> Iterator[None]:
    """The triggers dropped for the block and made again after it, in one transaction."""
    vendor = connection.vendor
    with transaction.atomic(using=connection.alias):
        for table in tables:
            execute(connection, table.remove(vendor))
        yield
        for table in tables:
            execute(connection, table.install(vendor))
