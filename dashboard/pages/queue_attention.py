"""What an operator of a shared cluster looks for in the queues: which queue borrows, is at or
over its max, and which gangs wait in it, in the order the scheduler tries them.

Badges, per queue (its subtree's bound pods, ``queue_figures``; the ``pods`` count left out):

- ``borrowing``: it uses more than its guarantee of some resource (what it borrows from others);
- ``at max``: it uses all of its max of some resource (and some of it): it cannot grow, so its
  pending gangs wait for its own pods to end, whatever is free elsewhere;
- ``over quota``: it uses more than its max of some resource (the max was lowered below what
  its running pods hold, or they were bound by another scheduler): ``at max`` and more.

The waiting gangs (Pending or Scheduling, not provisional) of each leaf queue, in the order the
scheduler tries them within the queue (``engine/queue.py``): priority (the gang's, else the
highest of its active members'), then rank (creation plus its declared work, at most
``GANGSCHED_OVERTAKE_LIMIT_S``), creation, key; the gangs of a gang group take their group's
place together. For operators and viewers a position counts every gang waiting in the queue, as
the scheduler does; a user who does not see every gang (a submitter) is listed only their own,
each placed and counted among their own (as their forecasts' positions are): nothing counts or
places another submitter's work, and the explanations are redacted as everywhere else
(``scheduler_core/reads/redaction.py``). Two queries (the waiting gangs' active members, the
LocalQueues), whatever the number of gangs, and for a submitter one more for the keys the
explanations name.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Max
from django.db.models.functions import Coalesce

from dashboard.api.permissions import viewer_of
from scheduler_core.engine.quantity import format_quantity
from scheduler_core.engine.queue import declared_work
from scheduler_core.models import Gang, LocalQueue, Member
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES, waiting_q
from scheduler_core.reads.forecasts import duration_text, ordinal
from scheduler_core.reads.queue_figures import QueueFigures

HIDDEN_RESOURCES = {"pods"}
#: Gangs listed per queue on the Queues page; the rest are counted and linked.
LIST_LIMIT = 10
#: Queues the Overview card lists; the rest are on the Queues page.
CARD_LIMIT = 8


def queue_flags(entry: QueueFigures) -> list[dict]:
    """The queue's badges (see the module docstring), each with the resources behind it."""
    used, guarantee, max_ = entry.used, entry.queue.guarantee, entry.queue.max
    names = sorted(set(used) - HIDDEN_RESOURCES)

    def said(pairs) -> str:
        return ", ".join(f"{r} {format_quantity(r, int(a))}" for r, a in pairs)

    over = [(r, used[r] - max_[r]) for r in names if r in max_ and used[r] > max_[r]]
    full = [(r, used[r]) for r in names if r in max_ and used[r] and used[r] >= max_[r]]
    borrowed = [(r, used[r] - guarantee.get(r, 0)) for r in names if used[r] > guarantee.get(r, 0)]
    flags = []
    if over:
        flags.append({"flag": "over quota", "title": f"uses more than its max: {said(over)} above it"})
    elif full:
        flags.append({"flag": "at max", "title": f"uses all of its max of {', '.join(r for r, _ in full)}"})
    if borrowed:
        flags.append(
            {"flag": "borrowing", "title": f"uses more than its guarantee: {said(borrowed)} above it"}
        )
    return flags


def local_queues() -> dict[tuple[str, str], str]:
    """Kueue LocalQueues: (namespace, name) -> the ClusterQueue it stands for."""
    rows = LocalQueue.objects.values_list("namespace", "name", "cluster_queue__name")
    return {(namespace, name): target for namespace, name, target in rows}


def _waiting_gangs() -> list[dict]:
    """The waiting gangs with their active members' (requests, duration) and top priority (a
    gang without any has no pod to place: the engine has no unit for it either).

    Members are read grouped by gang, requests and duration, with their count and top priority:
    one row per distinct shape of a gang, not one per pod (at 10,000 gangs the rows per pod,
    each with its gang's columns, made the Queues page and the overview take most of a second)."""
    shapes = (
        Member.objects.filter(waiting_q("gang__"), gang__provisional=False, phase__in=ACTIVE_MEMBER_PHASES)
        .values("gang_id", "requests", duration=Coalesce("duration_seconds", "gang__runtime_estimate_s"))
        .annotate(count=Count("id"), top=Max("priority"))
        .values_list("gang_id", "requests", "duration", "count", "top")
    )  # the duration is what the engine counts on
    pods: dict[int, list] = defaultdict(list)
    top: dict[int, int] = {}
    for gang_id, requests, duration, count, priority in shapes:
        pods[gang_id].extend([(requests or {}, duration)] * count)
        top[gang_id] = max(top.get(gang_id, priority), priority)
    columns = ("id", "namespace", "name", "queue", "priority", "created", "group_id", "submitter")
    rows = Gang.objects.filter(id__in=list(pods)).values_list(*columns, "reason", "message")
    return [
        {
            "id": gang_id,
            "namespace": namespace,
            "name": name,
            "queue": queue,
            "priority": priority,
            "created": created,
            "group_id": group,
            "submitter": submitter,
            "reason": reason,
            "message": message,
            "top": top[gang_id],
            "pods": pods[gang_id],
        }  # fmt: skip
        for gang_id, namespace, name, queue, priority, created, group, submitter, reason, message in rows
    ]


