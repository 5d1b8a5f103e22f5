"""Per queue, over a replay: what its jobs use and ask for, and how fairly it was served.

Kept for every policy when the replay has a queue tree (``--queues``), also for policies that do
not schedule by queues (``no-queues``): the same tenants, measured the same way. What a leaf
queue uses is what its jobs' pods hold (bound or reserved); its demand is that plus what its
submitted, unfinished jobs still ask for. After each tick the replay handled, the book computes
every queue's fair share with the engine's own rule (``engine/fairshare.py``, top-down from the
cluster's capacity) and holds these until the next tick, on the main resource (GPUs, else CPUs):

- *below guarantee with demand*: usage < min(guarantee, demand), the queue is owed capacity it
  does not have; counted in seconds, and as a share of the seconds the queue had demand;
- *Jain's fairness index* of x_q = usage_q / fair share_q over the leaf queues with demand,
  (sum x)^2 / (n sum x^2): 1 when every queue holds the same fraction of its fair share, 1/n when
  one holds everything; 1 when none holds anything. Averaged over time, weighted by how long
  each value held, over the time some queue had demand;
- *reclaim evictions*: jobs stopped by reclaim, per victim queue, and the work they threw away
  (a job evicted restarts from scratch): bound workers x the main resource x the time run, in
  GPU-hours (core-hours on a cluster without GPUs); and how many jobs were evicted by reclaim more
  than once (``reclaim_evicted_again``: with steady demand, a sign of eviction ping-pong).
"""

from __future__ import annotations

import numpy as np

from scheduler_core.engine import fairshare
from scheduler_core.engine.model import Queue

from .outcome import main_resource
from .traces import Trace

_EPS = 1e-9


def jain(values: np.ndarray) -> float:
    """Jain's fairness index of ``values`` (>= 0): (sum x)^2 / (n sum x^2); 1 for none or all 0."""
    square = float((values**2).sum())
    if not len(values) or square <= 0:
        return 1.0
    return float(values.sum()) ** 2 / (len(values) * square)


class QueueBook:
    def __init__(
        self,
        queues: tuple[Queue, ...],
        leaves: tuple[str, ...],
        resources: tuple[str, ...],
        capacity: np.ndarray,
    ) -> None:
        tree = self.tree = fairshare.build_tree(queues)
        self.leaves = leaves
        self.resources = resources
        self.leaf = np.array([tree.index[name] for name in leaves])
        self.guarantee = fairshare.declared_guarantees(tree, resources)
        self.max = fairshare.amounts(tree, resources, "max", fairshare.UNLIMITED)
        self.capacity = np.minimum(capacity.astype(float), fairshare.UNLIMITED)
        main = main_resource(resources)
        self.main, self.unit = resources.index(main), 1000.0 if main == "cpu" else 1.0
        self.usage = np.zeros((tree.size, len(resources)))  # charged to leaves only
        self.demand = np.zeros_like(self.usage)
        count = len(leaves)
        self.below_s = np.zeros(count)
        self.demand_s = np.zeros(count)
        self.jain_seconds = 0.0  # integral of the index over the time some queue had demand
        self.jain_span = 0.0
        self.evictions = np.zeros(count, dtype=np.int64)
        self.lost = np.zeros(count)  # main resource x seconds thrown away by reclaim
        self.evicted_jobs: dict[int, int] = {}  # job index -> times evicted by reclaim
        self._last: tuple[float, np.ndarray, np.ndarray, float | None] | None = None

    def index(self, queue: str) -> int:
        return int(self.tree.index[queue])

    def charge(self, q: int, amount: np.ndarray) -> None:
        """What queue ``q``'s jobs hold changed by ``amount``."""
        self.usage[q] += amount

    def ask(self, q: int, amount: np.ndarray) -> None:
        """A job of queue ``q`` arrived (+ its whole request) or ended (-)."""
        self.demand[q] += amount

    def reclaimed(self, job: int, q: int, seconds: float, bound: int, request: np.ndarray) -> None:
        """Job ``job`` of queue ``q`` was stopped by reclaim after running ``seconds`` on ``bound`` pods."""
        self.evicted_jobs[job] = self.evicted_jobs.get(job, 0) + 1
        position = int(np.flatnonzero(self.leaf == q)[0])
        self.evictions[position] += 1
        self.lost[position] += seconds * bound * float(request[self.main])

    def record(self, now: float) -> None:
        """Close the interval since the last record, and take the state that holds from ``now``."""
        self.close(now)
        usage = fairshare.roll_up(self.tree, self.usage)
        demand = fairshare.roll_up(self.tree, self.demand)
        share = fairshare.fair_shares(
            self.tree, self.capacity, demand, self.guarantee, self.max, self.resources
        )
        m, leaf = self.main, self.leaf
        used, wanted, fair = usage[leaf, m], demand[leaf, m], share[leaf, m]
        has = wanted > _EPS
        below = has & (used < np.minimum(self.guarantee[leaf, m], wanted) - _EPS)
        rated = has & (fair > _EPS)
        index = jain(used[rated] / fair[rated]) if has.any() else None
        self._last = (now, has, below, index)

    def close(self, now: float) -> None:
        if self._last is None:
            return
        then, has, below, index = self._last
        span = now - then
        if span <= 0:
            return
        self.demand_s += has * span
        self.below_s += below * span
        if index is not None:
            self.jain_seconds += index * span
            self.jain_span += span
        self._last = (now, has, below, index)

    def summary(self, end: float, trace: Trace) -> dict:
        """The per-queue figures ``metrics.summarise`` reports (waits are added there), and each
        job's queue (``job_queues``)."""
        self.close(end)
        queues = {}
        for i, name in enumerate(self.leaves):
            queues[name] = {
                "path": self.tree.names[int(self.leaf[i])],
                "guarantee": round(float(self.guarantee[self.leaf[i], self.main]) / self.unit, 3),
                "demand_s": round(float(self.demand_s[i]), 3),
                "below_guarantee_s": round(float(self.below_s[i]), 3),
                "below_guarantee_share": round(float(self.below_s[i] / self.demand_s[i]), 4)
                if self.demand_s[i] > 0
                else 0.0,
                "reclaim_evictions": int(self.evictions[i]),
                "reclaim_lost_gpu_hours": round(float(self.lost[i]) / self.unit / 3600.0, 3),
            }
        return {
            "jain_index": round(self.jain_seconds / self.jain_span, 4) if self.jain_span > 0 else None,
            "reclaim_evictions": int(self.evictions.sum()),
            "reclaim_lost_gpu_hours": round(float(self.lost.sum()) / self.unit / 3600.0, 3),
            "reclaim_evicted_again": sum(1 for times in self.evicted_jobs.values() if times > 1),
            "queues": queues,
            "job_queues": [job.queue for job in trace.jobs],
        }
