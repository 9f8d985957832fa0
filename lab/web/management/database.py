"""The check every command that uses the lab's database makes before it starts."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def require_migrated() -> None:
    """Stop with what to run first when the database lacks the lab's tables."""
    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        raise CommandError(
            "the lab's database is not set up: run `make run` or `make test` once, "
            "or `.venv/bin/python manage.py migrate`"
        )