def _sort_keys(gangs: list[dict]) -> dict[int, tuple]:
    """Each waiting gang's place within its queue, as ``Unit.sort_key`` orders units."""
    limit = settings.GANGSCHED_OVERTAKE_LIMIT_S
    units: dict[object, list[dict]] = defaultdict(list)
    for gang in gangs:
        units[("group", gang["group_id"]) if gang["group_id"] else gang["id"]].append(gang)
    keys = {}
    for members in units.values():
        created = min(g["created"].timestamp() for g in members)
        priority = max(g["priority"] if g["priority"] is not None else g["top"] for g in members)
        work = declared_work(pod for g in members for pod in g["pods"])
        rank = created + min(limit, work) if limit > 0 else created
        unit_key = min(f"{g['namespace']}/{g['name']}" for g in members)
        for g in members:
            keys[g["id"]] = (-priority, rank, created, unit_key)
    return keys


def waiting_by_queue(
    figures: dict[str, QueueFigures], user, *, now: datetime, local: dict | None = None
) -> dict[str, dict]:
    """Per queue of ``figures`` with gangs waiting in it that ``user`` may see: ``total`` and
    ``gangs``, in queue order, each with its ``position`` (from 1; gangs of one group share
    theirs) and ``ahead``, all counted among the gangs ``user`` may see (the module says why).
    ``local``: the Kueue LocalQueues, (namespace, name) -> ClusterQueue, when the caller read them."""
    if not figures:
        return {}
    gangs = _waiting_gangs()
    if not gangs:
        return {}
    if local is None:
        local = local_queues()
    keys = _sort_keys(gangs)
    viewer = viewer_of(user)
    if not viewer.sees_all:  # a submitter's lanes hold their own gangs only, and count only those
        gangs = [gang for gang in gangs if gang["submitter"] and gang["submitter"] == viewer.username]
    viewer.learn(*(gang["message"] for gang in gangs))
    lanes: dict[str, list[dict]] = defaultdict(list)
    for gang in gangs:
        name = local.get((gang["namespace"], gang["queue"]), gang["queue"])
        if name in figures:
            lanes[name].append(gang)
    out = {}
    for name, lane in lanes.items():
        lane.sort(key=lambda g: (keys[g["id"]], g["namespace"], g["name"]))
        shown, position, previous = [], 0, None
        for index, gang in enumerate(lane):
            if keys[gang["id"]][3] != previous:  # a new unit: the next place
                position, previous = index + 1, keys[gang["id"]][3]
            waited = (now - gang["created"]).total_seconds()
            shown.append(
                {
                    "namespace": gang["namespace"],
                    "name": gang["name"],
                    "key": f"{gang['namespace']}/{gang['name']}",
                    "position": position,
                    "ordinal": ordinal(position),
                    "ahead": position - 1,
                    "priority": -keys[gang["id"]][0],
                    "waited_s": waited,
                    "waited": duration_text(waited),
                    "reason": gang["reason"],
                    "message": viewer.message(gang["reason"], (gang["message"] or "").split("\n", 1)[0]),
                }
            )
        out[name] = {"total": len(lane), "gangs": shown}
    return out


def pending_lists(
    figures: dict[str, QueueFigures], user, *, now: datetime, local: dict | None = None
) -> dict[str, dict]:
    """Per queue: its badges and the first ``LIST_LIMIT`` of its waiting gangs ``user`` sees,
    with how many more there are, for the Queues page."""
    waiting = waiting_by_queue(figures, user, now=now, local=local)
    out = {}
    for name, entry in figures.items():
        lane = waiting.get(name, {"total": 0, "gangs": []})
        out[name] = {
            "flags": queue_flags(entry),
            "total": lane["total"],
            "gangs": lane["gangs"][:LIST_LIMIT],
            "more": max(0, len(lane["gangs"]) - LIST_LIMIT),
            "own": len(lane["gangs"]),
        }
    return out


def queues_needing_attention(figures: dict[str, QueueFigures], user, *, now: datetime) -> dict:
    """The Overview card: the queues that borrow, are at or over their max, or have gangs the
    user sees waiting, the longest wait first (then the flagged ones, by path), each with its
    oldest waiting gang (the longest waiting of those the user sees). ``rows``: the first
    ``CARD_LIMIT``; ``more``: how many others."""
    waiting = waiting_by_queue(figures, user, now=now)
    rows = []
    for name, entry in figures.items():
        flags = queue_flags(entry)
        gangs = waiting.get(name, {}).get("gangs", [])
        oldest = max(gangs, key=lambda g: g["waited_s"]) if gangs else None
        if not flags and oldest is None:
            continue
        rows.append(
            {"name": name, "path": entry.path, "flags": flags, "waiting": len(gangs), "oldest": oldest}
        )
    rows.sort(key=lambda row: (-(row["oldest"]["waited_s"] if row["oldest"] else -math.inf), row["path"]))
    return {"rows": rows[:CARD_LIMIT], "more": max(0, len(rows) - CARD_LIMIT), "declared": bool(figures)}
