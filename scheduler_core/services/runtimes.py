"""Each gang's expected runtime (``Gang.runtime_*``), kept as ``engine/runtimes.py`` rules.

- When a gang or its pods are written (``gang_submit``, ``manifests_apply``):
  ``gang_estimates_refresh`` computes its shape key, its declared figure (every pod declares
  ``duration_seconds``: the longest), its limit (its pods' shortest ``deadline_seconds``), the
  learned figure of its key and its queue's default, and stores the estimate and its source.
- When a gang finishes (``lifecycle.gangs_refresh``): ``estimates_learn`` refreshes the waiting
  gangs of its key, so the next of the same job is planned with the new runtime.

What is learned is read from the finished gangs in the database (their members' first start
and last end), the last two per key. A key includes the submitter and the query asks for the
submitter too, so a gang's estimate never reveals another submitter's runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.db.models import F, Max, Min, Q, Window
from django.db.models.functions import RowNumber

from scheduler_core.engine.model import GangPhase
from scheduler_core.engine.runtimes import LEARNED_FROM, estimate, learned_runtime, shape_key
from scheduler_core.models import Gang, LocalQueue, Member, Queue
from scheduler_core.models.gangs import WAITING_PHASES

_FIELDS = ("runtime_key", "runtime_estimate_s", "runtime_source", "runtime_limit_s")


def gang_estimates_refresh(gang_ids: Iterable[int]) -> int:
    """Compute and store the estimate of each gang of ``gang_ids``; how many there were."""
    gangs = list(Gang.objects.filter(id__in=list(gang_ids)).order_by("id"))
    if not gangs:
        return 0
    pods: defaultdict[int, list[tuple]] = defaultdict(list)
    for row in Member.objects.filter(gang_id__in=[g.pk for g in gangs]).values_list(
        "gang_id", "requests", "duration_seconds", "deadline_seconds"
    ):
        pods[row[0]].append(row[1:])
    for gang in gangs:
        own = pods[gang.pk]
        gang.runtime_key = shape_key(
            gang.submitter, gang.queue, gang.name, gang.min_member, [requests for requests, _, _ in own]
        )
        deadlines = [deadline for _, _, deadline in own if deadline is not None]
        gang.runtime_limit_s = min(deadlines) if deadlines else None
    learned = learned_runtimes({(g.submitter, g.runtime_key) for g in gangs})
    defaults = queue_defaults({(g.namespace, g.queue) for g in gangs})
    for gang in gangs:
        durations = [duration for _, duration, _ in pods[gang.pk]]
        declared = max(durations) if durations and None not in durations else None
        found = estimate(
            declared=declared,
            limit=gang.runtime_limit_s,
            learned=learned.get((gang.submitter, gang.runtime_key)),
            default=defaults.get((gang.namespace, gang.queue)),
        )
        gang.runtime_estimate_s = None if found is None else found.seconds
        gang.runtime_source = "" if found is None else found.source
    Gang.objects.bulk_update(gangs, _FIELDS)
    return len(gangs)


def estimates_learn(finished_ids: Iterable[int]) -> int:
    """After gangs finished: refresh the waiting gangs of their keys (same submitter)."""
    keys = set(
        Gang.objects.filter(id__in=list(finished_ids), phase=GangPhase.FINISHED.value)
        .exclude(runtime_key="")
        .values_list("submitter", "runtime_key")
    )
    if not keys:
        return 0
    match = Q()
    for submitter, key in keys:
        match |= Q(submitter=submitter, runtime_key=key)
    waiting = Gang.objects.filter(match, phase__in=WAITING_PHASES).values_list("id", flat=True)
    return gang_estimates_refresh(waiting)


def learned_runtimes(keys: set[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """(submitter, key) -> EASY++'s learned runtime, from each key's last two finished gangs of
    that submitter (runtime: its members' last end less their first start)."""
    if not keys:
        return {}
    match = Q()
    for submitter, key in keys:
        match |= Q(submitter=submitter, runtime_key=key)
    runs = (
        Gang.objects.filter(match, phase=GangPhase.FINISHED.value)
        .annotate(start=Min("members__started_at"), end=Max("members__finished_at"))
        .filter(start__isnull=False, end__isnull=False)
        .annotate(
            recent=Window(
                RowNumber(), partition_by=[F("submitter"), F("runtime_key")], order_by=F("end").desc()
            )
        )
        .filter(recent__lte=LEARNED_FROM)
        .values_list("submitter", "runtime_key", "start", "end")
    )
    found: defaultdict[tuple[str, str], list] = defaultdict(list)
    for submitter, key, start, end in runs:
        found[submitter, key].append((end, max(0.0, (end - start).total_seconds())))
    return {
        owner: value
        for owner, ends in found.items()
        if (value := learned_runtime([seconds for _, seconds in sorted(ends)])) is not None
    }


def queue_defaults(names: set[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """(namespace, declared queue) -> its default runtime: the queue's own (a LocalQueue's
    ClusterQueue's), else ``GANGSCHED_DEFAULT_RUNTIME_S``; missing when neither is set."""
    fallback = getattr(settings, "GANGSCHED_DEFAULT_RUNTIME_S", None)
    declared = {name for _, name in names}
    own = dict(
        Queue.objects.filter(name__in=declared, default_runtime_s__isnull=False).values_list(
            "name", "default_runtime_s"
        )
    )
    local = {
        (namespace, name): seconds
        for namespace, name, seconds in LocalQueue.objects.filter(
            name__in=declared, cluster_queue__default_runtime_s__isnull=False
        ).values_list("namespace", "name", "cluster_queue__default_runtime_s")
    }
    out = {}
    for namespace, name in names:
        seconds = local.get((namespace, name), own.get(name, fallback))
        if seconds is not None:
            out[namespace, name] = seconds
    return out
