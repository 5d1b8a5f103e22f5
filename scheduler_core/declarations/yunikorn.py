"""Apache YuniKorn gang scheduling: task groups declared in pod annotations.

Each task group of an application (pods with the same ``applicationId`` label) is a gang named
``<applicationId>-<task group>``. Any pod of the application may carry the definition
(``task-groups``), also one in no task group: the "originator" (a Spark driver, a job's first
pod). Such pods belong to the application's own gang, named ``<applicationId>``, scheduled
once the task groups' capacity is reserved, as YuniKorn schedules an application's ordinary
pods only once it is Running. The gangs of one application form one gang group
(``<namespace>/<applicationId>``), and the first pod carrying the definition reserves every
task group's capacity with placeholders (``yunikorn_apps.py``).

| key | gangsched field | default |
|---|---|---|
| annotation ``yunikorn.apache.org/task-group-name`` | the pod's gang | none: the application's gang |
| annotation ``yunikorn.apache.org/task-groups`` (JSON list) | the application's gangs | - |
| task group ``name`` / ``minMember`` | gang name / min_member | both required |
| task group ``minResource`` | min_resources = minMember x minResource | none |
| task group ``nodeSelector``, ``tolerations``, ``affinity`` | members that set none get these | none |
| ``schedulingPolicyParameters`` ``placeholderTimeoutInSeconds`` | wait_seconds | 900 s (YuniKorn's 15 min) |
| ``schedulingPolicyParameters`` ``gangSchedulingStyle`` (Soft/Hard) | style | Soft |
| label ``queue`` (or ``yunikorn.apache.org/queue``; ``ml`` is ``root.ml``) | queue | ``default`` |
| label ``applicationId`` (or ``yunikorn.apache.org/app-id``) | application, gang names, group | required |
"""

from __future__ import annotations

import json
from typing import Any

from scheduler_core.specs.yunikorn import PREFIX, SOURCE

from . import node_constraints
from . import validate as v
from .pod_queues import yunikorn_queue
from .spec import GangRef, GangSpec

TASK_GROUP_NAME, TASK_GROUPS = PREFIX + "task-group-name", PREFIX + "task-groups"
POLICY = PREFIX + "schedulingPolicyParameters"
APP_LABELS = ("applicationId", PREFIX + "app-id")
DEFAULT_WAIT_SECONDS = 900.0
DEFAULT_STYLE = "Soft"


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if TASK_GROUP_NAME not in annotations and TASK_GROUPS not in annotations:
        return None
    app, app_field = _application(labels, annotations, field)
    annotations_field = v.join(field, "annotations")
    if TASK_GROUP_NAME in annotations:
        group_name = v.text(
            annotations[TASK_GROUP_NAME], v.join(annotations_field, TASK_GROUP_NAME), max_length=63
        )
        name, name_field = _gang_name(app, group_name, app_field), v.join(annotations_field, TASK_GROUP_NAME)
    else:  # the originator, or another pod of the application outside its task groups
        group_name, name = None, v.dns_subdomain(app, app_field)
        name_field = v.join(annotations_field, TASK_GROUPS)
    ref = GangRef(namespace, name, SOURCE, name_field)
    if TASK_GROUPS not in annotations:
        return ref  # declared by another pod of the application (the driver, usually)
    wait, style = _policy(annotations.get(POLICY, ""), v.join(annotations_field, POLICY))
    named = yunikorn_queue(labels, annotations, field)
    queue, queue_field = named if named else ("default", "")
    gangs = _task_groups(
        namespace, app, app_field, annotations[TASK_GROUPS], v.join(annotations_field, TASK_GROUPS)
    )
    if group_name is None:
        if any(gang.name == name for gang in gangs):
            raise v.DeclarationError(
                app_field, f"application gang {name!r} has the name of one of its task groups' gangs"
            )
        gangs.append(
            GangSpec(
                namespace=namespace,
                name=name,
                min_member=1,
                source_format=SOURCE,
                declaration={"applicationId": app, "outsideTaskGroups": True},
                field=name_field,
            )
        )
    for gang in gangs:
        gang.wait_seconds, gang.style, gang.queue, gang.application = wait, style, queue, app
        gang.queue_field = queue_field
        gang.declaration["schedulingPolicyParameters"] = annotations.get(POLICY, "")
    own = [gang for gang in gangs if gang.name == name]
    if not own:
        raise v.DeclarationError(name_field, f"task group {group_name!r} is not in {TASK_GROUPS}")
    ref.spec = own[0]
    ref.siblings = [gang for gang in gangs if gang.name != name]
    return ref


