"""A trace job during a replay: its gang and pods as the engine sees them, and where it stands.

``replay.py`` creates one per submission and moves it between pending, holding and running;
``engine_view.py`` carries each cycle's result back into it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduler_core.engine.model import Gang, Pod
from scheduler_core.engine.runtimes import Estimate

NAMESPACE = "sim"


@dataclass
class Job:
    index: int
    gang: Gang
    pods: list[Pod]
    request: np.ndarray  # per resource of the replay
    min_workers: int
    duration: float  # the truth: when it ends once started (the engine is told ``seen``)
    priority: int
    order: tuple  # queue order among pending jobs
    start: float | None = None
    epoch: int = 0
    bound: int = 0
    held: int = 0  # bound or reserved
    view: list[Pod] | None = None  # what the engine sees of a running job (see ``EngineView._merge``)
    merged: int = 0  # how many pods at the front of ``view`` stand for bound pods
    hold_since: float | None = None  # permit timeout: when its pods began waiting at Permit
    queue: int = -1  # its queue in the replay's ``QueueBook``, when the replay has queues
    seen: Estimate | None = None  # the duration its pods carry: what the engine is told now
    at_start: Estimate | None = None  # ``seen`` when it started (what overrun enlarges)

    def set_pods(self, pods: list[Pod]) -> None:
        """Its pods after a cycle, with the counts of those bound and held."""
        self.pods = pods
        self.bound = sum(1 for pod in pods if pod.node is not None)
        self.held = self.bound + sum(1 for pod in pods if pod.node is None and pod.reserved_node)

    def contribution(self) -> tuple[np.ndarray, np.ndarray]:
        if self.start is not None:
            return self.request * self.bound, self.request * 0
        return self.request * 0, self.request * self.held
