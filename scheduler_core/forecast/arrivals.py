"""The arrival model: the gangs a forecast assumes will be submitted after ``now``.

Without it a forecast assumes that nothing more is submitted, and under the least-work-first
order that makes it early: gangs submitted later with less work (within the overtaking limit)
or a higher priority pass a big waiting gang. The model is the plainest one that keeps each
queue's own load: **the recent past repeats**. ``Arrivals`` holds the submissions seen in the
last ``window_s`` seconds before ``now`` (every queue's); each is assumed to come again at its
time plus ``window_s`` (and, with ``repeats`` > 1, plus twice ``window_s``, and so on), with the
same queue, priority, shape (pods, requests, ``min_member``) and estimated runtime (and the
source of that estimate, so its true runtime in a run is drawn as a real gang's would be). The
same rate, the same mix, shifted forward in time. By default (``repeats`` 1) only the next
``window_s`` is assumed to look like the last one, and nothing is assumed beyond it: repeating
further assumes the load lasts, and an overloaded queue's recent past, repeated until the
overtaking limit, keeps a big gang waiting to the end of that limit in every forecast.

Only copies the engine's order could put ahead of some waiting gang are added: a copy whose
(priority, rank) sorts after every waiting unit's (``engine/queue.py``: rank is the creation
time plus the work, bounded by the overtaking limit) can pass no one. So the copies end at the
latest waiting unit's rank when no submission has a higher priority than the lowest waiting
one; otherwise they go on up to the horizon. At most ``max_gangs`` copies,
the earliest first. What this leaves out: a copy that passes no one may still take room that a
waiting gang would have backfilled into later; the model ignores it.

A copy is *delivered* to a run at its time rounded up on a grid that widens with the distance
from ``now`` (a ``resolution`` share of it, as a run takes the ends near one another together:
``future.py``), so a run gains tens of cycles, not one per copy; its ``created`` is its own
time, so its place in the order is exact. Copies are gangs of the namespace ``ARRIVAL_NAMESPACE``;
``forecast`` reports the snapshot's gangs only, so no copy ever appears in a result.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.model import DEFAULT_QUEUE, Gang, Pod, Snapshot
from scheduler_core.engine.queue import build_units, declared_work, pods_by_gang
from scheduler_core.engine.runtimes import DEFAULT

#: The namespace of the copies (no Kubernetes namespace may start with "~").
ARRIVAL_NAMESPACE = "~arrival"
#: Copies one forecast takes at most.
MAX_GANGS = 2000


@dataclass(frozen=True, slots=True)
class Submission:
    """A gang submitted at ``at`` (on the snapshot's timeline): what the model repeats."""

    at: float
    min_member: int
    requests: Mapping[str, int]  # one pod's
    pods: int = 0  # its pods (0: ``min_member``)
    duration: float | None = None  # the estimated runtime its pods carry (None: no estimate)
    source: str = DEFAULT  # the estimate's source (``engine.runtimes``)
    priority: int = 0
    queue: str = DEFAULT_QUEUE


@dataclass(frozen=True)
class Arrivals:
    """``submissions``: those of the last ``window_s`` seconds before the forecast's ``now``."""

    submissions: Sequence[Submission]
    window_s: float
    repeats: int = 1  # how many windows ahead the past repeats (1: the next window_s only)
    max_gangs: int = MAX_GANGS

    def __post_init__(self) -> None:
        if not self.window_s > 0:
            raise ValueError(f"an arrival window must be positive: {self.window_s!r}")


@dataclass
class Planned:
    """The copies of one forecast: (delivery time, gang, its pods) in time order, and their
    runtime sources."""

    events: list[tuple[float, Gang, tuple[Pod, ...]]] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def snapshot(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with every copy waiting in it (the order a run's window sorts by)."""
        if not self.events:
            return snapshot
        gangs = tuple(gang for _t, gang, _pods in self.events)
        pods = tuple(pod for _t, _gang, pods in self.events for pod in pods)
        return dataclasses.replace(snapshot, gangs=snapshot.gangs + gangs, pods=snapshot.pods + pods)


def plan(
    arrivals: Arrivals | None,
    snapshot: Snapshot,
    now: float,
    config: EngineConfig,
    *,
    horizon: float,
    tick: float,
    resolution: float,
) -> Planned:
    """The copies of ``arrivals`` that could pass a waiting unit of ``snapshot``, up to ``horizon``."""
    out = Planned()
    recent = [s for s in (arrivals.submissions if arrivals else ()) if now - arrivals.window_s < s.at <= now]
    units = build_units(snapshot, config, {g.key: g for g in snapshot.gangs}, pods_by_gang(snapshot))
    if not recent or not units:
        return out
    worst = max((-unit.priority, unit.rank) for unit in units)
    last_rank = max(unit.rank for unit in units)
    bottom = min(unit.priority for unit in units)
    recent.sort(key=lambda s: s.at)
    limit = config.overtake_limit_s
    for k in range(1, arrivals.repeats + 1):
        shift = k * arrivals.window_s
        if recent[0].at + shift > horizon:
            break
        if recent[0].at + shift > last_rank and all(s.priority <= bottom for s in recent):
            break  # every later copy is created after the last rank: it passes no one
        for n, submission in enumerate(recent):
            created = submission.at + shift
            if created > horizon or len(out.events) >= arrivals.max_gangs:
                break
            work = declared_work([(submission.requests, submission.duration)] * _size(submission))
            rank = created + min(limit, work) if limit > 0 else created
            if (-submission.priority, rank) >= worst:
                continue
            gang, pods = _copy(submission, f"a{k}-{n}", created)
            out.events.append((_delivery(created, now, tick, resolution), gang, pods))
            out.sources[gang.key] = submission.source
    out.events.sort(key=lambda event: event[0])
    return out


def _size(submission: Submission) -> int:
    return max(submission.pods, submission.min_member, 1)


def _copy(submission: Submission, name: str, created: float) -> tuple[Gang, tuple[Pod, ...]]:
    gang = Gang(
        ARRIVAL_NAMESPACE,
        name,
        min_member=submission.min_member,
        total_number=_size(submission),
        created=created,
        priority=submission.priority,
        queue=submission.queue,
    )
    requests = dict(submission.requests)  # one mapping shared by its pods (the engine caches by it)
    pods = tuple(
        Pod(
            ARRIVAL_NAMESPACE,
            f"{name}-{i}",
            requests,
            priority=submission.priority,
            created=created,
            gang=gang.key,
            duration=submission.duration,
            queue=submission.queue,
        )
        for i in range(_size(submission))
    )
    return gang, pods


def _delivery(created: float, now: float, tick: float, resolution: float) -> float:
    """``created`` rounded up on a grid whose step is about ``resolution`` of the time ahead."""
    ahead = max(created - now, tick)
    step = tick
    if resolution > 0:
        while step * 2 <= resolution * ahead:
            step *= 2
    return now + math.ceil(ahead / step - 1e-9) * step
