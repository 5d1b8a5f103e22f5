"""YuniKorn applications across the pods of one apply: the gang group and the placeholders.

``yunikorn.pod_gang`` reads one pod; what depends on the application as a whole is decided here,
once every pod of the apply is read, and against what earlier applies declared:

- the gang group ``<namespace>/<applicationId>`` lists every task group's gang, and the
  application's own gang (its pods outside task groups) once it exists, whichever pod carried
  the definition;
- the first pod carrying the definition reserves every task group's capacity at once, as
  YuniKorn's shim creates the application's placeholder pods when it first sees the
  application: one placeholder per member a task group still lacks (``minMember`` less the real
  members applied with it), requesting the task group's ``minResource`` with its node selector,
  tolerations and affinity. Real members later take their places (``services/placeholders.py``).
  A placeholder is a Member row without a pod; on Kubernetes the backend creates its pod, bound,
  when the engine places it (``cluster/kube/placeholder_pods.py``).
"""

from __future__ import annotations

from collections import defaultdict

from scheduler_core.models import Gang
from scheduler_core.specs.yunikorn import PLACEHOLDER, SOURCE

from . import validate as v
from .spec import GangRef, GangSpec, PodSpec
from .yunikorn import TASK_GROUP_NAME


def applications_plan(
    declared: dict[str, GangSpec], pods: dict[str, PodSpec], pods_by_gang: dict[str, list[PodSpec]]
) -> None:
    """Group each application's gangs and add the placeholders of new task groups to the plan."""
    apps: dict[tuple[str, str], list[GangSpec]] = defaultdict(list)
    for spec in declared.values():
        if spec.source_format == SOURCE and spec.application:
            apps[spec.namespace, spec.application].append(spec)
    for (namespace, app), specs in apps.items():
        names = [spec.name for spec in specs]
        existing = set(
            Gang.objects.filter(namespace=namespace, name__in=[*names, app]).values_list("name", flat=True)
        )
        keys = sorted({spec.key for spec in specs} | ({f"{namespace}/{app}"} if app in existing else set()))
        for spec in specs:
            if len(keys) > 1:
                spec.group, spec.group_key = keys, f"{namespace}/{app}"
        priority = _defining_priority(pods.values(), app)
        for spec in specs:
            if "taskGroup" in spec.declaration and spec.name not in existing:
                for placeholder in _placeholders(spec, len(pods_by_gang.get(spec.key, ())), priority):
                    if placeholder.key in pods:
                        raise v.DeclarationError(
                            pods[placeholder.key].field,
                            f"pod {placeholder.key} has the name of a placeholder of task group "
                            f"{spec.declaration['taskGroup']['name']!r}",
                        )
                    pods[placeholder.key] = placeholder
                    pods_by_gang[spec.key].append(placeholder)


def _defining_priority(pods, app: str) -> int:
    """Placeholders take the priority of the pod that defined them (YuniKorn: the originator's)."""
    for pod in pods:
        ref = pod.gang
        if ref is not None and ref.spec is not None and ref.spec.application == app:
            return pod.priority
    return 0


def _placeholders(spec: GangSpec, real: int, priority: int) -> list[PodSpec]:
    group = spec.declaration["taskGroup"]
    per_member = v.resources(group.get("minResource"), f"{spec.field}.minResource")
    out = []
    for index in range(max(0, spec.min_member - real)):
        name = v.dns_subdomain(f"tg-{spec.name}-{index}", f"{spec.field}.name")
        out.append(
            PodSpec(
                namespace=spec.namespace,
                name=name,
                field=spec.field,
                gang=GangRef(spec.namespace, spec.name, SOURCE, spec.field),
                requests=dict(per_member),
                priority=priority,
                node_selector=dict(spec.member_node_selector),
                tolerations=list(spec.member_tolerations),
                affinity=list(spec.member_affinity),
                labels={"applicationId": spec.application, "queue": spec.queue, "placeholder": "true"},
                annotations={PLACEHOLDER: "true", TASK_GROUP_NAME: group["name"]},
            )
        )
    return out
