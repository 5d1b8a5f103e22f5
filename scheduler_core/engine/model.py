"""The engine's input: a snapshot of the cluster and its pending work, as plain frozen data.

Everything the engine knows arrives here; nothing is read from a database, a clock or a cluster.
Resource amounts are already canonical integers (see ``quantity.py``): milli-CPU for ``cpu``,
bytes for memory and storage, counts for everything else (``nvidia.com/gpu``, ``pods``).

Names are the ones used everywhere in gangsched: a *gang* (a PodGroup, a Koordinator gang, a
YuniKorn task group, a Volcano job) is ``namespace/name``; a *gang group* is a set of gangs,
possibly across namespaces, that must all be satisfied together.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

#: The queue every gang and pod that names no queue is in: no guarantee, no limit.
DEFAULT_QUEUE = "default"


class GangMode(str, enum.Enum):
    """Koordinator's modes: what a member that cannot be placed does to the others."""

    STRICT = "Strict"  # roll the whole attempt back within the cycle
    NON_STRICT = "NonStrict"  # keep partial reservations across cycles and accumulate


class MatchPolicy(str, enum.Enum):
    """Koordinator's ``match-policy``: which members count toward min_member once a gang was
    satisfied and new members arrive (replacements of deleted pods, late members).

    ``pkg/scheduler/plugins/coscheduling/core/gang.go`` (isGangValidForPermit) in
    koordinator-sh/koordinator: ONCE_SATISFIED passes at once after the first satisfaction,
    ONLY_WAITING needs min_member pods waiting together, WAITING_AND_RUNNING counts the
    running ones too (scheduler-plugins' Permit counts bound pods the same way).
    """

    ONCE_SATISFIED = "once-satisfied"  # satisfied once: later members are ordinary pods
    ONLY_WAITING = "only-waiting"  # min_member new members placed together, running ones not counted
    WAITING_AND_RUNNING = "waiting-and-running"  # running + newly placed members reach min_member


class TimeoutStyle(str, enum.Enum):
    """YuniKorn's gangSchedulingStyle: what a timeout leads to."""

    HARD = "Hard"  # the gang is TimedOut and waits for an operator's retry
    SOFT = "Soft"  # the gang's pods fall back to ordinary pod-at-a-time scheduling


class Placement(str, enum.Enum):
    BINPACK = "binpack"  # fewer, fuller nodes: less fragmentation for the next big gang
    SPREAD = "spread"  # members on as many nodes as possible


class GangPhase(str, enum.Enum):
    """scheduler-plugins PodGroup phases, plus gangsched's TimedOut and Killed."""

    PENDING = "Pending"
    SCHEDULING = "Scheduling"
    RUNNING = "Running"
    FINISHED = "Finished"
    FAILED = "Failed"
    UNKNOWN = "Unknown"
    TIMED_OUT = "TimedOut"
    KILLED = "Killed"


