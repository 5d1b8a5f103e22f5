"""The normalized form of every queue format, before anything is written.

Volcano ``Queue``, Kueue ``Cohort`` / ``ClusterQueue`` / ``LocalQueue`` / ``ResourceFlavor``,
KAI-Scheduler ``Queue`` and YuniKorn's ``queues.yaml`` (in the ``yunikorn-configs`` ConfigMap) are
each read by their own module into these dataclasses, with validated canonical values (amounts
as the engine's integers, see ``engine/quantity.py``). ``services/queues.py`` checks the tree as
a whole (unknown parent, cycle, max below guarantee) and writes the Queue rows. ``field`` is the
path of what declared each value, so an error found later can still name it.

A queue spec maps one to one onto ``engine.model.Queue``; the engine's docstring says what each
amount means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class QueueSpec:
    """A queue of the tree: a Volcano/KAI Queue, a Kueue Cohort or ClusterQueue, a YuniKorn queue."""

    name: str  # unique; what gangs name (YuniKorn: the full path, e.g. "root.ml.nlp")
    source_format: str  # "volcano", "kueue", "kai", "yunikorn", "gangsched"
    field: str  # where it was declared, e.g. "items[0]" or "items[0].data.queues.yaml"
    declaration: dict[str, Any] = field(default_factory=dict)  # the object as applied
    parent: str | None = None  # None: a top-level queue
    guarantee: dict[str, int] = field(default_factory=dict)
    max: dict[str, int] = field(default_factory=dict)  # a missing resource: unlimited
    lending_limit: dict[str, int] = field(default_factory=dict)  # a missing resource: lends all
    weight: float = 1.0
    # KAI: an over-quota weight per resource; a resource not named takes ``weight``.
    weights: dict[str, float] = field(default_factory=dict)
    # KAI's ``quota: -1``: resources guaranteed all the queue asks (not listed in ``guarantee``).
    unlimited_guarantee: list[str] = field(default_factory=list)
    reclaimable: bool = True
    open: bool = True
    # Kueue: a Cohort only groups queues (no work is submitted to it); Volcano/KAI parents are
    # queues too. Gangs may name only leaf queues that are not cohorts.
    cohort: bool = False
    # How long its units wait before reclaiming beyond its guarantee, in seconds; None: the
    # global ``GANGSCHED_RECLAIM_DELAY_S``. Volcano: 0 (at once); YuniKorn: ``preemption.delay``.
    reclaim_delay_s: float | None = None
    # The expected runtime of its gangs that have no better estimate (services/runtimes.py);
    # None: the global ``GANGSCHED_DEFAULT_RUNTIME_S``.
    default_runtime_s: float | None = None
    # Whether its units may evict its own lower-priority work. Kueue: withinClusterQueue
    # LowerPriority (Never, its default: False); YuniKorn: False (no intra-queue preemption).
    preempt_within: bool = True
    # How far its units reclaim from other queues: "fair-share" (gangsched's two rules) or
    # "guarantee" (only up to its declared guarantees, after its delay: YuniKorn's preemption).
    reclaim_up_to: str = "fair-share"
    # Fields from the source a reader should see on the Queues page, e.g. Kueue's flavor per
    # resource ({"nvidia.com/gpu": "a100"}).
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class LocalQueueSpec:
    """Kueue's namespaced ``LocalQueue``: pods of ``namespace`` labelled
    ``kueue.x-k8s.io/queue-name: <name>`` are charged to ``cluster_queue``."""

    namespace: str
    name: str
    cluster_queue: str
    field: str
    declaration: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class FlavorSpec:
    """Kueue's ``ResourceFlavor``: recorded so a ClusterQueue may name it. gangsched honours one
    flavor per resource and no flavor-specific node placement (what it cannot honour is refused
    naming the field)."""

    name: str
    field: str
    node_labels: dict[str, str] = field(default_factory=dict)
    declaration: dict[str, Any] = field(default_factory=dict)
    # Kueue's ``spec.topologyName``: a Topology that must exist; "" none.
    topology_name: str = ""
    topology_field: str = ""
