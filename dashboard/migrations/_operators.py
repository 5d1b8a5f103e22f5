"""Granting the ``operators`` group a model's permissions, for the data migrations that give
operators a new kind of object. Its name starts with ``_``, so Django's migration loader does not
take it for a migration.

Permission rows are normally created after all migrations (post_migrate), so on a fresh database
they may not exist yet when a migration runs: ``create_permissions`` makes them first."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "operators"


def operators_grant(app_label: str, codenames: list[str]) -> migrations.RunPython:
    """The operation that adds ``codenames`` to the group, and takes them back when reversed."""

    def permissions(apps):
        Permission = apps.get_model("auth", "Permission")
        return Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)

    def grant(apps, schema_editor):
        for app_config in apps.get_app_configs():
            app_config.models_module = True
            create_permissions(app_config, apps=apps, verbosity=0)
            app_config.models_module = None
        group, _ = apps.get_model("auth", "Group").objects.get_or_create(name=GROUP)
        group.permissions.add(*permissions(apps))

    def revoke(apps, schema_editor):
        group = apps.get_model("auth", "Group").objects.filter(name=GROUP).first()
        if group is not None:
            group.permissions.remove(*permissions(apps))

    return migrations.RunPython(grant, revoke)
