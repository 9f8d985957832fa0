import django.utils.timezone
from django.db import migrations, models

from lab.audit.write_once import AUDIT_RECORDS


def lift_written_once(apps, schema_editor):
    # The next migration writes every existing row's chain columns; 0006 refuses changes again.
    for statement in AUDIT_RECORDS.remove(schema_editor.connection.vendor):
        schema_editor.execute(statement)


def refuse_updates_again(apps, schema_editor):
    # Back to what 0001 made: updates refused, nothing more.
    vendor = schema_editor.connection.vendor
    install = AUDIT_RECORDS.install(vendor)
    for statement in install[:1] if vendor == "sqlite" else install[:2]:
        schema_editor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0003_daily_counts'),
    ]

    operations = [
        migrations.RunPython(lift_written_once, refuse_updates_again),
        migrations.CreateModel(
            name='AuditChainHead',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tenant', models.CharField(max_length=64, unique=True)),
                ('seq', models.PositiveBigIntegerField(default=0)),
                ('hash', models.CharField(max_length=64)),
            ],
        ),
        migrations.AddField(
            model_name='auditrecord',
            name='chain_seq',
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='auditrecord',
            name='prev_hash',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='auditrecord',
            name='row_hash',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AlterField(
            model_name='auditrecord',
            name='recorded_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddConstraint(
            model_name='auditrecord',
            constraint=models.UniqueConstraint(fields=('tenant', 'chain_seq'), name='audit_chain_place'),
        ),
    ]
