"""Applying a cycle's decisions to its snapshot, for the next cycle.

This is what the cluster and the service would do with the decisions, done on plain data, so
that tests, benchmarks and trace replay can run cycle after cycle without a database. Evicted
pods return to pending: a gang preempted whole is requeued whole, as the restart policy does; a
gang that lost elastic members stays satisfied, and they wait as its ordinary pending pods.
"""

from __future__ import annotations

import dataclasses

from .decisions import CycleResult, TransitionKind
from .model import Gang, GangPhase, Pod, Snapshot


def apply_result(snapshot: Snapshot, result: CycleResult, now: float) -> Snapshot:
    binds = {bind.pod: bind.node for bind in result.binds}
    reserved = {release.pod: None for release in result.releases}
    reserved.update({reserve.pod: reserve.node for reserve in result.reservations})
    evicted = {evict.pod for evict in result.evictions}
    pods: list[Pod] = []
    for pod in snapshot.pods:
        if pod.key in binds:
            pod = dataclasses.replace(pod, node=binds[pod.key], reserved_node=None, started=now)
        elif pod.key in evicted:
            pod = dataclasses.replace(pod, node=None, reserved_node=None, started=None)
        elif pod.key in reserved:
            pod = dataclasses.replace(pod, reserved_node=reserved[pod.key])
        pods.append(pod)
    gangs = {gang.key: gang for gang in snapshot.gangs}
    for transition in result.transitions:
        gang = gangs.get(transition.gang)
        if gang is not None:
            gangs[gang.key] = _transition(gang, transition.kind, now)
    return dataclasses.replace(snapshot, pods=tuple(pods), gangs=tuple(gangs.values()))


def _transition(gang: Gang, kind: TransitionKind, now: float) -> Gang:
    if kind == TransitionKind.WAIT_STARTED:
        return dataclasses.replace(gang, wait_started=now, phase=GangPhase.SCHEDULING)
    if kind == TransitionKind.SATISFIED:
        return dataclasses.replace(gang, satisfied=True, phase=GangPhase.RUNNING)
    if kind == TransitionKind.TIMED_OUT:
        return dataclasses.replace(gang, phase=GangPhase.TIMED_OUT)
    if kind == TransitionKind.FELL_BACK:
        return dataclasses.replace(gang, fallen_back=True)
    if kind in (TransitionKind.PREEMPTED, TransitionKind.DEADLOCK_BROKEN):
        # It holds nothing now: Pending, with no clock, until a member can be placed again.
        return dataclasses.replace(gang, satisfied=False, wait_started=None, phase=GangPhase.PENDING)
    return gang
