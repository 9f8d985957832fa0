from django.db import migrations


def open_existing_flags(apps, schema_editor):
    """Flagged turns stored before the queue existed get their case too (state open)."""
    AuditRecord = apps.get_model("audit", "AuditRecord")
    FlagCase = apps.get_model("operator", "FlagCase")
    flagged = AuditRecord.objects.filter(flagged=True, case__isnull=True).order_by("id")
    last = 0
    while batch := list(flagged.filter(id__gt=last).only("id", "tenant", "agent", "recorded_at")[:1000]):
        FlagCase.objects.bulk_create(
            [
                FlagCase(record_id=r.id, tenant=r.tenant, agent=r.agent, opened_at=r.recorded_at)
                for r in batch
            ],
            ignore_conflicts=True,
        )
        last = batch[-1].id

class Migration(migrations.Migration):
    dependencies = [("operator", "0001_initial")]

    operations = [migrations.RunPython(open_existing_flags, migrations.RunPython.noop)]
