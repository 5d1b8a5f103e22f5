"""A multi-tenant trace where one team holds borrowed GPUs with long jobs (trace replay with queues).

    python bench/make_flood_trace.py [--nodes 32] [--gpus-per-node 4] [--hours 2] [--load 0.8]
                                     [--seed 11] [--out bench/results/simulate/long-flood.csv]

The case queues with reclaim exist for, and the one KAI-Scheduler #1934 reports: a team with
little or no guarantee fills an idle cluster with long jobs, then the other teams submit.
Reclaim that only restores guarantees (Kueue's reclaimWithinCohort, KAI-Scheduler) gives the
others their guarantees back but leaves the flooding team everything above them until its jobs
end, however many teams wait; reclaim up to the fair share splits what is above the guarantees
among the teams with demand. The tenants' jobs in ``bench/make_trace.py``'s traces are minutes
long, so waiting for them to end costs little and both rules measure alike; this trace is where
they differ. The shape is fixed here, before any policy was measured on it:

* **dev** (the ``queue`` column names the leaf of ``manage.py simulate --queues``) submits one
  4-GPU job per node of the cluster in the first minute (4 workers x 1 GPU, Tiresias' worker
  shape), each running ``--hours`` hours: the cluster is full.
* **nlp**, **vision** and **batch** then submit from minute 5 to the end of the window, each a
  Poisson stream at a third of ``--load`` (GPU-seconds asked per second / GPUs), of jobs drawn
  from the Tiresias trace (1-8 workers of one GPU, 121-1,800 s), so together they ask for
  ``--load`` of the cluster.

The same arguments give the same file, byte for byte. Replay it with a tree whose guarantees
leave part of the cluster to share, as ``bench/simulate_queues.sh`` does:
``lab/nlp=20%,lab/vision=20%,ops/batch=10%,ops/dev=0%``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scheduler_core.simulation.trace_files import find_trace  # noqa: E402
from scheduler_core.simulation.traces import TIRESIAS_WORKER, Job, load_trace, write_gangsched_csv  # noqa: E402

SOURCE = find_trace("tiresias-60-jobs.csv")
OUT = ROOT / "bench" / "results" / "simulate"
FLOODER = "dev"
OTHERS = ("nlp", "vision", "batch")
START_OTHERS_S = 300.0


def flood_jobs(nodes: int, gpus_per_node: int, hours: float, load: float, seed: int) -> list[Job]:
    """The trace of the module docstring, sorted by submission time."""
    rng = np.random.default_rng(seed)
    window = hours * 3600.0
    jobs = [
        Job(
            id=f"{FLOODER}-{i:03d}",
            submit=round(60.0 * i / nodes, 3),
            workers=gpus_per_node,
            min_workers=gpus_per_node,
            duration=window,
            requests=TIRESIAS_WORKER,
            queue=FLOODER,
        )
        for i in range(nodes)
    ]
    base = load_trace(SOURCE).jobs
    mean_gpu_seconds = float(np.mean([job.workers * job.duration for job in base]))
    rate = load / len(OTHERS) * nodes * gpus_per_node / mean_gpu_seconds  # jobs per second per team
    for team in OTHERS:
        when, count = START_OTHERS_S, 0
        while True:
            when += float(rng.exponential(1.0 / rate))
            if when >= window:
                break
            job = base[int(rng.integers(len(base)))]
            jobs.append(
                Job(
                    id=f"{team}-{count:04d}",
                    submit=round(when, 3),
                    workers=job.workers,
                    min_workers=job.min_workers,
                    duration=job.duration,
                    requests=TIRESIAS_WORKER,
                    queue=team,
                )
            )
            count += 1
    return sorted(jobs, key=lambda job: (job.submit, job.id))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=32)
    parser.add_argument("--gpus-per-node", type=int, default=4)
    parser.add_argument("--hours", type=float, default=2.0, help="the flood's run time and the window")
    parser.add_argument("--load", type=float, default=0.8, help="what the other teams ask for together")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=OUT / "long-flood.csv")
    args = parser.parse_args()
    jobs = flood_jobs(args.nodes, args.gpus_per_node, args.hours, args.load, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as handle:
        write_gangsched_csv(jobs, handle)
    print(f"wrote {args.out}: {len(jobs)} jobs, {sum(j.queue != FLOODER for j in jobs)} after the flood")


if __name__ == "__main__":
    main()
