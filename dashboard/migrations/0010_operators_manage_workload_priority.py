"""Operators apply Kueue's WorkloadPriorityClass manifests and see the classes in the admin: the
``operators`` group gets the permissions of WorkloadPriorityClass (``change_workloadpriorityclass``
is what the API checks for the kind in ``OPERATOR_KINDS``). A class reorders everyone's gangs, as
a PriorityClass does, so a submitter may not apply one."""

from django.db import migrations

from dashboard.migrations._operators import operators_grant

CODENAMES = [f"{verb}_workloadpriorityclass" for verb in ("add", "change", "delete", "view")]


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0009_api_cache_scheduler_mark"),
        ("scheduler_core", "0024_workload_priority_class"),
    ]

    operations = [operators_grant("scheduler_core", CODENAMES)]
