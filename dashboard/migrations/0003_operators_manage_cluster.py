"""Operators may apply Node and PriorityClass manifests (``OPERATOR_KINDS``): they get the
``change_node`` and ``change_priorityclass`` permissions; seeing every gang no longer implies it."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"
CODENAMES = ["change_node", "change_priorityclass"]


def grant(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="scheduler_core", codename__in=CODENAMES)
    )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=GROUP).first()
    if group is not None:
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="scheduler_core", codename__in=CODENAMES)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0002_simulationrun"),
        ("scheduler_core", "0007_kubernetes_mirror"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