#: Phases in which the engine places nothing for a gang until someone (an operator, the
#: restart policy) moves it back to Pending.
INACTIVE_PHASES = frozenset({GangPhase.FINISHED, GangPhase.FAILED, GangPhase.TIMED_OUT, GangPhase.KILLED})


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod's toleration, with Kubernetes' matching rules (empty key + Exists tolerates all)."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty: every effect


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Requirements ANDed together; a pod's required node affinity ORs several terms."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    allocatable: Mapping[str, int]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False  # cordoned
    ready: bool = True


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod the engine must account for: bound (``node`` set) or pending (``node`` None).

    ``reserved_node`` is capacity held for a pending member across cycles (a NonStrict gang's
    partial reservation, or a preemptor's nomination); it counts as used on that node.
    ``started`` and ``duration`` give the expected end of a running pod and the runtime of a
    pending one, which backfilling uses; None means unknown, and the engine is conservative.
    """

    namespace: str
    name: str
    requests: Mapping[str, int]
    priority: int = 0
    created: float = 0.0
    gang: str | None = None  # "namespace/name" of the gang, None for a pod scheduled alone
    node: str | None = None
    reserved_node: str | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    affinity: tuple[NodeSelectorTerm, ...] = ()  # required node affinity; empty: any node
    started: float | None = None
    duration: float | None = None
    preemptible: bool = True
    terminating: bool = False  # being deleted: still holds its node, never a victim again
    # The leaf queue a pod scheduled alone is charged to; a gang member is charged to its gang's.
    queue: str = DEFAULT_QUEUE
    # "namespace/name", computed once: the engine looks pods up by key hundreds of thousands
    # of times per cycle.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")

    @property
    def pending(self) -> bool:
        return self.node is None and not self.terminating


@dataclass(frozen=True, slots=True)
class Topology:
    """A cluster's network topology: node-label keys, from the widest level to the
    narrowest (``("example.com/block", "example.com/rack", "kubernetes.io/hostname")``).

    A node's *domain* at a level is the value of that level's label on it (nodes without the
    label are in no domain of that level). Kueue's and KAI-Scheduler's ``Topology`` objects are
    lists like this; Volcano's ``HyperNode`` trees are turned into one by the service, which
    gives each node one synthetic label per tier naming the HyperNode that holds it.
    """

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopologyConstraint:
    """Where a gang's members must or should be, as one domain of a ``Topology`` level.

    - ``required``: a level's label key; all members in one domain of that level, or none placed
      (Kueue ``podset-required-topology``, KAI ``topology-required-placement``, Volcano hard mode);
    - ``preferred``: a level's label key; the smallest domain that fits, widening level by level
      up to the whole cluster (Kueue ``podset-preferred-topology``, KAI
      ``topology-preferred-placement``, Volcano soft mode);
    - ``topology``: the ``Topology.name`` the levels belong to; None: the only topology, or the
      first one that has the level.

    Both set: the gang must be inside one ``required`` domain and prefers one ``preferred`` domain
    within it.

    ``exclusive`` makes the ``required`` domain the gang's own among exclusive gangs (JobSet's
    and LeaderWorkerSet's ``exclusive-topology``): it goes only to a domain of that level that
    holds no pod (running, bound, reserved) of another gang exclusive at the same level key, so
    while it is there no other such gang is placed there. Gangs that are not exclusive may share
    the domain, as upstream's anti-affinity selects only the pods that carry its label
    (``topology_exclusive.py``).
    """

    required: str | None = None
    preferred: str | None = None
    topology: str | None = None
    exclusive: bool = False


@dataclass(frozen=True, slots=True)
class Gang:
    """A gang and its scheduling state, as the service last recorded it.

    ``satisfied`` is true once min_member members have been bound together; after that the gang's
    further members (replacements, members beyond min_member) are scheduled as ordinary pods
    under ``match_policy`` once-satisfied, and as a gang again under the other two policies.
    ``wait_started`` is when the timeout clock started (the first cycle that could place a
    member); ``fallen_back`` marks a Soft gang whose timeout sent it to pod-at-a-time scheduling.
    """

    namespace: str
    name: str
    min_member: int
    min_resources: Mapping[str, int] = field(default_factory=dict)
    total_number: int | None = None
    mode: GangMode = GangMode.STRICT
    wait_seconds: float | None = None  # None: wait forever
    style: TimeoutStyle = TimeoutStyle.HARD
    group: str | None = None  # key of the GangGroup this gang belongs to
    created: float = 0.0
    phase: GangPhase = GangPhase.PENDING
    priority: int | None = None  # None: the highest priority among its pods
    placement: Placement = Placement.BINPACK
    preemptible: bool = True
    queue: str = DEFAULT_QUEUE
    satisfied: bool = False
    wait_started: float | None = None
    fallen_back: bool = False
    match_policy: MatchPolicy = MatchPolicy.ONCE_SATISFIED
    topology: TopologyConstraint | None = None  # None: members may land anywhere
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")

    @property
    def settled(self) -> bool:
        """Past all-or-nothing: satisfied once (match-policy once-satisfied), or fallen back; its
        pods are ordinary pods now."""
        return self.fallen_back or (self.satisfied and self.match_policy == MatchPolicy.ONCE_SATISFIED)

    @property
    def counts_running(self) -> bool:
        """Whether members already bound count toward min_member (all but only-waiting)."""
        return self.match_policy != MatchPolicy.ONLY_WAITING


@dataclass(frozen=True, slots=True)
class GangGroup:
    """Gangs (``namespace/name`` keys, any namespaces) that bind together or not at all.

    A member listed here that has no Gang in the snapshot yet holds the whole group back.
    """

    key: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Queue:
    """One queue of the tenant tree, as the engine sees it.

    ``name`` is unique and is what gangs name (``Gang.queue``, ``Pod.queue``); ``parent`` is the
    parent queue's name, None for a top-level queue (the tree's implicit root is the whole
    cluster). Amounts are the engine's canonical integers per resource:

    - ``guarantee``: what the queue is promised when it has demand (Kueue nominalQuota, Volcano
      deserved/guarantee, YuniKorn guaranteed, KAI quota); a missing resource is 0;
    - ``max``: the most it may use, borrowing included (Kueue nominal+borrowingLimit, Volcano
      capability, YuniKorn max, KAI limit); a missing resource is unlimited;
    - ``lending_limit``: the most of its unused guarantee it lends to others; missing: all of it;
    - ``weight``: its share of what is left over its parent's children's guarantees (over-quota
      weight), > 0;
    - ``weights``: an over-quota weight per resource (KAI-Scheduler's ``overQuotaWeight`` is one
      per resource); a resource it does not name takes ``weight``. Where some queue of a level
      names weights per resource, that level divides each resource's over-quota part by that
      resource's weights, one resource at a time, as KAI does (``fairshare.divide``);
    - ``unlimited_guarantee``: resources it is guaranteed all it asks of, up to what its level
      holds once its siblings' guaranteed amounts are served (KAI's ``quota: -1``); ``guarantee``
      does not list them;
    - ``reclaimable``: whether what it borrowed may be taken back by reclaim;
    - ``open``: a closed queue places nothing new (what runs keeps running);
    - ``reclaim_delay_s``: how long a unit of this leaf queue waits before it reclaims beyond the
      queue's guarantee (reclaim.py); None: ``EngineConfig.reclaim_delay_s``. Volcano queues
      reclaim at once (0), YuniKorn's wait their ``preemption.delay``;
    - ``preempt_within``: whether a unit of this leaf queue may evict its own queue's
      lower-priority work (preempt.py, and at the queue's max, reclaim.py ``within_max``).
      False for a Kueue ClusterQueue whose ``withinClusterQueue`` is Never (Kueue's default) and
      for YuniKorn, which has no intra-queue preemption;
    - ``reclaim_up_to``: how far a unit of this leaf queue reclaims from other queues.
      ``"fair-share"``: up to its guarantee at once, then up to its fair share after its delay
      (reclaim.py's two rules). ``"guarantee"``, as YuniKorn preempts: only while the queue and
      each ancestor that declares a guarantee stay within it, never when none on its path
      declares one, only after ``reclaim_delay_s``, and only from queues that stay at or above
      their declared guarantees (``reclaim_declared.py``).

    Work is placed only in leaf queues; an inner queue aggregates its children.
    """

    name: str
    parent: str | None = None
    guarantee: Mapping[str, int] = field(default_factory=dict)
    max: Mapping[str, int] = field(default_factory=dict)
    lending_limit: Mapping[str, int] = field(default_factory=dict)
    weight: float = 1.0
    reclaimable: bool = True
    open: bool = True
    weights: Mapping[str, float] = field(default_factory=dict)
    unlimited_guarantee: frozenset[str] = frozenset()
    reclaim_delay_s: float | None = None
    preempt_within: bool = True
    reclaim_up_to: str = "fair-share"


#: ``Queue.reclaim_up_to``'s choices.
RECLAIM_UP_TO = ("fair-share", "guarantee")


@dataclass(frozen=True, slots=True)
class Snapshot:
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()  # every non-terminal pod: bound and pending
    gangs: tuple[Gang, ...] = ()
    gang_groups: tuple[GangGroup, ...] = ()
    # The queue tree. Empty: no queues were defined, and everything shares the cluster as one
    # implicit ``default`` queue with no guarantee and no limit (gangsched without queues). A
    # gang or pod naming a queue missing from a non-empty tree waits and says so.
    queues: tuple[Queue, ...] = ()
    # The cluster's topologies; empty: no topology, and a gang's constraint naming a
    # level no topology has makes the gang wait and say so.
    topologies: tuple[Topology, ...] = ()
