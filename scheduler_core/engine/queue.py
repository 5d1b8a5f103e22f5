"""Which pending work a cycle considers, as units, and in what order (the QueueSort).

A *unit* is what is placed all-or-nothing: a gang group (one or more gangs), or a single pod
scheduled on its own (no gang, a gang already satisfied, a Soft gang that fell back). Sorting
units instead of pods means one gang's members always come out together and two gangs never
interleave, which is what lets pod-at-a-time schedulers deadlock at Permit.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .model import INACTIVE_PHASES, EngineConfig, Gang, Pod, Snapshot


@dataclass(frozen=True, slots=True)
class Unit:
    key: str
    priority: int
    created: float
    gangs: tuple[str, ...] = ()  # the gangs placed together; empty for a lone pod
    pods: tuple[Pod, ...] = ()  # a lone pod's unit holds that pod
    missing: tuple[str, ...] = ()  # gang group members that have no gang yet

    @property
    def is_gang(self) -> bool:
        return bool(self.gangs)

    def sort_key(self) -> tuple:
        return (-self.priority, self.created, self.key)


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
    snapshot: Snapshot, config: EngineConfig, gangs: dict[str, Gang], members: dict[str, list[Pod]]
) -> list[Unit]:
    """Pending units in queue order: priority, then creation of the gang (or pod), then key."""
    groups = {group.key: group for group in snapshot.gang_groups}
    units: list[Unit] = []
    gang_units: set[str] = set()
    for pod in snapshot.pods:
        if not pod.pending:
            continue
        gang = gangs.get(pod.gang) if pod.gang is not None else None
        if config.gangs and pod.gang is not None and gang is None:
            continue  # a provisional member: it waits until its gang is declared
        if gang is not None and gang.phase in INACTIVE_PHASES:
            continue
        if not config.gangs or gang is None or gang.settled:
            units.append(Unit(key=pod.key, priority=pod.priority, created=pod.created, pods=(pod,)))
            continue
        group = groups.get(gang.group) if gang.group is not None else None
        unit_key = group.key if group is not None else gang.key
        if unit_key in gang_units:
            continue
        gang_units.add(unit_key)
        member_keys = tuple(sorted(group.members)) if group is not None else (gang.key,)
        present = tuple(key for key in member_keys if key in gangs)
        missing = tuple(key for key in member_keys if key not in gangs)
        units.append(
            Unit(
                key=unit_key,
                priority=max(gang_priority(gangs[key], members.get(key, [])) for key in present),
                created=min(gangs[key].created for key in present),
                gangs=present,
                missing=missing,
            )
        )
    units.sort(key=Unit.sort_key)
    return units
