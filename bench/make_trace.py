"""Gang traces for the replay benchmark, written as gangsched CSVs: a busy production-like GPU
cluster (``production``), the Tiresias trace compressed in time (``tiresias-scaled``), or
submitters who send series of the same job (``series``).

    python bench/make_trace.py [production] [--jobs 10000] [--nodes 1000] [--load 1.3] [--seed 7]
                               [--memory-per-gpu 64] [--out bench/results/simulate/production-10k.csv]
    python bench/make_trace.py tiresias-scaled [--copies 10] [--nodes 32] [--gpus-per-node 4]
                               [--load 1.3] [--out bench/results/simulate/tiresias-600-load1.3.csv]
    python bench/make_trace.py series [--jobs 2000] [--nodes 32] [--load 1.3] [--seed 11]
                               [--out bench/results/simulate/series-2k.csv]

There is no public 10,000-job gang trace with its cluster, and the 60-job Tiresias trace
(traces/tiresias-60-jobs.csv: 1/2/4/8-GPU jobs, 121-1,800 s, on 32 nodes x 4 GPUs)
uses 6.4% of its cluster, so nothing in it ever queues. Both traces below are drawn from a
distribution stated here *before* any policy was measured on them; nothing is fitted to a result.

``production``: the shape of production GPU training traces
-------------------------------------------------------------

* Microsoft Philly (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN
  Training Workloads", USENIX ATC 2019, arXiv:1901.05758; trace github.com/msr-fiddle/philly-traces):
  most jobs use one GPU, a minority use several servers (up to 128+ GPUs), servers have 2-8
  GPUs, and large jobs wait longest because a gang needs whole, co-located servers.
* SenseTime Helios (Hu et al., "Characterization and Prediction of Deep Learning Workloads in
  Large-Scale GPU Datacenters", SC 2021, arXiv:2109.01313; trace github.com/S-Lab-System-Group/HeliosData):
  8-GPU nodes; single-GPU jobs are the majority of GPU jobs, while jobs of 8 GPUs and more are a
  small share of the jobs and take most of the GPU time; clusters run with queues at high
  utilisation.
* Alibaba PAI (Weng et al., "MLaaS in the Wild", NSDI 2022; trace github.com/alibaba/clusterdata,
  cluster-trace-gpu-v2020): most tasks ask for one GPU or less, with a long tail of
  multi-instance jobs.

From those, a job asks for ``G`` GPUs with these probabilities (the shape the three papers share:
a 1-GPU majority, a heavy multi-node tail up to 256 GPUs; the exact figures are ours, rounded):

    G      1     2     4     8     16    32    64    128    256
    P      0.60  0.10  0.10  0.10  0.04  0.03  0.02  0.008  0.002

1 to 8 GPUs fit on one node and run as one pod of ``G`` GPUs (one process per node, as
``torchrun`` launches them); 16 GPUs and more run as ``G / 8`` workers of 8 GPUs, i.e. whole
nodes, all required (``min_workers = workers``). Each GPU comes with a GPU's share of the node,
8 CPUs and 64Gi (``--memory-per-gpu`` GiB: 32 fits every node of Alibaba's ``openb`` list, whose
8-GPU G2 servers have 384Gi), so CPU and memory never bind before GPUs. About 6.4 GPUs per job on average;
jobs of 16 GPUs and more are 10% of the jobs and 69% of the GPUs asked (and, durations being
drawn independently of size, of the GPU time).

Durations: one of the 60 Tiresias durations at random, times a log-normal factor (sigma 0.3,
median 1) so that 10,000 jobs are not 60 durations repeated. Submissions: a Poisson process at
the rate that gives an offered load of ``--load`` (GPU-seconds asked per second / GPUs of the
cluster), 1.3 by default: more work arrives than the cluster can run for the whole submission
window, so a backlog builds up and then drains, as in the busy periods of Philly and Helios.
Both values are the previous generator's (which drew 1-GPU workers only); only the job shapes
changed.

Submitters (the ``user`` column, for replays that learn runtimes, ``--runtimes learned``): one
of 100 users ``u000``..``u099``, user ``k`` with a weight 1/(k+1) (a few heavy users submit most
jobs, as every production log shows: Feitelson, *Workload Modeling for Computer Systems
Performance Evaluation*, 2015, ch. 8), drawn from a generator of its own (seeded ``(seed, 1)``)
after everything else, so the other columns are those of the trace without users, byte for
byte, and so are every replay's decisions under ``--runtimes oracle``. The user is drawn
independently of the job's size and duration: in this trace history predicts a runtime no
better than the spread of the durations allows.

Why not heavier-tailed durations? Tried first (sigma 1, load 1.0): 10,000 jobs on 8,000 GPUs
are only ~40 minutes of submissions, while sigma 1 makes the longest jobs run for hours, so
most of the "offered" GPU-seconds run after the window: every policy measured a GPU
utilisation of 8% over the replay and an average wait near one second. A 10,000-job trace on
1,000 nodes can only be busy with durations short against its window, as the Tiresias ones are.

``tiresias-scaled``: the Tiresias trace itself, busy
----------------------------------------------------

The 60 Tiresias jobs as the trace reader reads them (``num_gpu`` workers x 1 GPU, 10 CPUs and
64Gi each, all required), ``--copies`` times back to back (each copy with the trace's own
arrival pattern, one mean inter-arrival time after the previous), every submission time
multiplied by the one factor that makes the offered load (total GPU-seconds / (GPUs x
submission span)) ``--load`` on the cluster: the Tiresias sizes, durations and arrival pattern,
on a cluster they keep busy (the same 1.3 as ``production`` by default). The ``user`` of a job
is its Tiresias ``model_name`` (``vgg19``, ...), the stand-in the trace reader takes for a
Tiresias trace (``scheduler_core/simulation/runtime_view.py``). One copy is too short
to load anything: its 26,624 GPU-seconds fill n32g4 for 208 s, about one mean job duration
(178 s), so the cluster drains before it ever fills. Ten copies (the default, 600 jobs) make
the submission window (~1,600 s at load 1.3) about nine mean durations long, so the cluster
reaches a steady state.

``series``: the same job, again and again
-----------------------------------------

Users run the same job many times in a row: Feitelson and Nitzberg found most jobs of the NASA
Ames iPSC/860 log to be repeated runs of the same application by the same user ("Job
characteristics of a production parallel scientific workload on the NASA Ames iPSC/860", JSSPP
1995), the observation EASY++'s predictor rests on (Tsafrir, Etsion and Feitelson, IEEE TPDS
2007); Philly's users, too, resubmit the same training job (retries and hyperparameter
searches: Jeon et al., ATC 2019). A *series* is one user's runs of one job: its size is drawn as
``production``'s up to 64 GPUs (the 128- and 256-GPU classes left out, the rest renormalised:
the cluster has 256 GPUs), its base duration as ``production``'s (a Tiresias duration times
log-normal(0, 0.3)), each run's duration is the base times log-normal(0, ``RUN_SIGMA`` = 0.1)
(reruns of one job differ by about 10%), and a series has a geometric number of runs of mean
``SERIES_MEAN`` = 5. Its user: one of 40 (``u00``..``u39``), weights 1/(k+1) as above. Series
start as a Poisson process at the rate that gives an offered load of ``--load`` over the window
in which series start (the GPU-seconds of all their runs / (GPUs x that window)); a series'
later runs go on after it, so the cluster is busiest while series start, then drains. Each run
is submitted when the previous one would have ended had it started at once, plus a think time
drawn from an exponential of mean ``THINK_S`` = 60 s (so a run is often submitted before the
previous one ended, when the cluster is busy). Job ids are
``<user>-s<series>-<run>``, whose name stem (``runtime_view.py``) is the series: a user's two
series are two different jobs. 2,000 jobs on 32 nodes x 8 GPUs (seed 11).

The same arguments give the same file, byte for byte.
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
from scheduler_core.simulation.traces import GPU, TIRESIAS_WORKER, Job, load_trace, write_gangsched_csv  # noqa: E402

SOURCE = find_trace("tiresias-60-jobs.csv")
OUT = ROOT / "bench" / "results" / "simulate"
GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
GPU_SHARES = (0.60, 0.10, 0.10, 0.10, 0.04, 0.03, 0.02, 0.008, 0.002)
NODE_GPUS = 8  # a worker of a multi-node job is a whole node
PER_GPU = {"cpu": 8_000, "memory": 64 * 2**30}
DURATION_SIGMA = 0.3
PRODUCTION_USERS = 100
SERIES_USERS = 40
SERIES_MEAN = 5.0
RUN_SIGMA = 0.1
THINK_S = 60.0
# ``series``: production's sizes up to 64 GPUs (the cluster is 256 GPUs), renormalised.
SERIES_COUNTS = GPU_COUNTS[:7]
SERIES_SHARES = tuple(share / sum(GPU_SHARES[:7]) for share in GPU_SHARES[:7])


def production_jobs(
    jobs: int, gpus: int, load: float, seed: int, source: Path = SOURCE, memory_per_gpu: int = 64
) -> list[Job]:
    """``jobs`` jobs of the documented size distribution at an offered load of ``load`` on ``gpus``."""
    durations_source = np.array([job.duration for job in load_trace(source).jobs])
    rng = np.random.default_rng(seed)
    sizes = rng.choice(np.array(GPU_COUNTS), size=jobs, p=np.array(GPU_SHARES))
    durations = rng.choice(durations_source, size=jobs) * rng.lognormal(0.0, DURATION_SIGMA, size=jobs)
    durations = np.maximum(np.round(durations), 1.0)
    rate = load * gpus / float((sizes * durations).mean())  # jobs per second
    submits = np.round(np.cumsum(rng.exponential(1.0 / rate, size=jobs)), 3)
    users = _users(PRODUCTION_USERS, jobs, (seed, 1), 3)  # a generator of its own: nothing else moves
    width = len(str(jobs - 1))
    made = []
    for i in range(jobs):
        workers, requests = _shape(int(sizes[i]), memory_per_gpu)
        made.append(
            Job(
                id=f"job-{i:0{width}d}",
                submit=float(submits[i]),
                workers=workers,
                min_workers=workers,
                duration=float(durations[i]),
                requests=requests,
                user=str(users[i]),
            )
        )
    return made


def _users(count: int, how_many: int, seed, width: int) -> np.ndarray:
    """``how_many`` users of ``count``, user ``k`` with weight 1/(k+1)."""
    weights = 1.0 / np.arange(1, count + 1)
    drawn = np.random.default_rng(seed).choice(count, size=how_many, p=weights / weights.sum())
    return np.array([f"u{k:0{width}d}" for k in drawn])


def _shape(size: int, memory_per_gpu: int = 64) -> tuple[int, dict[str, int]]:
    """Workers and per-worker requests of a job of ``size`` GPUs (see the module docstring)."""
    workers, per_worker = (1, size) if size <= NODE_GPUS else (size // NODE_GPUS, NODE_GPUS)
    per_gpu = {**PER_GPU, "memory": memory_per_gpu * 2**30}
    requests = {resource: amount * per_worker for resource, amount in per_gpu.items()}
    requests[GPU] = per_worker
    return workers, requests


def series_jobs(jobs: int, gpus: int, load: float, seed: int, source: Path = SOURCE) -> list[Job]:
    """``jobs`` jobs in series of runs of the same job by the same user (module docstring)."""
    durations_source = np.array([job.duration for job in load_trace(source).jobs])
    rng = np.random.default_rng(seed)
    series = []  # (size, runs' durations)
    total = 0
    while total < jobs:
        size = int(rng.choice(np.array(SERIES_COUNTS), p=np.array(SERIES_SHARES)))
        base = float(rng.choice(durations_source)) * float(rng.lognormal(0.0, DURATION_SIGMA))
        runs = min(int(rng.geometric(1.0 / SERIES_MEAN)), jobs - total)
        durations = np.maximum(np.round(base * rng.lognormal(0.0, RUN_SIGMA, size=runs)), 1.0)
        series.append((size, durations))
        total += runs
    gaps = rng.exponential(1.0, size=len(series))  # between series starts, at rate 1
    thinks = [rng.exponential(THINK_S, size=len(durations)) for _size, durations in series]
    users = _users(SERIES_USERS, len(series), (seed, 1), 2)

    def made(rate: float) -> list[Job]:
        out = []
        for number, ((size, durations), start) in enumerate(zip(series, np.cumsum(gaps / rate), strict=True)):
            workers, requests = _shape(size)
            when = float(start)
            for run, duration in enumerate(durations):
                out.append(
                    Job(
                        id=f"{users[number]}-s{number:04d}-{run:02d}",
                        submit=round(when, 3),
                        workers=workers,
                        min_workers=workers,
                        duration=float(duration),
                        requests=requests,
                        user=str(users[number]),
                    )
                )
                when += float(duration) + float(thinks[number][run])
        return sorted(out, key=lambda job: (job.submit, job.id))

    work = sum(size * float(durations.sum()) for size, durations in series)
    return made(load * gpus * len(series) / work)  # series per second: ``load`` over their starts


def tiresias_scaled_jobs(gpus: int, load: float, copies: int = 1, source: Path = SOURCE) -> list[Job]:
    """The Tiresias jobs, ``copies`` times back to back, compressed in time to a load of ``load``."""
    base = load_trace(source).jobs
    first = min(job.submit for job in base)
    period = max(job.submit for job in base) - first
    gap = period / (len(base) - 1)  # between two copies: the trace's mean inter-arrival time
    repeated = [(k * (period + gap) + job.submit - first, k, job) for k in range(copies) for job in base]
    span = repeated[-1][0]
    factor = copies * _gpu_seconds(base) / (gpus * span * load)
    width = len(str(copies - 1))
    return [
        Job(
            id=job.id if copies == 1 else f"{k:0{width}d}-{job.id}",
            submit=round(when * factor, 3),
            workers=job.workers,
            min_workers=job.min_workers,
            duration=job.duration,
            requests=TIRESIAS_WORKER,
            user=job.user,  # the model name (the Tiresias reader's stand-in)
        )
        for when, k, job in repeated
    ]


def _gpu_seconds(jobs) -> float:
    return float(sum(job.workers * job.requests.get(GPU, 0) * job.duration for job in jobs))


def offered_load(jobs: list[Job], gpus: int) -> float:
    """GPU-seconds asked / (GPUs x the submission span): the load the generators aim at."""
    span = max(job.submit for job in jobs) - min(job.submit for job in jobs)
    return _gpu_seconds(jobs) / (gpus * span) if span else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "kind", nargs="?", choices=("production", "tiresias-scaled", "series"), default="production"
    )
    parser.add_argument("--jobs", type=int, default=None, help="10000 (production), 2000 (series)")
    parser.add_argument(
        "--nodes", type=int, default=None, help="1000 (production), 32 (tiresias-scaled), 32 (series)"
    )
    parser.add_argument("--gpus-per-node", type=int, default=None, help="8 (production), 4 (tiresias-scaled)")
    parser.add_argument("--load", type=float, default=1.3, help="offered load (default 1.3)")
    parser.add_argument("--seed", type=int, default=None, help="7 (production), 11 (series)")
    parser.add_argument("--memory-per-gpu", type=int, default=64, help="GiB, production only (64)")
    parser.add_argument("--copies", type=int, default=10, help="tiresias-scaled only")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.kind == "production":
        gpus = (args.nodes or 1000) * (args.gpus_per_node or NODE_GPUS)
        jobs = production_jobs(
            args.jobs or 10_000,
            gpus,
            args.load,
            7 if args.seed is None else args.seed,
            memory_per_gpu=args.memory_per_gpu,
        )
        out = args.out or OUT / "production-10k.csv"
    elif args.kind == "series":
        gpus = (args.nodes or 32) * (args.gpus_per_node or NODE_GPUS)
        jobs = series_jobs(args.jobs or 2_000, gpus, args.load, 11 if args.seed is None else args.seed)
        out = args.out or OUT / "series-2k.csv"
    else:
        gpus = (args.nodes or 32) * (args.gpus_per_node or 4)
        jobs = tiresias_scaled_jobs(gpus, args.load, args.copies)
        out = args.out or OUT / f"tiresias-{60 * args.copies}-load{args.load:g}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as handle:
        write_gangsched_csv(jobs, handle)
    span = max(job.submit for job in jobs) - min(job.submit for job in jobs)
    print(
        f"wrote {out}: {len(jobs)} jobs over {span / 3600:.2f} h, "
        f"offered load {offered_load(jobs, gpus):.3f} on {gpus} GPUs"
    )


if __name__ == "__main__":
    main()
