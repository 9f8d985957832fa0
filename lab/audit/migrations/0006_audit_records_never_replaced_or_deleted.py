from django.db import migrations

from lab.audit.write_once import AUDIT_RECORDS

# Written once, for good: UPDATE, DELETE (TRUNCATE on PostgreSQL) and SQLite's REPLACE are all
# refused. A later migration that remakes the table on SQLite must run this again.


def refuse_changes(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in [*AUDIT_RECORDS.remove(vendor), *AUDIT_RECORDS.install(vendor)]:
        schema_editor.execute(statement)


def allow_changes(apps, schema_editor):
    for statement in AUDIT_RECORDS.remove(schema_editor.connection.vendor):
        schema_editor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0005_audit_chain_backfill'),
    ]

    operations = [
        migrations.RunPython(refuse_changes, allow_changes),
    ]
