"""Which pending work a cycle considers, as units, and in what order (the QueueSort).

A *unit* is what is placed all-or-nothing: a gang group (one or more gangs), or a single pod
scheduled on its own (no gang, a gang already satisfied, a Soft gang that fell back). Sorting
units instead of pods means one gang's members always come out together and two gangs never
interleave, which is what lets pod-at-a-time schedulers deadlock at Permit.

Within a priority, units are served least work first with bounded overtaking: a unit's place
in the queue (its *rank*) is its creation time plus its work, the device-seconds it asks for
(GPUs, or CPU cores where it asks for no GPU, times its declared duration), but at most
``EngineConfig.overtake_limit_s``. Small, short jobs pass big, long ones, which is what cuts
the average wait on a busy GPU cluster (Tiresias' least-attained-service, with declared work);
the limit is the anti-starvation guarantee: a unit is never passed by one created more than
``overtake_limit_s`` after it, and with EASY backfilling it becomes the head and has capacity
reserved once those are served. A pod without a declared duration counts as the largest work
(it is passed within the limit, like the biggest job), so declaring a duration never loses a
place. With a limit of 0 the order is plain FIFO, as kube-batch, YuniKorn and scheduler-plugins
order gangs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .config import EngineConfig
from .model import INACTIVE_PHASES, Gang, Pod, Snapshot


@dataclass(frozen=True, slots=True)
class Unit:
    key: str
    priority: int
    created: float
    rank: float  # created + bounded work: the place in the queue within a priority
    gangs: tuple[str, ...] = ()  # the gangs placed together; empty for a lone pod
    pods: tuple[Pod, ...] = ()  # a lone pod's unit holds that pod
    missing: tuple[str, ...] = ()  # gang group members that have no gang yet

    @property
    def is_gang(self) -> bool:
        return bool(self.gangs)

    def sort_key(self) -> tuple:
        return (-self.priority, self.rank, self.created, self.key)


def devices(requests: Mapping[str, int]) -> float:
    """What a pod's work is counted in: its GPUs (any ``*gpu`` resource), else its CPU cores."""
    gpus = sum(amount for name, amount in requests.items() if name.endswith("gpu"))
    return float(gpus) if gpus else requests.get("cpu", 0) / 1000.0


def work(pods: Iterable[Pod]) -> float:
    """Device-seconds the pods ask for; infinite when one of them declares no duration."""
    return declared_work((pod.requests, pod.duration) for pod in pods)


def declared_work(pods: Iterable[tuple[Mapping[str, int], float | None]]) -> float:
    """``work`` over (requests, duration) pairs, for callers that hold rows rather than Pods."""
    total = 0.0
    for requests, duration in pods:
        if duration is None:
            return math.inf
        total += devices(requests) * duration
    return total


def rank(created: float, pods: Iterable[Pod], limit: float) -> float:
    """A unit's place in the queue within its priority (see the module docstring)."""
    return created + min(limit, work(pods)) if limit > 0 else created


def gang_priority(gang: Gang, members: list[Pod]) -> int:
    if gang.priority is not None:
        return gang.priority
    return max((pod.priority for pod in members), default=0)


def pods_by_gang(snapshot: Snapshot) -> dict[str, list[Pod]]:
    members: dict[str, list[Pod]] = defaultdict(list)
    for pod in snapshot.pods:
        if pod.gang is not None:
            members[pod.gang].append(pod)
    return members


def build_units(
    snapshot: Snapshot,
    config: EngineConfig,
    gangs: dict[str, Gang],
    members: dict[str, list[Pod]],
    pending: Iterable[Pod] | None = None,
) -> list[Unit]:
    """Pending units in queue order: priority, then rank, creation of the gang (or pod), key.

    ``pending``: the snapshot's pending pods in snapshot order, when the caller has them
    (``ClusterState.pending_pods``); else every pod is looked at."""
    limit = config.overtake_limit_s
    groups = {group.key: group for group in snapshot.gang_groups}
    units: list[Unit] = []
    gang_units: set[str] = set()
    for pod in pending if pending is not None else (pod for pod in snapshot.pods if pod.pending):
        gang = gangs.get(pod.gang) if pod.gang is not None else None
        if config.gangs and pod.gang is not None and gang is None:
            continue  # a provisional member: it waits until its gang is declared
        if gang is not None and gang.phase in INACTIVE_PHASES:
            continue
        if not config.gangs or gang is None or gang.settled:
            units.append(
                Unit(
                    key=pod.key,
                    priority=pod.priority,
                    created=pod.created,
                    rank=rank(pod.created, (pod,), limit),
                    pods=(pod,),
                )
            )
            continue
        group = groups.get(gang.group) if gang.group is not None else None
        unit_key = group.key if group is not None else gang.key
        if unit_key in gang_units:
            continue
        gang_units.add(unit_key)
        member_keys = tuple(sorted(group.members)) if group is not None else (gang.key,)
        present = tuple(key for key in member_keys if key in gangs)
        missing = tuple(key for key in member_keys if key not in gangs)
        created = min(gangs[key].created for key in present)
        units.append(
            Unit(
                key=unit_key,
                priority=max(gang_priority(gangs[key], members.get(key, [])) for key in present),
                created=created,
                rank=rank(created, [pod for key in present for pod in members.get(key, ())], limit),
                gangs=present,
                missing=missing,
            )
        )
    units.sort(key=Unit.sort_key)
    return units