def _application(labels: dict[str, str], annotations: dict[str, str], field: str) -> tuple[str, str]:
    for key in APP_LABELS:
        for kind, values in (("labels", labels), ("annotations", annotations)):
            if key in values:
                return values[key], v.join(field, kind, key)
    raise v.DeclarationError(
        v.join(field, "labels", "applicationId"),
        "a pod with YuniKorn task-group annotations needs the applicationId label",
    )


def _gang_name(app: str, group_name: str, field: str) -> str:
    return v.dns_subdomain(f"{app}-{group_name}", field)


def _policy(text: str, field: str) -> tuple[float, str]:
    """``placeholderTimeoutInSeconds=30 gangSchedulingStyle=Hard``; unknown keys are ignored,
    as YuniKorn does."""
    wait, style = DEFAULT_WAIT_SECONDS, DEFAULT_STYLE
    for part in text.split():
        key, sep, value = part.partition("=")
        if not sep:
            raise v.DeclarationError(field, f"{part!r} is not key=value")
        if key == "placeholderTimeoutInSeconds":
            wait = v.wait_seconds(value, f"{field}.placeholderTimeoutInSeconds", text_ok=True)
        elif key == "gangSchedulingStyle":
            style = v.style(value, f"{field}.gangSchedulingStyle")
    return wait, style


def _task_groups(namespace: str, app: str, app_field: str, text: str, field: str) -> list[GangSpec]:
    try:
        groups = json.loads(text, parse_constant=lambda name: name)
    except ValueError as error:
        raise v.DeclarationError(field, f"not a JSON list of task groups: {error}") from None
    if not isinstance(groups, list) or not groups:
        raise v.DeclarationError(field, "must be a non-empty JSON list of task groups")
    gangs, seen = [], set()
    for index, group in enumerate(groups):
        where = f"{field}[{index}]"
        group = v.mapping(group, where, optional=False)
        group_name = v.text(group.get("name"), f"{where}.name", max_length=63)
        if group_name in seen:
            raise v.DeclarationError(f"{where}.name", f"task group {group_name!r} is declared twice")
        seen.add(group_name)
        gangs.append(_task_group(namespace, app, app_field, group_name, group, where))
    return gangs


def _task_group(
    namespace: str, app: str, app_field: str, group_name: str, group: dict[str, Any], where: str
) -> GangSpec:
    min_member = v.member_count(group.get("minMember"), f"{where}.minMember")
    per_member = v.resources(group.get("minResource"), f"{where}.minResource")
    total: dict[str, int] = {}
    v.resources_add(total, {resource: amount * min_member for resource, amount in per_member.items()}, where)
    return GangSpec(
        namespace=namespace,
        name=_gang_name(app, group_name, app_field),
        min_member=min_member,
        min_resources=total,
        source_format=SOURCE,
        declaration={"applicationId": app, "taskGroup": group},
        field=where,
        member_node_selector=v.string_map(group.get("nodeSelector"), f"{where}.nodeSelector"),
        member_tolerations=node_constraints.tolerations(group.get("tolerations"), f"{where}.tolerations"),
        member_affinity=node_constraints.node_affinity_terms(group.get("affinity"), f"{where}.affinity"),
    )
