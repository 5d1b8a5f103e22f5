"""Metrics of a 2-job trace, computed by hand."""

import pytest

from scheduler_core.simulation.metrics import summarise

from .helpers import run, trace_text

# One node with 2 GPUs. J1 (1 GPU) runs 0-100. J2 (2 workers x 1 GPU) arrives at 10.
TWO_GPUS = "1x{cpu=4,memory=8Gi,nvidia.com/gpu=2}"
TWO_JOBS = trace_text("J1,0,1,1,100,1,1Gi,1,0,", "J2,10,2,2,50,1,1Gi,1,0,")


@pytest.mark.parametrize("policy", ["gangsched", "pod"])
def test_the_metrics_of_a_two_job_trace(policy):
    metrics = summarise(run(TWO_JOBS, TWO_GPUS, policy))
    # J1: wait 0, JCT 100. J2 starts when J1 ends: wait 90, JCT 140.
    assert metrics["jobs_total"] == metrics["jobs_finished"] == 2
    assert metrics["avg_wait_s"] == 45.0
    assert metrics["p50_wait_s"] == 45.0
    assert metrics["p95_wait_s"] == pytest.approx(85.5)  # linear interpolation between 0 and 90
    assert metrics["avg_jct_s"] == 120.0
    assert metrics["makespan_s"] == 150.0
    # GPU-seconds of running jobs: 1 x 100 + 2 x 50 = 200, over 2 GPUs x 150 s.
    assert metrics["utilization"]["nvidia.com/gpu"] == pytest.approx(200 / 300, abs=1e-4)
    # CPU: (1 x 100 + 2 x 50) cores x s over 4 cores x 150 s.
    assert metrics["utilization"]["cpu"] == pytest.approx(200 / 600, abs=1e-4)
    assert metrics["deadlocked_jobs"] == 0
    assert metrics["cycles"] >= 2
    # J1 asks 1 GPU in all, J2 2 (2 workers x 1): each its own size class.
    assert metrics["wait_by_size"] == {
        "1": {"jobs": 1, "started": 1, "avg_wait_s": 0.0, "p95_wait_s": 0.0},
        "2-8": {"jobs": 1, "started": 1, "avg_wait_s": 90.0, "p95_wait_s": 90.0},
    }


def test_pod_at_a_time_wastes_what_a_half_placed_gang_holds():
    pod = summarise(run(TWO_JOBS, TWO_GPUS, "pod"))
    gang = summarise(run(TWO_JOBS, TWO_GPUS, "gangsched"))
    # Under pod, J2's first worker holds the free GPU from t=10 until J2 starts at t=100.
    assert pod["waste_resource_hours"]["nvidia.com/gpu"] == pytest.approx(90 / 3600, abs=1e-3)
    assert pod["waste_resource_hours"]["cpu"] == pytest.approx(90 / 3600, abs=1e-3)
    assert gang["waste_resource_hours"] == {"cpu": 0.0, "memory": 0.0, "nvidia.com/gpu": 0.0}


def test_unfinished_jobs_count_in_the_total_but_not_in_the_averages():
    # J2 needs 3 GPUs on a 2-GPU node: it never starts under any policy.
    text = trace_text("J1,0,1,1,100,1,1Gi,1,0,", "J2,10,3,3,50,1,1Gi,1,0,")
    metrics = summarise(run(text, TWO_GPUS, "gangsched"))
    assert metrics["jobs_total"] == 2 and metrics["jobs_finished"] == 1
    assert metrics["jobs_never_started"] == 1
    assert metrics["avg_wait_s"] == 0.0 and metrics["avg_jct_s"] == 100.0
    assert metrics["wait_by_size"]["2-8"] == {"jobs": 1, "started": 0, "avg_wait_s": None, "p95_wait_s": None}
