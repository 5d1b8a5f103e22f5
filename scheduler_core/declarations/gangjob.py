"""gangsched's own batch job, in the kube-batch / Volcano style: gangsched creates its pods.

| key (``gangsched.io/v1`` ``GangJob``) | gangsched field | default |
|---|---|---|
| ``spec.tasks[]`` ``name`` / ``replicas`` / ``template`` | pods ``<job>-<task>-<i>`` | replicas 1 |
| ``spec.minAvailable`` | min_member | all the tasks' replicas |
| (sum of replicas) | total_number | - |
| ``spec.priority`` / ``spec.priorityClassName`` | priority (gang and pods) | none |
| ``spec.nodeSelector`` | every pod's nodeSelector (the template's keys win) | none |
| ``spec.restartPolicy`` | restart_policy | RestartGangWhenBelowMin |
| ``spec.queue``, ``spec.mode``, ``spec.style`` | queue, mode, style | default, Strict, Hard |
| ``spec.placement`` | placement | binpack |
| ``spec.scheduleTimeoutSeconds`` | wait_seconds | 600 s |
"""

from __future__ import annotations

from collections.abc import Sequence

from . import validate as v
from .documents import Manifest
from .spec import GangRef, GangSpec, Loaded
from .workloads import PodReader, object_meta, owner_ask, pod_spec, priority_of

GROUP = "gangsched.io"
DEFAULT_WAIT_SECONDS = 600.0
SOURCE = "gangjob"


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, _ = object_meta(manifest)
    spec_field = v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    priority = priority_of(spec, spec_field)
    node_selector = v.string_map(spec.get("nodeSelector"), v.join(spec_field, "nodeSelector"))
    ref = GangRef(namespace, name, SOURCE, manifest.name_field)
    tasks_field = v.join(spec_field, "tasks")
    tasks = v.sequence(spec.get("tasks"), tasks_field)
    if not tasks:
        raise v.DeclarationError(tasks_field, "a GangJob needs at least one task")
    pods, seen = [], set()
    for index, task in enumerate(tasks):
        where = v.join(tasks_field, index)
        task = v.mapping(task, where, optional=False)
        task_name = v.dns_label(task.get("name"), v.join(where, "name"))
        if task_name in seen:
            raise v.DeclarationError(v.join(where, "name"), f"task {task_name!r} is declared twice")
        seen.add(task_name)
        replicas = v.member_count(task.get("replicas", 1), v.join(where, "replicas"), minimum=0)
        template_field = v.join(where, "template")
        template = v.mapping(task.get("template"), template_field, optional=False)
        metadata = v.mapping(template.get("metadata"), v.join(template_field, "metadata"))
        pod = dict(v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False))
        pod["nodeSelector"] = {
            **node_selector,
            **v.mapping(pod.get("nodeSelector"), v.join(template_field, "spec", "nodeSelector")),
        }
        if priority is not None and "priority" not in pod and "priorityClassName" not in pod:
            pod["priority"] = priority
        for replica in range(replicas):
            pods.append(
                pod_spec(
                    namespace=namespace,
                    name=f"{name}-{task_name}-{replica}",
                    metadata=metadata,
                    spec=pod,
                    field=template_field,
                    readers=readers,
                    name_field=v.join(manifest.path, "metadata", "name"),
                    gang=ref,
                )
            )
        if len(pods) > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
            raise v.DeclarationError(tasks_field, "too many pods in one GangJob")
    total = len(pods)
    min_member = v.min_available(spec.get("minAvailable"), v.join(spec_field, "minAvailable"), total)
    timeout = spec.get("scheduleTimeoutSeconds")
    gang = GangSpec(
        namespace=namespace,
        name=name,
        min_member=min_member,
        total_number=total,
        priority=priority,
        queue=v.text(spec.get("queue", "default"), v.join(spec_field, "queue"), max_length=63),
        queue_field=v.join(spec_field, "queue"),
        mode=v.mode(spec.get("mode", "Strict"), v.join(spec_field, "mode")),
        style=v.style(spec.get("style", "Hard"), v.join(spec_field, "style")),
        placement=v.placement(spec.get("placement", "binpack"), v.join(spec_field, "placement")),
        restart_policy=v.restart_policy(
            spec.get("restartPolicy", "RestartGangWhenBelowMin"), v.join(spec_field, "restartPolicy")
        ),
        wait_seconds=DEFAULT_WAIT_SECONDS
        if timeout is None
        else v.wait_seconds(timeout, v.join(spec_field, "scheduleTimeoutSeconds")),
        source_format=SOURCE,
        declaration=manifest.obj,
        field=manifest.name_field,
    )
    owner_ask(manifest, pods)  # KAI's / Kueue's topology annotations on the GangJob itself
    return Loaded(object_name=f"gangjob.{GROUP}/{name}", gangs=[gang], pods=pods)
