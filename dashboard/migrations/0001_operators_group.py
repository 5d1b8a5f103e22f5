"""The ``operators`` group: sees every gang, and may retry and kill any (dashboard/api/permissions.py).

Permission rows are normally created after all migrations (post_migrate), so on a fresh database
they do not exist yet when this runs: ``create_permissions`` makes them first.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"
PERMISSIONS = {
    "scheduler_core": [
        "retry_gang",
        "kill_gang",
        "view_gang",
        "view_member",
        "view_node",
        "view_gangevent",
        "view_ganggroup",
        "view_schedulingcycle",
    ],
}


def create_group(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codenames in PERMISSIONS.items():
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        )


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("scheduler_core", "0004_gang_permissions_provisional"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
