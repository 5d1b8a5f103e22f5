"""bench/make_trace.py: the documented distributions, the load it aims at, the same file per seed."""

from collections import Counter

import pytest

from scheduler_core.simulation import load_trace, parse_trace
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES
from scheduler_core.simulation.traces import GPU

from .helpers import bench_module, csv_text

TIRESIAS = REPOSITORY_TRACES / "tiresias-60-jobs.csv"


@pytest.fixture(scope="module")
def make_trace():
    return bench_module("make_trace")


_csv = csv_text


def test_production_jobs_have_the_documented_shape_and_load(make_trace):
    jobs = make_trace.production_jobs(4000, gpus=800, load=1.0, seed=7)
    sizes = Counter(job.workers * job.requests[GPU] for job in jobs)
    assert set(sizes) <= set(make_trace.GPU_COUNTS)
    for count, share in zip(make_trace.GPU_COUNTS, make_trace.GPU_SHARES, strict=True):
        assert sizes[count] / len(jobs) == pytest.approx(share, abs=0.02)
    for job in jobs:
        gpus = job.requests[GPU]
        assert job.min_workers == job.workers
        if job.workers > 1:
            assert gpus == make_trace.NODE_GPUS  # multi-node jobs: whole nodes
        assert job.requests["cpu"] == 8_000 * gpus and job.requests["memory"] == 64 * 2**30 * gpus
    assert make_trace.offered_load(jobs, 800) == pytest.approx(1.0, rel=0.05)


def test_the_same_seed_writes_the_same_file_and_another_seed_does_not(make_trace):
    first = _csv(make_trace.production_jobs(200, gpus=80, load=1.0, seed=7))
    assert first == _csv(make_trace.production_jobs(200, gpus=80, load=1.0, seed=7))
    assert first != _csv(make_trace.production_jobs(200, gpus=80, load=1.0, seed=8))
    assert len(parse_trace(first).jobs) == 200  # a valid gangsched CSV


def test_tiresias_scaled_keeps_the_jobs_and_compresses_time_to_the_load(make_trace):
    base = load_trace(TIRESIAS).jobs
    once = make_trace.tiresias_scaled_jobs(128, load=1.0, copies=1)
    assert [(j.id, j.workers, j.duration) for j in once] == [(j.id, j.workers, j.duration) for j in base]
    assert make_trace.offered_load(once, 128) == pytest.approx(1.0, rel=1e-3)
    factor = once[-1].submit / (base[-1].submit - base[0].submit)
    assert [j.submit for j in once] == [
        pytest.approx((j.submit - base[0].submit) * factor, abs=1e-3) for j in base
    ]
    ten = make_trace.tiresias_scaled_jobs(128, load=1.0, copies=10)
    assert len(ten) == 600 and len({job.id for job in ten}) == 600
    assert make_trace.offered_load(ten, 128) == pytest.approx(1.0, rel=1e-3)
    assert [job.submit for job in ten] == sorted(job.submit for job in ten)
