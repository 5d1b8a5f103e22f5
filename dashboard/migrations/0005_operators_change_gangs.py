"""Operators may change every tenant's gangs and pods (``services/tenancy.py``): they get
``change_gang`` and ``change_member``. A submitter without them changes only their own."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"
CODENAMES = ["change_gang", "change_member"]


def _permissions(apps):
    Permission = apps.get_model("auth", "Permission")
    return Permission.objects.filter(content_type__app_label="scheduler_core", codename__in=CODENAMES)


def grant(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(*_permissions(apps))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=GROUP).first()
    if group is not None:
        group.permissions.remove(*_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0004_simulationrun_overtake_limit"),
        ("scheduler_core", "0010_member_submitter_gang_configured"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
