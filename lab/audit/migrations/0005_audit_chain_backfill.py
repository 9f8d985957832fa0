from django.db import migrations

from lab.audit.chain import GENESIS_HASH, row_hash


def chain_existing(apps, schema_editor):
    """Each tenant's rows stored before the chain, chained in the order they were stored."""
    records = apps.get_model("audit", "AuditRecord")
    heads = apps.get_model("audit", "AuditChainHead")
    tenants = records.objects.order_by().values_list("tenant", flat=True).distinct()
    for tenant in sorted(set(tenants)):
        seq, previous = 0, GENESIS_HASH
        for row in records.objects.filter(tenant=tenant).order_by("id").iterator(chunk_size=2000):
            seq += 1
            row.chain_seq, row.prev_hash = seq, previous
            row.row_hash = previous = row_hash(row)
            records.objects.filter(pk=row.pk).update(
                chain_seq=row.chain_seq, prev_hash=row.prev_hash, row_hash=row.row_hash
            )
        heads.objects.update_or_create(tenant=tenant, defaults={"seq": seq, "hash": previous})


def unchain(apps, schema_editor):
    apps.get_model("audit", "AuditRecord").objects.update(chain_seq=None, prev_hash="", row_hash="")
    apps.get_model("audit", "AuditChainHead").objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0004_audit_chain'),
    ]

    operations = [
        migrations.RunPython(chain_existing, unchain),
    ]
