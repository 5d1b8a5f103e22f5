"""One comparison: a trace on a cluster under several policies, and the files it writes.

Policies replay independently, so with ``processes`` > 1 each runs in a process of its own,
started for it and ended after it (``max_tasks_per_child=1``: no policy inherits another's
heap), ``processes`` at a time (the comparison of five policies uses both cores of a small
machine). Inside a daemonic process (a
Celery prefork child) no children may be started, so callers there pass ``processes=1``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from scheduler_core.engine.config import HeadOfLine
from scheduler_core.simulation.rack_labels import LEVELS, NODES_PER_RACK, RACKS_PER_BLOCK

from .clusters import Cluster
from .metrics import summarise
from .outcome import Replay
from .plots import write_plots
from .policies import Policy
from .replay import ReplayOptions, replay
from .tenants import DEFAULT_QUEUES, parse_queues
from .traces import Trace

RESULTS = "results.json"


@dataclass
class Comparison:
    trace: Trace
    cluster: Cluster
    replays: list[Replay]
    options: ReplayOptions

    def results(self) -> dict:
        return {
            "trace": self.trace.name,
            "cluster": self.cluster.name,
            "jobs": len(self.trace.jobs),
            "nodes": len(self.cluster.nodes),
            "tick_s": self.options.tick,
            "queue_window": self.options.queue_window,
            "runtimes": self.options.runtimes,
            **({"queues": self.options.queues.spec} if self.options.queues is not None else {}),
            "topology": {
                "levels": list(LEVELS),
                "nodes_per_rack": NODES_PER_RACK,
                "racks_per_block": RACKS_PER_BLOCK,
                "mode": self.options.topology,  # the constraint gangsched-topology gives
            },
            "policies": {replay.policy: summarise(replay) for replay in self.replays},
        }


def compare(
    trace: Trace,
    cluster: Cluster,
    policies: list[Policy],
    options: ReplayOptions | None = None,
    processes: int = 1,
    progress: Callable[[float], None] | None = None,
) -> Comparison:
    """Replay every policy; ``progress`` gets the fraction done (0..1) now and then."""
    options = options or ReplayOptions()
    if options.queues is None and any(policy.queues for policy in policies):
        # Every policy measured on the same tenants, those without queues too.
        options = dataclasses.replace(options, queues=parse_queues(DEFAULT_QUEUES))
    processes = max(1, min(processes, len(policies), os.cpu_count() or 1))
    if processes == 1:
        replays = []
        for done, policy in enumerate(policies):
            step = _scaled(progress, done, len(policies))
            local = ReplayOptions(**{**options.__dict__, "progress": step})
            replays.append(replay(trace, cluster, policy, local))
            if progress is not None:
                progress((done + 1) / len(policies))
    else:
        quiet = ReplayOptions(**{**options.__dict__, "progress": None})
        # Backfilling plans make a RESERVE policy the slowest replay: started first, it does
        # not run alone at the end while the other process is idle.
        first = sorted(policies, key=lambda policy: policy.config.head_of_line != HeadOfLine.RESERVE)
        with ProcessPoolExecutor(max_workers=processes, max_tasks_per_child=1) as pool:
            futures = {policy.name: pool.submit(replay, trace, cluster, policy, quiet) for policy in first}
            replays = []
            for done, policy in enumerate(policies):
                replays.append(futures[policy.name].result())
                if progress is not None:
                    progress((done + 1) / len(policies))
    return Comparison(trace, cluster, replays, options)


def _scaled(progress: Callable[[float], None] | None, done: int, total: int):
    if progress is None:
        return None
    return lambda fraction: progress((done + fraction) / total)


def write_outputs(comparison: Comparison, out: Path) -> tuple[dict, list[Path]]:
    """``out/results.json`` and the PNG plots; returns the results and the plot paths."""
    out.mkdir(parents=True, exist_ok=True)
    results = comparison.results()
    (out / RESULTS).write_text(json.dumps(results, indent=2) + "\n")
    title = f"{comparison.trace.name} ({len(comparison.trace.jobs)} jobs) on {comparison.cluster.name}"
    return results, write_plots(comparison.replays, out, title)
