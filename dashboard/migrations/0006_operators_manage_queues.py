"""Operators create, change, close and delete queues: the ``operators`` group gets
the permissions of Queue (``change_queue`` is what the API and the manifest kinds of
``OPERATOR_KINDS`` check), LocalQueue, ResourceFlavor and QueueAccess."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"
MODELS = ["queue", "localqueue", "resourceflavor", "queueaccess"]
CODENAMES = [f"{verb}_{model}" for model in MODELS for verb in ("add", "change", "delete", "view")]
CODENAMES.append("close_queue")


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
        ("dashboard", "0005_operators_change_gangs"),
        ("scheduler_core", "0014_queues"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
