"""The database's own refusal to change, replace or delete a written-once row, per vendor.

UPDATE is refused by a BEFORE UPDATE trigger, DELETE by a BEFORE DELETE one (and TRUNCATE on
PostgreSQL). SQLite's `INSERT OR REPLACE` deletes the conflicting row without firing delete
triggers (unless `recursive_triggers` is on, which a writer chooses), so a BEFORE INSERT
trigger refuses any insert that names an existing row's id or unique key. PostgreSQL has no
REPLACE; its `INSERT … ON CONFLICT DO UPDATE` is an update and the update trigger refuses it.
Anyone holding the database file can drop a trigger: the audit rows' hash chain
(lab.audit.chain) is what shows that they did.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.backends.base.base import BaseDatabaseWrapper


@dataclass(frozen=True)
class WriteOnce:
    """One table whose rows are written once; `unique` are its unique columns besides id."""

    table: str
    name: str  # the triggers' prefix; `<name>_written_once` is the update trigger
    refusal: str
    unique: tuple[str, ...] = ()

    def install(self, vendor: str) -> list[str]:
        if vendor == "sqlite":
            return self._sqlite()
        if vendor == "postgresql":
            return self._postgresql()
        return []

    def remove(self, vendor: str) -> list[str]:
        names = [f"{self.name}_{kind}" for kind in ("written_once", "no_delete", "no_replace")]
        if vendor == "sqlite":
            return [f"DROP TRIGGER IF EXISTS {name}" for name in names]
        if vendor == "postgresql":
            return [
                *(f"DROP TRIGGER IF EXISTS {name} ON {self.table}" for name in names[:2]),
                f"DROP TRIGGER IF EXISTS {self.name}_no_truncate ON {self.table}",
                f"DROP FUNCTION IF EXISTS {self.name}_refuse_update()",
            ]
        return []

    def _sqlite(self) -> list[str]:
        raise_ = f"BEGIN SELECT RAISE(ABORT, '{self.refusal}'); END"
        conflict = " OR ".join(f"{c} = NEW.{c}" for c in ("id", *self.unique))
        return [
            f"CREATE TRIGGER {self.name}_written_once BEFORE UPDATE ON {self.table} {raise_}",
            f"CREATE TRIGGER {self.name}_no_delete BEFORE DELETE ON {self.table} {raise_}",
            f"CREATE TRIGGER {self.name}_no_replace BEFORE INSERT ON {self.table} "
            f"WHEN EXISTS (SELECT 1 FROM {self.table} WHERE {conflict}) {raise_}",
        ]

    def _postgresql(self) -> list[str]:
        # The function's name is the one the update trigger has used since the first migration.
        function = f"{self.name}_refuse_update()"
        return [
            f"CREATE OR REPLACE FUNCTION {function} RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{self.refusal}'; END $$",
            f"CREATE TRIGGER {self.name}_written_once BEFORE UPDATE ON {self.table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}",
            f"CREATE TRIGGER {self.name}_no_delete BEFORE DELETE ON {self.table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}",
            f"CREATE TRIGGER {self.name}_no_truncate BEFORE TRUNCATE ON {self.table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {function}",
        ]


AUDIT_RECORDS = WriteOnce(
    table="audit_auditrecord",
    name="audit_record",
    refusal="audit records are written once; record a correction instead",
    unique=("content_key",),
)
CASE_ACTIONS = WriteOnce(
    table="operator_caseaction", name="case_action", refusal="case actions are written once"
)
TABLES = (AUDIT_RECORDS, CASE_ACTIONS)


def execute(connection: BaseDatabaseWrapper, statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
