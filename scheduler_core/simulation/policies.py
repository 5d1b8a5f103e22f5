"""The policies a replay compares: each a real system's behaviour on gangs, as an ``EngineConfig``.

One engine, five configurations: the differences between the systems are exactly the switches
below, so a difference in the results is a difference in policy, not in implementation quality.
``models`` and ``simplifies`` are the policy table of docs/trace-replay.md.

Three more compare queue policies on a trace whose jobs carry tenants (``tenants.py``):
gangsched with queues and fair-share reclaim, the same with guarantee-only reclaim (Kueue,
KAI-Scheduler), and gangsched without queues. They are not in ``DEFAULT_POLICIES``.

One more compares topology-aware placement with today's: ``gangsched-topology`` gives
every gang that may span nodes a constraint (``topology_rule.py``) and honours it
(``EngineConfig.topology``), against ``gangsched``, whose gangs carry none and whose engine
ignores them (``topology=False``: gangsched without topology).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from scheduler_core.engine.config import EngineConfig, HeadOfLine
from scheduler_core.engine.model import GangMode


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    config: EngineConfig
    models: str
    simplifies: str
    # Coscheduling's PermitWaitingTimeSeconds: how long a gang's pods may wait at Permit before
    # they are rejected and the gang goes to the back of the queue (replay.py); None: no Permit.
    permit_timeout_s: float | None = None
    # The engine sees the replay's queue tree (Snapshot.queues); False: no queues, as before.
    queues: bool = False
    # Gangs that may span nodes get a TopologyConstraint (topology_rule.py) and the engine sees the
    # cluster's racks (Snapshot.topologies); False: no constraints, no topology, as before.
    topology: bool = False


# scheduler-plugins' CoschedulingArgs defaults (apis/config/v1/defaults.go).
COSCHEDULING_REJECT_PERCENTAGE = 10
COSCHEDULING_PERMIT_WAITING_S = 60.0

# The systems gangsched replaces order gangs FIFO within a priority (no least-work-first).
_COMMON = {"preemption": False, "deadlock_resolution": False, "timeouts": False, "overtake_limit_s": 0.0}

POLICIES: dict[str, Policy] = {
    policy.name: policy
    for policy in (
        Policy(
            "pod",
            EngineConfig(gangs=False, head_of_line=HeadOfLine.NONE, **_COMMON),
            "kube-scheduler without coscheduling: each pod is placed on its own, in priority then "
            "creation order, wherever it fits; a gang's pods that are bound hold their resources "
            "while the rest wait, so two partial gangs can deadlock.",
            "All pods of a job are created at its submission; kube-scheduler's backoff and "
            "unschedulable queues are not modelled (a pod that does not fit is retried every cycle, "
            "in queue order). No pod preemption (the traces have one priority).",
        ),
        Policy(
            "coscheduling",
            EngineConfig(
                head_of_line=HeadOfLine.NONE,
                force_mode=GangMode.STRICT,
                permit_hold=COSCHEDULING_REJECT_PERCENTAGE / 100,
                **_COMMON,
            ),
            "scheduler-plugins Coscheduling with its default arguments: strict all-or-nothing per "
            "PodGroup, ordered by priority then creation; a gang that does not fit is skipped and "
            "any smaller one behind it that fits starts (no head reservation, so large gangs can "
            "starve); no gang preemption. A gang that fails with at most 10% of minMember missing "
            "(PodGroupRejectPercentage) keeps its placed pods waiting at Permit, holding their "
            "resources, for up to 60 s (PermitWaitingTimeSeconds); then they are rejected and the "
            "gang is sorted by that failure time, behind everything submitted before it.",
            "Pods of a gang are tried together in one cycle, not one by one between other gangs' "
            "pods; a failed gang's place in the queue changes only on a permit timeout (every "
            "gang in the window is retried every cycle in queue order, so re-sorting each failure "
            "by its time keeps that order); no PodGroup backoff (PodGroupBackoffSeconds defaults "
            "to 0).",
            permit_timeout_s=COSCHEDULING_PERMIT_WAITING_S,
        ),
        Policy(
            "nonstrict",
            EngineConfig(head_of_line=HeadOfLine.NONE, force_mode=GangMode.NON_STRICT, **_COMMON),
            "Koordinator NonStrict gangs: members that fit are reserved and kept across cycles while "
            "the gang accumulates the rest; nothing breaks two gangs holding what the other needs.",
            "No gang timeout (Koordinator's default waitTime would release a stuck gang after a "
            "while and let it start over); reservations are kept by every gang, not only the head.",
        ),
        Policy(
            "fifo-gang",
            EngineConfig(head_of_line=HeadOfLine.BLOCK, force_mode=GangMode.STRICT, **_COMMON),
            "kube-batch / YuniKorn FIFO gang scheduling: strict all-or-nothing in queue order; "
            "nothing behind a gang that does not fit starts (no backfill).",
            "One queue; no preemption (the traces have one priority); YuniKorn's placeholders are "
            "not modelled (they would hold resources while the gang waits).",
        ),
        Policy(
            "gangsched",
            EngineConfig(topology=False),
            "gangsched: strict all-or-nothing, a least-work-first queue (creation time plus "
            "GPU-seconds, capped at one hour, so nothing is passed by a job submitted more than an "
            "hour after it), EASY backfilling around a reserved head (a unit behind it starts only "
            "if it never delays the head), whole-gang preemption, deadlock breaking, timeouts.",
            "Declared durations are the trace's exact run times (the most favourable case for "
            "backfilling and for ordering by work); the traces declare no gang timeouts.",
        ),
        Policy(
            "gangsched-queues",
            EngineConfig(),
            "gangsched with queues: fair share top-down, admission by headroom, queues "
            "furthest below their fair share first, and reclaim: a queue below its fair share "
            "evicts whole gangs of queues above theirs, never taking one below its own.",
            "The queue tree is --queues (default: four teams, 40/30/20/10%); jobs get tenants by "
            "the documented rule when the trace names none; an evicted job restarts from scratch.",
            queues=True,
        ),
        Policy(
            "guarantee-reclaim",
            EngineConfig(reclaim="guarantee"),
            "gangsched with queues, but reclaim only restores guarantees, as Kueue "
            "(reclaimWithinCohort) and KAI-Scheduler do: a queue reclaims only while it stays "
            "within its guarantee, from queues using more than theirs.",
            "Everything else is gangsched-queues' (order, admission, backfilling), so only the "
            "reclaim rule differs.",
            queues=True,
        ),
        Policy(
            "no-queues",
            EngineConfig(),
            "gangsched without queues (Snapshot.queues empty): one queue for all tenants, as "
            "on a cluster with no queue tree; measured per tenant like the queue policies.",
            "The same as gangsched.",
        ),
        Policy(
            "gangsched-topology",
            EngineConfig(topology=True),
            "gangsched with topology-aware placement: every gang that may land on more "
            "than one node is kept inside one rack, else one block (preferred, widening level by "
            "level; --topology required: inside the narrowest level that can hold it, or not "
            "placed), the domain chosen to leave the least capacity over.",
            "The cluster's racks and blocks are given by a fixed rule in node-list order (8 nodes a "
            "rack, 4 racks a block); the trace says nothing of the network, so what a spread gang "
            "loses in speed is not modelled (its duration is the trace's either way).",
            topology=True,
        ),
    )
}

#: What a replay compares when no policy is named: the five systems.
DEFAULT_POLICIES = ("pod", "coscheduling", "nonstrict", "fifo-gang", "gangsched")
#: The queue comparison (bench/simulate_queues.sh).
QUEUE_POLICIES = ("gangsched-queues", "guarantee-reclaim", "no-queues")
#: The topology comparison (bench/simulate_topology.sh).
TOPOLOGY_POLICIES = ("gangsched", "gangsched-topology")


class UnknownPolicy(ValueError):
    pass


def get_policies(names: list[str] | tuple[str, ...]) -> list[Policy]:
    """The named policies, in the order given, each once; ``UnknownPolicy`` names the bad one."""
    chosen: list[Policy] = []
    for name in names:
        if name not in POLICIES:
            raise UnknownPolicy(f"unknown policy {name!r}: choose among {', '.join(POLICIES)}")
        if POLICIES[name] not in chosen:
            chosen.append(POLICIES[name])
    if not chosen:
        raise UnknownPolicy(f"no policy given: choose among {', '.join(POLICIES)}")
    return chosen


def with_overtake_limit(policies: list[Policy], seconds: float) -> list[Policy]:
    """The policies with gangsched's queue-order limit set (gangsched's, with or without queues;
    the others model FIFO systems)."""
    if not math.isfinite(seconds) or seconds < 0:
        raise UnknownPolicy(
            f"the overtake limit must be a finite number of seconds, 0 or more, not {seconds:g}"
        )
    return [
        dataclasses.replace(policy, config=dataclasses.replace(policy.config, overtake_limit_s=seconds))
        if policy.config.overtake_limit_s > 0  # gangsched's own order (the others are FIFO)
        else policy
        for policy in policies
    ]
