"""The writes of ``POST /api/v1/gangs/``, one function for a submission and its dry run, and the
validated JSON as ``gang_submit``'s arguments."""

from __future__ import annotations

from django.db import transaction

from scheduler_core.models import Gang
from scheduler_core.services.groups import gang_group_join
from scheduler_core.services.submit import gang_submit


def submission_write(data: dict, arguments: dict) -> Gang:
    """The gang (``gang_submit``'s ``arguments``) and, when ``data`` names ``groups``, its gang
    group, in one transaction: a rejected group leaves no gang behind, a rejected gang no group.
    Without groups, ``gang_submit``'s own transaction, not a savepoint in another: two statements
    fewer. In a dry run both are savepoints of the transaction rolled back."""
    if not data.get("groups"):
        return gang_submit(**arguments)
    with transaction.atomic():
        gang = gang_submit(**arguments)
        gang_group_join(gang=gang, members=data["groups"], actor=arguments["actor"])
    return gang


def submit_arguments(data: dict, *, submitter: str, declaration: dict) -> dict:
    """The validated JSON as ``gang_submit``'s keyword arguments."""
    renames = {
        "totalNumber": "total_number",
        "minResources": "min_resources",
        "waitSeconds": "wait_seconds",
        "restartPolicy": "restart_policy",
        "topologyRequired": "topology_required",
        "topologyPreferred": "topology_preferred",
        "topologyName": "topology_name",
    }
    pod_renames = {"nodeSelector": "node_selector", "durationSeconds": "duration_seconds"}
    gang = {
        renames.get(k, k): v for k, v in data.items() if k not in ("namespace", "name", "minMember", "pods")
    }
    gang.pop("tasks", None)
    gang.pop("groups", None)
    return {
        "namespace": data["namespace"],
        "name": data["name"],
        "min_member": data["minMember"],
        "pods": [{pod_renames.get(k, k): v for k, v in pod.items()} for pod in data["pods"]],
        "submitter": submitter,
        "declaration": declaration,
        "source_format": "api",
        **gang,
    }
