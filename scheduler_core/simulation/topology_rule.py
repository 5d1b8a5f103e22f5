"""Which replayed gangs get a topology constraint, and which one.

A trace says nothing of topology, so the replay gives constraints by one fixed rule, the same
for every trace:

- a job is **eligible** when it has more than one worker and some node of the cluster cannot
  hold all of them (its whole request exceeds that node's allocatable in some resource): its
  members may then land on more than one node. On a cluster of one node shape that is "its whole
  request exceeds one node". A job that fits on every node is left unconstrained;
- mode ``preferred`` (the default, ``--topology preferred``): an eligible gang prefers one rack
  (``TopologyConstraint(preferred=rack)``): the engine takes the smallest domain that fits,
  widening rack -> block -> the whole cluster, so nothing waits for a rack;
- mode ``required`` (``--topology required``): an eligible gang must be inside one domain of the
  narrowest level, rack then block, with a domain that can hold all its workers on empty nodes
  (and prefers one rack inside its block); a gang no block can hold gets ``preferred=rack``, since
  requiring a level it can never fit would leave it waiting forever.

The cluster's topology is ``rack_labels.LEVELS`` (block > rack > host), the labels every replay
cluster carries (``clusters.py``).
"""

from __future__ import annotations

import numpy as np

from scheduler_core.engine.model import Node, Topology, TopologyConstraint
from scheduler_core.simulation.rack_labels import BLOCK_LABEL, LEVELS, RACK_LABEL, TOPOLOGY_NAME

MODES = ("preferred", "required")


class TopologyModeError(ValueError):
    pass


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise TopologyModeError(f"unknown topology mode {mode!r}: choose {' or '.join(MODES)}")
    return mode


def level_codes(nodes: tuple[Node, ...], level: str) -> np.ndarray:
    """Each node's domain at ``level`` as an integer; a node without the label is a domain of its
    own (negative codes), so a gang over unlabelled nodes is never counted as inside one domain."""
    known: dict[str, int] = {}
    codes = np.empty(len(nodes), dtype=np.int64)
    for i, node in enumerate(nodes):
        value = node.labels.get(level)
        codes[i] = known.setdefault(value, len(known)) if value is not None else -1 - i
    return codes


class TopologyRule:
    def __init__(self, nodes: tuple[Node, ...], alloc: np.ndarray, mode: str = "preferred") -> None:
        self.mode = check_mode(mode)
        self.topology = Topology(TOPOLOGY_NAME, LEVELS)
        self.alloc = alloc
        # Narrowest first: the order ``required`` tries them in.
        self.levels = [(level, level_codes(nodes, level)) for level in (RACK_LABEL, BLOCK_LABEL)]
        self._cache: dict[tuple[bytes, int], TopologyConstraint | None] = {}

    def constraint(self, request: np.ndarray, workers: int) -> TopologyConstraint | None:
        """The job's constraint by the rule above; None: not eligible."""
        key = (request.tobytes(), workers)
        if key not in self._cache:
            self._cache[key] = self._constraint(request, workers)
        return self._cache[key]

    def eligible(self, request: np.ndarray, workers: int) -> bool:
        return self.constraint(request, workers) is not None

    def _constraint(self, request: np.ndarray, workers: int) -> TopologyConstraint | None:
        if workers < 2 or bool(np.all(self.alloc >= request * workers)):
            return None
        prefer = TopologyConstraint(preferred=RACK_LABEL, topology=TOPOLOGY_NAME)
        if self.mode == "preferred":
            return prefer
        wanted = request > 0
        if not wanted.any():
            return prefer
        copies = (self.alloc[:, wanted] // request[wanted].astype(np.int64)).min(axis=1)
        for level, codes in self.levels:
            labelled = codes >= 0
            if labelled.any() and np.bincount(codes[labelled], weights=copies[labelled]).max() >= workers:
                return TopologyConstraint(
                    required=level,
                    preferred=RACK_LABEL if level != RACK_LABEL else None,
                    topology=TOPOLOGY_NAME,
                )
        return prefer
