"""The engine benchmark's two measurements (``engine.py``, ``engine_sweep.py``): throughput of
``run_cycle`` on a backlog, and the latency of a 1,000-gang cycle on a busy cluster.

Both keep a ``Carry`` across their cycles by default, as the worker does (``carry.py``), warmed by
one untimed cycle of the cluster before the first timed one: a running worker has seen the nodes
and the running pods before. ``carry=False`` builds the state afresh every cycle.
"""

from __future__ import annotations

import dataclasses
import gc
import time

import numpy as np
from engine_workload import busy_cluster, latency_snapshot, with_queue_tree, with_topology

from scheduler_core.engine import Carry, EngineConfig, Snapshot, apply_result, run_cycle


def measure_throughput(snapshot: Snapshot, max_cycles: int = 50, carry: bool = True) -> dict:
    config = EngineConfig()
    kept = Carry() if carry else None  # the worker's: what each cycle leaves to the next
    if kept is not None:
        # A running worker has seen the nodes before this backlog arrives: one cycle of the
        # empty cluster, untimed, builds what depends on the nodes alone (filters, capacity).
        run_cycle(dataclasses.replace(snapshot, pods=(), gangs=()), 990.0, config, kept)
    now = 1000.0
    total_binds = 0
    engine_s = 0.0
    cycles = []
    for _ in range(max_cycles):
        started = time.perf_counter()
        result = run_cycle(snapshot, now, config, kept)
        elapsed = time.perf_counter() - started
        engine_s += elapsed
        binds = len(result.binds)
        total_binds += binds
        cycles.append(
            {
                "binds": binds,
                "seconds": elapsed,
                "pods_considered": result.pods_considered,
                "timings": dict(result.timings),
            }
        )
        if binds == 0:
            break
        snapshot = apply_result(snapshot, result, now)
        now += 10.0
    return {
        "total_binds": total_binds,
        "engine_seconds": engine_s,
        "pods_per_second": total_binds / engine_s if engine_s else 0.0,
        "cycles": cycles,
        "final_snapshot": snapshot,
    }


class LatencyRuns:
    """The 1,000-gang cycles of one cluster size, one timed run at a time (``run``), so that a
    sweep can take the sizes' runs in turns: on a machine whose speed drifts, every size then
    sees the same drift, and their ratios stay true."""

    def __init__(
        self,
        nodes: int,
        gangs: int,
        cap: int,
        fill: float,
        queues: int = 0,
        topology: int = 0,
        carry: bool = True,
    ) -> None:
        self.now = 5000.0
        self.gangs, self.cap, self.queues, self.topology = gangs, cap, queues, topology
        self.base = busy_cluster(nodes, seed=7, fill=fill, now=self.now)
        self.walls: list[float] = []
        self.timings: list[dict] = []
        self.considered: list[int] = []
        self.results: list[dict] = []
        self.steady_walls: list[float] = []
        self.parked_counts: list[int] = []
        self.slowest = None
        self.kept = Carry() if carry else None
        if self.kept is not None:
            # A running worker's carry: one cycle of the running cluster, untimed, before the runs.
            warm = latency_snapshot(self.base, 0, seed=99, cap=cap)
            warm = with_topology(with_queue_tree(warm, queues), topology)
            run_cycle(warm, self.now - 1, EngineConfig(), self.kept)

    def run(self, index: int) -> None:
        """Time the cycle of run ``index`` (its pending gangs drawn with seed 100 + index)."""
        kept, now = self.kept, self.now + index
        seed = 100 + index
        snapshot = with_queue_tree(
            latency_snapshot(self.base, self.gangs, seed=seed, cap=self.cap), self.queues
        )
        snapshot = with_topology(snapshot, self.topology)
        if kept is not None and kept.nodes is not None:
            # with_topology labels new node objects each time; the worker's nodes stay the same
            # objects from cycle to cycle (and must, for the carry to apply).
            snapshot = dataclasses.replace(snapshot, nodes=kept.nodes)
        gc.collect()  # garbage from the previous run is not this cycle's cost
        started = time.perf_counter()
        result = run_cycle(snapshot, now, EngineConfig(), kept)
        wall = time.perf_counter() - started
        self.walls.append(wall)
        self.timings.append(result.timings)
        self.considered.append(result.pods_considered)
        self.results.append(
            {
                "seed": seed,
                "seconds": wall,
                "binds": len(result.binds),
                "reservations": len(result.reservations),
                "evictions": len(result.evictions),
                "unplaced_gangs": len(result.explanations),
                "preempting_gangs": sum(
                    1 for e in result.explanations.values() if e.reason.value == "Preempting"
                ),
            }
        )
        if kept is not None:
            steady, parked = _steady(snapshot, result, now, kept)
            self.steady_walls.append(steady)
            self.parked_counts.append(parked)
        if self.slowest is None or wall > self.slowest[0]:
            self.slowest = (wall, snapshot, now)

    def report(self) -> dict:
        walls, steady_walls, timings = self.walls, self.steady_walls, self.timings
        names = list(timings[0])
        return {
            "running_pods": len(self.base[2]),
            "running_gangs": len(self.base[1]),
            "walls": walls,
            "p50": float(np.percentile(walls, 50)),
            "p99": float(np.percentile(walls, 99)),
            "timings_p50": {name: float(np.median([t.get(name, 0.0) for t in timings])) for name in names},
            "pods_considered_p50": float(np.median(self.considered)),
            "outcomes": self.results,
            "slowest": self.slowest,
            # The same backlog STEADY_CYCLES cycles later, nothing having changed (``_steady``).
            "steady_walls": steady_walls,
            "steady_p50": float(np.percentile(steady_walls, 50)) if steady_walls else None,
            "steady_p99": float(np.percentile(steady_walls, 99)) if steady_walls else None,
            "steady_parked_p50": float(np.median(self.parked_counts)) if self.parked_counts else None,
        }


def measure_latency(
    nodes: int,
    gangs: int,
    runs: int,
    cap: int,
    fill: float,
    queues: int = 0,
    topology: int = 0,
    carry: bool = True,
) -> dict:
    """``runs`` timed 1,000-gang cycles of one size, one after the other (``LatencyRuns``)."""
    latency = LatencyRuns(nodes, gangs, cap, fill, queues, topology, carry)
    for index in range(runs):
        latency.run(index)
    return latency.report()


#: The cycle timed as the backlog's steady state: this many cycles after the cold one, a second
#: apart (the worker's period), with nothing changed in the cluster meanwhile.
STEADY_CYCLES = 5


def _steady(snapshot: Snapshot, result, now: float, kept: Carry) -> tuple[float, int]:
    """The wall time and parked units of the backlog's cycle ``STEADY_CYCLES`` seconds after
    ``result`` (the cold cycle's): with a carry, units that failed wait for an event or their
    backoff (``engine/requeue.py``), so a backlog the cluster cannot take costs little."""
    wall, parked = 0.0, 0
    for step in range(1, STEADY_CYCLES + 1):
        snapshot = apply_result(snapshot, result, now + step - 1)
        began = time.perf_counter()
        result = run_cycle(snapshot, now + step, EngineConfig(), kept)
        wall, parked = time.perf_counter() - began, result.parked
    return wall, parked
