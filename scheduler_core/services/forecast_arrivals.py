"""The recent submissions the forecast run hands the arrival model (``forecast/arrivals.py``).

Every gang created in the last ``GANGSCHED_FORECAST_ARRIVAL_WINDOW_S`` seconds, whatever it has
become since (waiting, running, finished, failed: a submission is a submission), except
provisional ones: its creation time, ``minMember``, its pods' count and one pod's requests, its
runtime estimate and that estimate's source as stored on the gang, its priority (the gang's, else
its pods' highest) and the queue the engine puts it in (a LocalQueue resolved to its
ClusterQueue, as the snapshot does). Two queries, read in the forecast run's own transaction so
that they and the snapshot are of one moment. The window is 0: no arrivals, the forecast
assumes nothing more is submitted (as before the model).
"""

from __future__ import annotations

from collections.abc import Collection

from django.conf import settings

from scheduler_core.engine.runtimes import DEFAULT
from scheduler_core.forecast import Arrivals, Submission
from scheduler_core.models import Gang, Member
from scheduler_core.snapshot.json_fields import from_epoch, ints
from scheduler_core.snapshot.queues import queues_read


def recent_arrivals(now: float, leave_out: Collection[str] = ()) -> Arrivals | None:
    """The submissions of the window before ``now``; None when the window is 0 or empty.
    ``leave_out``: gang keys that are no submission (a dry run's would-be gangs)."""
    window = settings.GANGSCHED_FORECAST_ARRIVAL_WINDOW_S
    if window <= 0:
        return None
    since, until = from_epoch(now - window), from_epoch(now)
    rows = list(
        Gang.objects.filter(created__gt=since, created__lte=until, provisional=False)
        .order_by("created", "id")
        .values_list(
            *("pk", "namespace", "name", "created", "min_member", "priority", "queue"),
            *("runtime_estimate_s", "runtime_source"),
        )
    )
    rows = [row for row in rows if f"{row[1]}/{row[2]}" not in leave_out]
    if not rows:
        return None
    pods: dict[int, list[tuple[dict, int]]] = {}
    members = Member.objects.filter(gang_id__in=[row[0] for row in rows]).order_by("id")
    for gang_id, requests, priority in members.values_list("gang_id", "requests", "priority"):
        pods.setdefault(gang_id, []).append((requests, priority))
    _queues, resolve = queues_read()
    submissions = []
    for pk, namespace, _name, created, min_member, priority, queue, estimate, source in rows:
        found = pods.get(pk)
        if not found:
            continue  # no pod yet: nothing the engine could place
        submissions.append(
            Submission(
                at=created.timestamp(),
                min_member=min_member,
                requests=ints(found[0][0]),
                pods=len(found),
                duration=estimate,
                source=source or DEFAULT,
                priority=priority if priority is not None else max(p for _r, p in found),
                queue=resolve(namespace, queue),
            )
        )
    return Arrivals(tuple(submissions), window) if submissions else None
