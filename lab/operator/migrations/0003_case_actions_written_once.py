from django.db import migrations

# Every operator action is an audit entry: the database refuses to change one, whoever asks.
REFUSAL = "case actions are written once"
STATEMENTS = {
    "sqlite": [
        "CREATE TRIGGER case_action_written_once BEFORE UPDATE ON operator_caseaction "
        f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION case_action_refuse_update() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$",
        "CREATE TRIGGER case_action_written_once BEFORE UPDATE ON operator_caseaction "
        "FOR EACH ROW EXECUTE FUNCTION case_action_refuse_update()",
    ],
}
UNDO = {
    "sqlite": ["DROP TRIGGER case_action_written_once"],
    "postgresql": [
        "DROP TRIGGER case_action_written_once ON operator_caseaction",
        "DROP FUNCTION case_action_refuse_update()",
    ],
}


def refuse_updates(apps, schema_editor):
    for statement in STATEMENTS.get(schema_editor.connection.vendor, []):
        schema_editor.execute(statement)


def allow_updates(apps, schema_editor):
    for statement in UNDO.get(schema_editor.connection.vendor, []):
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("operator", "0002_open_existing_flags")]

    operations = [migrations.RunPython(refuse_updates, allow_updates)]
