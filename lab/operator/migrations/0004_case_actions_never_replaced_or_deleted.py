from django.db import migrations

from lab.audit.write_once import CASE_ACTIONS

# 0003 refused updates only: SQLite's INSERT OR REPLACE rewrote an action's actor and a raw
# DELETE removed one. Now UPDATE, DELETE (TRUNCATE on PostgreSQL) and REPLACE are refused.


def refuse_changes(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in [*CASE_ACTIONS.remove(vendor), *CASE_ACTIONS.install(vendor)]:
        schema_editor.execute(statement)


def refuse_updates_only(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in CASE_ACTIONS.remove(vendor):
        schema_editor.execute(statement)
    # 0003's update trigger alone.
    install = CASE_ACTIONS.install(vendor)
    for statement in install[:1] if vendor == "sqlite" else install[:2]:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("operator", "0003_case_actions_written_once")]

    operations = [migrations.RunPython(refuse_changes, refuse_updates_only)]
