"""A large gang trace drawn from the Tiresias trace's distribution, written as a gangsched CSV.

    python bench/make_trace.py [--jobs 10000] [--nodes 1000] [--gpus-per-node 8] [--load 1.3]
                               [--seed 7] [--out bench/results/simulate/tiresias-10k.csv]

There is no public 10,000-job gang trace with its cluster, so this one is drawn from the shared
60-job Tiresias trace (../shared/traces/tiresias-60-jobs.csv):

* Each job is one of the 60 jobs drawn at random (size and duration together, so the
  size/duration correlation is kept), its duration multiplied by a log-normal factor
  (sigma 0.3, median 1) so that 10,000 jobs are not 60 durations repeated.
* Gangs of ``num_gpu`` workers x 1 GPU, ``min_workers`` = ``num_gpu`` (as the reader does for the
  Tiresias trace), each worker with a GPU's share of a node (cpu 8, memory 64Gi on a
  {cpu=64, memory=512Gi, nvidia.com/gpu=8} node).
* Submissions are a Poisson process whose rate gives an offered load of ``--load`` (GPU-seconds
  asked per second / GPUs of the cluster). The Tiresias jobs are short (minutes) and 10,000 of
  them keep 8,000 GPUs busy for only ~10 minutes: at a load below 1 the queue stays nearly
  empty. The default, 1.3, submits faster than the cluster drains for the whole submission
  window (~7 minutes), so a backlog of about a thousand jobs builds up and then drains: the
  regime where policies can differ.

The same seed gives the same file, byte for byte.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scheduler_core.simulation.traces import GPU, Job, load_trace, write_gangsched_csv  # noqa: E402

SOURCE = ROOT.parent / "shared" / "traces" / "tiresias-60-jobs.csv"
WORKER = {"cpu": 8_000, "memory": 64 * 2**30, GPU: 1}
DURATION_SIGMA = 0.3


def make_jobs(jobs: int, gpus: int, load: float, seed: int, source: Path = SOURCE) -> list[Job]:
    base = load_trace(source).jobs
    rng = np.random.default_rng(seed)
    picks = rng.integers(len(base), size=jobs)
    sizes = np.array([base[i].workers for i in picks])
    durations = np.round(
        np.array([base[i].duration for i in picks]) * rng.lognormal(0.0, DURATION_SIGMA, size=jobs)
    )
    durations = np.maximum(durations, 1.0)
    mean_work = float((sizes * durations).mean())  # GPU-seconds per job
    rate = load * gpus / mean_work  # jobs per second
    submits = np.round(np.cumsum(rng.exponential(1.0 / rate, size=jobs)), 3)
    width = len(str(jobs - 1))
    return [
        Job(
            id=f"job-{i:0{width}d}",
            submit=float(submits[i]),
            workers=int(sizes[i]),
            min_workers=int(sizes[i]),
            duration=float(durations[i]),
            requests=WORKER,
        )
        for i in range(jobs)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1_000)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--load", type=float, default=1.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / "simulate" / "tiresias-10k.csv"
    )
    args = parser.parse_args()
    jobs = make_jobs(args.jobs, args.nodes * args.gpus_per_node, args.load, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as out:
        write_gangsched_csv(jobs, out)
    span = jobs[-1].submit - jobs[0].submit
    print(f"wrote {args.out}: {len(jobs)} jobs over {span / 3600:.2f} h, offered load {args.load}")


if __name__ == "__main__":
    main()
