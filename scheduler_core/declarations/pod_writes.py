"""Writing the pods a plan declares (``apply.py``'s step 3, after the gangs): each keeps who
submitted it and who owns it, a bound pod keeps its spec (Kubernetes' pod spec is immutable)
while its labels and annotations may change, and a gang never exceeds its total-number."""

from __future__ import annotations

from scheduler_core.models import Gang, Member

from . import validate as v
from .gang_writes import CONFIGURED, CREATED, UNCHANGED, keys_q
from .spec import Plan, PodSpec

#: Member fields a bound pod may still change (metadata); the others are its immutable spec.
METADATA_FIELDS = ("labels", "annotations", "preemptible")
#: Where a pod names its queue, in each format: (labels or annotations, key). The first found
#: wins; a gang's member is charged to its gang's queue whatever its own keys say.
QUEUE_KEYS = (
    ("labels", "kueue.x-k8s.io/queue-name"),
    ("annotations", "scheduling.volcano.sh/queue-name"),
    ("labels", "kai.scheduler/queue"),
    ("annotations", "yunikorn.apache.org/queue"),
    ("labels", "queue"),  # YuniKorn's older label
)


def pod_queue(pod: PodSpec) -> str:
    """The queue a pod names (Member.queue): the reader's, else its queue keys, else default."""
    if pod.queue:
        return pod.queue
    for where, key in QUEUE_KEYS:
        value = getattr(pod, where).get(key)
        if value:
            return value[:253]
    return "default"


def pods_write(plan: Plan, gangs: dict[str, Gang], submitter: str) -> dict[str, str]:
    """Create or update the pods; each keeps who owns it (``Member.owner``): the workload whose
    template made it (Job, vcjob, GangJob, ...), a Pod's controller ownerReference, or nobody
    (a bare Pod, which deleting removes for good), and who submitted it (``Member.submitter``)."""
    existing = {member.key: member for member in Member.objects.select_for_update().filter(keys_q(plan.pods))}
    total_number_check(plan, gangs, existing)
    # A pod's owner: its own (a controller ownerReference), else the object that declared it
    # (nobody for a Pod); pods the plan adds itself (YuniKorn placeholders) have none.
    owners = {
        pod.key: pod.owner or ("" if item.object_name.startswith("pod/") else item.object_name)
        for item in plan.loaded
        for pod in item.pods
    }
    for key, pod in plan.pods.items():
        owners.setdefault(key, pod.owner or "")
    statuses, new = {}, []
    for key, pod in plan.pods.items():
        gang = gangs.get(pod.gang.key) if pod.gang else None
        fields = {**pod.member_fields(), "queue": pod_queue(pod)}
        member = existing.get(key)
        if member is None:
            new.append(
                Member(
                    namespace=pod.namespace,
                    name=pod.name,
                    gang=gang,
                    submitter=submitter,
                    owner=owners[key],
                    **fields,
                )
            )
            statuses[key] = CREATED
            continue
        if member.gang_id != (gang.pk if gang else None):
            was = f"gang {member.gang.key}" if member.gang else "no gang"
            raise v.DeclarationError(pod.field, f"pod {key} already exists with {was}; delete it first")
        if member.owner != owners[key]:  # a row older than owners, or a pod adopted by a controller
            Member.objects.filter(pk=member.pk).update(owner=owners[key])
        changed = [name for name, value in fields.items() if getattr(member, name) != value]
        if not changed:
            statuses[key] = UNCHANGED
            continue
        spec_changes = [name for name in changed if name not in METADATA_FIELDS]
        if spec_changes and (member.node or member.phase != "Pending"):
            raise v.DeclarationError(
                pod.field,
                f"pod {key} is already bound: its {', '.join(spec_changes)} cannot change (delete it first)",
            )
        for name in changed:
            setattr(member, name, fields[name])
        member.save(update_fields=[*changed, "updated"])
        statuses[key] = CONFIGURED
    Member.objects.bulk_create(new)
    for gang in gangs.values():
        if gang.provisional:
            hint = (gang.declaration.get("provisional") or {}).get("min_available")
            count = gang.members.count()
            if not hint and count > gang.min_member:
                Gang.objects.filter(pk=gang.pk).update(min_member=count)
                gang.min_member = count
    return statuses


def total_number_check(plan: Plan, gangs: dict[str, Gang], existing: dict[str, Member]) -> None:
    """A gang's pods that exist now (its Member rows: a deleted bare pod has none, a pod its
    workload recreates keeps its row) plus the new ones must not exceed total-number, so the
    replacement of a deleted bare member (a new name) joins in its place."""
    for key, members in plan.pods_by_gang.items():
        gang = gangs.get(key)
        if gang is None or gang.total_number is None:
            continue
        others = Member.objects.filter(gang=gang).exclude(keys_q(p.key for p in members)).count()
        if others + len(members) > gang.total_number:
            raise v.DeclarationError(
                members[-1].field,
                f"gang {key} expects {gang.total_number} members in all (total-number), "
                f"but would have {others + len(members)}",
            )
