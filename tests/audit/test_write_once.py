"""Written once means no UPDATE, no DELETE and no REPLACE, whoever asks the database.

SQLite's REPLACE deletes the conflicting row without firing delete triggers unless
`recursive_triggers` is on; both settings are tried. PostgreSQL's form of it is
INSERT … ON CONFLICT DO UPDATE, and it has TRUNCATE besides.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction

from lab.accounts.models import Tenant
from lab.accounts.roles import Role
from lab.audit.models import AuditRecord
from lab.audit.services import audit_records_store
from lab.operator.acting import act
from lab.operator.models import CaseAction
from lab.operator.states import Action
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded, member

pytestmark = pytest.mark.django_db
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's REPLACE")
postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's ON CONFLICT and TRUNCATE"
)


def columns(model: type) -> list[str]:
    return [field.column for field in model._meta.concrete_fields]


def refused(sql: str, params: list[object] | None = None) -> None:
    with (
        pytest.raises(DatabaseError, match="written once"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params or [])


def copy_with(model: type, row_id: int, verb: str, **changed: str) -> str:
    """`<verb> INTO table (cols) SELECT cols FROM table WHERE id = row_id`, some replaced."""
    table = model._meta.db_table
    names = columns(model)
    picked = [changed.get(name, name) for name in names]
    return (
        f"{verb} INTO {table} ({', '.join(names)}) "
        f"SELECT {', '.join(picked)} FROM {table} WHERE id = {row_id}"
    )


@pytest.fixture
def members() -> dict[Role, User]:
    demo = Tenant.objects.create(slug="demo")
    return {role: member(f"{role.value}1", demo, role) for role in Role}


@pytest.fixture
def stored(members) -> tuple[AuditRecord, CaseAction]:
    records = audit_records_store(graded(demo_calls()[0])).records
    flagged = next(r for r in records if r.flagged)
    action = act(
        tenant="demo",
        case_id=flagged.case.id,
        actor=members[Role.OPERATOR],
        action=Action.ACKNOWLEDGE,
        expected_version=0,
    )
    return flagged, action


def test_a_raw_delete_of_an_audit_row_or_a_case_action_is_refused(stored):
    record, action = stored
    refused("DELETE FROM audit_auditrecord WHERE id = %s", [record.id])
    refused("DELETE FROM operator_caseaction WHERE id = %s", [action.id])
    refused("UPDATE audit_auditrecord SET utterance = 'forged' WHERE id = %s", [record.id])
    assert AuditRecord.objects.filter(pk=record.pk).exists()
    assert CaseAction.objects.filter(pk=action.pk).exists()


@sqlite_only
@pytest.mark.parametrize("recursive", ["OFF", "ON"])
def test_sqlite_replace_can_neither_rewrite_an_audit_row_nor_a_case_actions_actor(
    stored, members, recursive
):
    record, action = stored
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA recursive_triggers = {recursive}")
    try:
        refused(copy_with(AuditRecord, record.id, "INSERT OR REPLACE", utterance="'forged'"))
        refused(copy_with(AuditRecord, record.id, "REPLACE", utterance="'forged'"))
        # A new id with the row's content key: REPLACE would delete the original.
        refused(copy_with(AuditRecord, record.id, "REPLACE", id="NULL", utterance="'forged'"))
        other = members[Role.ADMIN].id
        refused(copy_with(CaseAction, action.id, "INSERT OR REPLACE", actor_id=str(other)))
    finally:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA recursive_triggers = OFF")
    assert AuditRecord.objects.get(pk=record.pk).utterance == record.utterance
    assert CaseAction.objects.get(pk=action.pk).actor_id == action.actor_id


@postgresql_only
def test_postgresql_upsert_and_truncate_are_refused(stored, members):
    record, action = stored
    upsert = " ON CONFLICT (id) DO UPDATE SET utterance = 'forged'"
    refused(copy_with(AuditRecord, record.id, "INSERT") + upsert)
    actor = f" ON CONFLICT (id) DO UPDATE SET actor_id = {members[Role.ADMIN].id}"
    refused(copy_with(CaseAction, action.id, "INSERT") + actor)
    with connection.cursor() as cursor:
        # The test's own inserts left deferred key checks pending, which TRUNCATE refuses first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    refused("TRUNCATE audit_auditrecord CASCADE")
    refused("TRUNCATE operator_caseaction CASCADE")
    assert AuditRecord.objects.get(pk=record.pk).utterance == record.utterance
