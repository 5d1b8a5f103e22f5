"""bench/make_flood_trace.py: the long-flood trace of the queue replay, as its docstring states it."""

import pytest

from scheduler_core.simulation import parse_trace
from scheduler_core.simulation.tenants import assign, parse_queues
from scheduler_core.simulation.traces import GPU

from .helpers import bench_module, csv_text

TREE = "lab/nlp=20%,lab/vision=20%,ops/batch=10%,ops/dev=0%"


@pytest.fixture(scope="module")
def flood():
    return bench_module("make_flood_trace")


def test_the_flood_fills_the_cluster_with_long_jobs_before_anyone_else_submits(flood):
    jobs = flood.flood_jobs(nodes=8, gpus_per_node=4, hours=1.0, load=0.8, seed=3)
    dev = [job for job in jobs if job.queue == "dev"]
    others = [job for job in jobs if job.queue != "dev"]
    assert len(dev) == 8 and sum(job.workers * job.requests[GPU] for job in dev) == 32
    assert all(job.duration == 3600.0 and job.submit < 60.0 for job in dev)
    assert {job.queue for job in others} == {"nlp", "vision", "batch"}
    assert min(job.submit for job in others) >= flood.START_OTHERS_S
    assert max(job.submit for job in others) < 3600.0
    asked = sum(job.workers * job.requests[GPU] * job.duration for job in others)
    assert asked / (32 * (3600.0 - flood.START_OTHERS_S)) == pytest.approx(0.8, rel=0.25)
    assert [job.submit for job in jobs] == sorted(job.submit for job in jobs)


def test_same_arguments_same_file_and_the_replay_tree_takes_its_queues(flood):
    first = csv_text(flood.flood_jobs(8, 4, 1.0, 0.8, 3))
    assert first == csv_text(flood.flood_jobs(8, 4, 1.0, 0.8, 3))
    assert first != csv_text(flood.flood_jobs(8, 4, 1.0, 0.8, 4))
    trace = parse_trace(first, "long-flood.csv")
    placed = assign(trace, parse_queues(TREE))
    assert {job.queue for job in placed.jobs} == {"dev", "nlp", "vision", "batch"}
