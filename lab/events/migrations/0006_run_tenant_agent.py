from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0005_run_agent_under_test'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='tenant',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='run',
            name='agent',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
    ]
