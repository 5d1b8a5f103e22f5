"""Operators declare the cluster's topology: the ``operators`` group gets the
permissions of Topology and HyperNode (``change_topology`` is what the API and the manifest
kinds of ``OPERATOR_KINDS`` check)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"
MODELS = ["topology", "hypernode"]
CODENAMES = [f"{verb}_{model}" for model in MODELS for verb in ("add", "change", "delete", "view")]


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
        ("dashboard", "0006_operators_manage_queues"),
        ("scheduler_core", "0016_topology"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
