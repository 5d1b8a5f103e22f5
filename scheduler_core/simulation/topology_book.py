"""Where each gang landed, by rack and block: the topology figures of a replay.

Kept for every policy, so topology-aware placement is compared with today's on the same jobs.
When a job starts (``min_workers`` bound together), the book records the nodes its bound pods
are on (a job preempted and started again: its last start). From the nodes' block and rack labels
(``rack_labels.py``; a node without the label is a domain of its own), per level:

- ``one_domain_share``: of the gangs measured, the share whose members are all inside one domain
  of that level;
- ``avg_domains``: the average number of domains of that level a gang's members are in.

Two sets of gangs are measured: **multi-node** gangs, those whose members landed on more than one
node (the set a policy's placement decides, so it may differ between policies), and **eligible**
gangs, those ``topology_rule.py`` gives a constraint under ``gangsched-topology`` (the same jobs
under every policy, constrained or not), so the two policies are compared on the same gangs.
Their waits (avg, p95) are added by ``metrics.py``, which knows the start times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from scheduler_core.engine.model import Node
from scheduler_core.simulation.rack_labels import BLOCK_LABEL, RACK_LABEL

from .topology_rule import level_codes

#: The levels measured, widest first, by the short name results.json uses.
MEASURED = (("block", BLOCK_LABEL), ("rack", RACK_LABEL))


def domain_counts(placements: Iterable[Sequence[int]], codes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per level (``codes``: short name -> each node's domain code), how many domains each gang's
    nodes (indices) are in."""
    counts: dict[str, list[int]] = {name: [] for name in codes}
    for nodes in placements:
        where = np.asarray(nodes, dtype=np.int64)
        for name, level in codes.items():
            counts[name].append(len(np.unique(level[where])))
    return {name: np.array(values, dtype=np.int64) for name, values in counts.items()}


def shares(counts: dict[str, np.ndarray]) -> dict:
    """How many gangs, and per level the share inside one domain and the average number of
    domains; no gang gives a count of 0 and None figures."""
    levels = {}
    count = 0
    for name, values in counts.items():
        count = len(values)
        levels[name] = {
            "one_domain_share": round(float((values == 1).mean()), 4) if count else None,
            "avg_domains": round(float(values.mean()), 3) if count else None,
        }
    return {"gangs": count, "levels": levels}


def spread(placements: Iterable[Sequence[int]], codes: dict[str, np.ndarray]) -> dict:
    """``shares`` of gangs placed on the given node indices."""
    return shares(domain_counts(placements, codes))


class TopologyBook:
    def __init__(self, nodes: tuple[Node, ...]) -> None:
        self.codes = {name: level_codes(nodes, level) for name, level in MEASURED}
        self.placed: dict[int, np.ndarray] = {}  # job index -> distinct nodes at its last start
        self.eligible: set[int] = set()

    def start(self, job: int, nodes: Sequence[int], eligible: bool) -> None:
        self.placed[job] = np.unique(np.asarray(nodes, dtype=np.int64))
        if eligible:
            self.eligible.add(job)

    def summary(self) -> dict:
        """Per job that started (``jobs``, trace indices, in order): how many nodes it landed on,
        whether it is eligible, and per level how many domains it spans; ``metrics.py`` groups
        them (multi-node, eligible, by size) with ``shares`` and adds the waits."""
        jobs = sorted(self.placed)
        return {
            "jobs": np.array(jobs, dtype=np.int64),
            "nodes": np.array([len(self.placed[job]) for job in jobs], dtype=np.int64),
            "eligible": np.array([job in self.eligible for job in jobs], dtype=bool),
            "domains": domain_counts((self.placed[job] for job in jobs), self.codes),
        }
