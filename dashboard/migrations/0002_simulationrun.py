"""SimulationRun (trace replay runs), and the operators' right to start one (add_simulationrun).

Everybody signed in may view runs; only the ``operators`` group (dashboard/migrations/0001) may
start them. Permission rows are created here first, as 0001 does, because post_migrate has not
run yet on a fresh database.
"""

import django.db.models.deletion
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

GROUP = "operators"


def grant_operators(apps, schema_editor):
    app_config = apps.get_app_config("dashboard")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="dashboard", codename="add_simulationrun")
    )


def revoke_operators(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name=GROUP):
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="dashboard", codename="add_simulationrun")
        )


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0001_operators_group'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='SimulationRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=16)),
                ('progress', models.FloatField(default=0.0)),
                ('trace_name', models.CharField(max_length=255)),
                ('trace_text', models.TextField(blank=True)),
                ('cluster_spec', models.CharField(max_length=1000)),
                ('policies', models.JSONField(default=list)),
                ('results', models.JSONField(blank=True, null=True)),
                ('plots', models.JSONField(default=list)),
                ('error', models.TextField(blank=True)),
                ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created', '-id'],
                'constraints': [models.CheckConstraint(condition=models.Q(('progress__gte', 0.0), ('progress__lte', 1.0)), name='simulationrun_progress_0_1')],
            },
        ),
        migrations.RunPython(grant_operators, revoke_operators),
    ]
