"""The normalized form every manifest format is mapped to, before anything is written.

A format module reads its keys (a PodGroup's ``spec.minMember``, a Koordinator annotation, a
YuniKorn task group) and produces these dataclasses with validated, canonical values: resource
amounts as the engine's integers, wait times in seconds, enumerations as their values.
``apply.py`` then writes them as Gang, GangGroup and Member rows. ``field`` on each spec is the
path of what declared it, so a later conflict can still name where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_core.engine.model import GangMode, MatchPolicy, Placement, TimeoutStyle
from scheduler_core.models import RestartPolicy


@dataclass
class GangSpec:
    namespace: str
    name: str
    min_member: int
    source_format: str
    declaration: dict[str, Any]
    field: str  # where it was declared, e.g. "items[0]" or "items[2].metadata.annotations"
    total_number: int | None = None
    min_resources: dict[str, int] = field(default_factory=dict)
    mode: str = GangMode.STRICT.value
    style: str = TimeoutStyle.HARD.value
    wait_seconds: float | None = None
    priority: int | None = None
    queue: str = "default"
    # The key that named the queue ("items[0].spec.queue"; "": none did, ``field`` answers).
    queue_field: str = ""
    placement: str = Placement.BINPACK.value
    restart_policy: str = RestartPolicy.RESTART_GANG_WHEN_BELOW_MIN.value
    preemptible: bool = True
    # Volcano Job: restarts allowed (None: unbounded) and the actions on PodFailed / PodEvicted.
    max_retry: int | None = None
    failure_policy: str = ""
    eviction_policy: str = ""
    # How a gang satisfied once takes new members (Koordinator's match-policy).
    match_policy: str = MatchPolicy.ONCE_SATISFIED.value
    # Gang group members as "namespace/name" keys (this gang included), and the group's key.
    group: list[str] | None = None
    group_key: str | None = None
    # Constraints a format attaches to the gang's members (YuniKorn task groups): applied to
    # members that do not set their own.
    member_node_selector: dict[str, str] = field(default_factory=dict)
    member_tolerations: list[dict[str, Any]] = field(default_factory=list)
    member_affinity: list[dict[str, Any]] = field(default_factory=list)
    # The application it belongs to, where the format names one (YuniKorn's applicationId).
    application: str = ""
    # Topology: level keys of the gang's constraint ("" none) and the Topology they
    # belong to; ``topology_field`` names the keys that declared them (``topology_keys.py``).
    topology_required: str = ""
    topology_preferred: str = ""
    topology_name: str = ""
    topology_field: str = ""
    topology_tier_name: str = ""  # Volcano's highestTierName until the apply resolves it
    topology_exclusive: bool = False  # alone in its required domain among exclusive gangs

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def settings(self) -> dict[str, Any]:
        """The Gang row's declared fields (what re-applying compares and updates)."""
        return {
            "min_member": self.min_member,
            "total_number": self.total_number,
            "min_resources": self.min_resources,
            "mode": self.mode,
            "style": self.style,
            "wait_seconds": self.wait_seconds,
            "priority": self.priority,
            "queue": self.queue,
            "placement": self.placement,
            "restart_policy": self.restart_policy,
            "preemptible": self.preemptible,
            "max_retry": self.max_retry,
            "failure_policy": self.failure_policy,
            "eviction_policy": self.eviction_policy,
            "match_policy": self.match_policy,
            "source_format": self.source_format,
            "application": self.application,
            "topology_required": self.topology_required,
            "topology_preferred": self.topology_preferred,
            "topology_name": self.topology_name,
            "topology_exclusive": self.topology_exclusive,
            "declaration": self.declaration,
        }


@dataclass
class GangRef:
    """What a pod's labels or annotations say about its gang.

    ``spec`` is a full declaration carried by the pod itself (Koordinator annotations, the
    legacy min-available label, YuniKorn task groups); None when the pod only names a gang
    declared elsewhere (a PodGroup), which may not have arrived yet.
    """

    namespace: str
    name: str
    source_format: str
    field: str
    spec: GangSpec | None = None
    # Without a declaration: how many members the pod's labels ask for, for a provisional gang.
    min_available: int | None = None
    # YuniKorn: more gangs declared by the same pod (the other task groups of its application).
    siblings: list[GangSpec] = field(default_factory=list)
    # The queue the pod's own keys ask for (Volcano's queue-name annotation, Kueue's label):
    # it must agree with the gang's.
    queue: str | None = None
    queue_field: str = ""  # the key that named it
    # Why a provisional gang waits, e.g. "waiting for PodGroup ns/x to be created".
    waiting: str = ""
    # Upstream's pods wait for their group however long it takes: never promoted.
    wait_forever: bool = False
    # Upstream v1alpha1: the pod group (a gang key) whose policy this replica key's gang takes.
    replica_of: str | None = None
    # The topology constraint the pod's own annotations ask of its gang (``topology_keys``).
    topology: Any = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class PodSpec:
    namespace: str
    name: str
    field: str
    gang: GangRef | None = None
    requests: dict[str, int] = field(default_factory=dict)
    priority: int = 0
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    affinity: list[dict[str, Any]] = field(default_factory=list)  # required node selector terms
    duration_seconds: float | None = None
    deadline_seconds: float | None = None  # activeDeadlineSeconds (``deadlines.py``)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    scheduler_name: str = ""
    preemptible: bool = True
    # The workload that creates this pod ("job.batch/train"); empty: a bare Pod (Member.owner).
    owner: str = ""
    # The queue its own labels or annotations name (``pod_queues.py``); None: its gang's, or the
    # default queue for a pod scheduled alone (``pod_writes.pod_queue``, Member.queue).
    queue: str | None = None
    queue_field: str = ""  # the key that named it

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def member_fields(self) -> dict[str, Any]:
        """The Member row's fields (what re-applying compares and updates)."""
        return {
            "requests": self.requests,
            "priority": self.priority,
            "node_selector": self.node_selector,
            "tolerations": self.tolerations,
            "affinity": self.affinity,
            "duration_seconds": self.duration_seconds,
            "deadline_seconds": self.deadline_seconds,
            "labels": self.labels,
            "annotations": self.annotations,
            "preemptible": self.preemptible,
        }


@dataclass
class Loaded:
    """What one manifest object produced: its kubectl-like name, gangs and pods."""

    object_name: str  # e.g. "podgroup.scheduling.x-k8s.io/trainer", "pod/trainer-0"
    gangs: list[GangSpec] = field(default_factory=list)
    pods: list[PodSpec] = field(default_factory=list)
    # Cluster objects (Node, Namespace, PriorityClass: ``cluster.py``), each with ``object_name``,
    # ``write() -> "created" | "configured" | "unchanged"`` and ``delete()``.
    objects: list[Any] = field(default_factory=list)


@dataclass
class Plan:
    """What one apply will write, after every object is loaded and before anything is written
    (``apply.py`` makes it, ``gang_writes.py`` and ``pod_writes.py`` write it)."""

    loaded: list[Loaded]
    gangs: dict[str, GangSpec]  # declared, by key, in order
    pods: dict[str, PodSpec]
    refs: dict[str, GangRef]  # gangs pods name but nobody declared here, by key
    pods_by_gang: dict[str, list[PodSpec]]
