"""Trace replay with queues: the tree, the tenant rule, the per-queue metrics
and the three queue policies on hand-made traces whose answers are worked out below."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from scheduler_core.simulation import (
    DEFAULT_QUEUES,
    QueueSpecError,
    ReplayOptions,
    TraceError,
    get_policies,
    load_cluster,
    parse_queues,
    parse_trace,
    replay,
)
from scheduler_core.simulation.metrics import summarise
from scheduler_core.simulation.queue_book import jain
from scheduler_core.simulation.tenants import FLOOD_SHARE, assign, tenant_draw

from .helpers import trace_text

# One node of 4 GPUs; queues a and b guaranteed one GPU each, c two. b floods with four 1-GPU
# jobs of 1,000 s at t=0 (c never submits, so b's fair share is all four GPUs); at t=10 a submits
# two 1-GPU jobs of 100 s. Fair shares from t=10: a 2, b 2 (the 2 GPUs c does not use are split
# between them by weight, 1 each, on top of their guarantees).
NODE = "1x{cpu=10,memory=64Gi,nvidia.com/gpu=4}"
TREE = "a=25%,b=25%,c=50%"
FLOOD = trace_text(
    "B1,0,1,1,1000,1,1Gi,1,0,b",
    "B2,0,1,1,1000,1,1Gi,1,0,b",
    "B3,0,1,1,1000,1,1Gi,1,0,b",
    "B4,0,1,1,1000,1,1Gi,1,0,b",
    "A1,10,1,1,100,1,1Gi,1,0,a",
    "A2,10,1,1,100,1,1Gi,1,0,a",
)


def _run(policy: str, text: str = FLOOD, tree: str = TREE, config=None):
    chosen = get_policies([policy])[0]
    if config is not None:
        chosen = dataclasses.replace(chosen, config=dataclasses.replace(chosen.config, **config))
    result = replay(
        parse_trace(text, "hand"), load_cluster(NODE), chosen, ReplayOptions(queues=parse_queues(tree))
    )
    return result, summarise(result)


def _times(result) -> list[tuple[float, float]]:
    return [(float(s), float(f)) for s, f in zip(result.start, result.finish, strict=True)]


# The same, but a's jobs run 300 s: longer than the reclaim delay (120 s).
LONG = FLOOD.replace("A1,10,1,1,100", "A1,10,1,1,300").replace("A2,10,1,1,100", "A2,10,1,1,300")


def test_fair_share_reclaim_without_delay_starts_the_late_tenant_at_once_and_counts_what_it_throws_away():
    """With no reclaim delay: a is below its fair share (0 of 2): it reclaims two of b's jobs, the
    youngest (B4, B3), and both of its jobs start at t=10. B3 and B4 ran 10 s on one GPU each: 20
    GPU-seconds thrown away. They restart from scratch when a's jobs end (t=110) and run their
    full 1,000 s."""
    result, metrics = _run("gangsched-queues", config={"reclaim_delay_s": 0})
    assert _times(result) == [(0, 1000), (0, 1000), (110, 1110), (110, 1110), (10, 110), (10, 110)]
    assert metrics["reclaim_evictions"] == 2
    assert metrics["queues"]["b"]["reclaim_evictions"] == 2
    assert metrics["queues"]["a"]["reclaim_evictions"] == 0
    assert metrics["reclaim_lost_gpu_hours"] == round(20 / 3600, 3)
    assert metrics["queues"]["a"]["avg_wait_s"] == 0
    assert metrics["queues"]["a"]["below_guarantee_s"] == 0
    # Every queue with demand always holds exactly its fair share.
    assert metrics["jain_index"] == 1.0
    assert metrics["jobs_finished"] == 6


def test_beyond_the_guarantee_fair_share_reclaim_waits_for_the_delay():
    """The default delay (120 s): A1 stays within a's guarantee (1 GPU) and reclaims at once;
    A2 would take a beyond it, so it waits. With 100-s jobs A1 ends first (t=110) and A2 takes
    its GPU, as under guarantee reclaim; with 300-s jobs A2 has waited 120 s at t=130, reclaims
    one more of b's jobs (b keeps its fair share, 2) and starts then."""
    result, metrics = _run("gangsched-queues")
    assert _times(result)[4:] == [(10, 110), (110, 210)]
    assert metrics["reclaim_evictions"] == 1
    long_result, long_metrics = _run("gangsched-queues", text=LONG)
    assert _times(long_result)[4:] == [(10, 310), (130, 430)]
    assert long_metrics["reclaim_evictions"] == 2
    assert long_metrics["queues"]["a"]["avg_wait_s"] == 60
    guarantee_result, _ = _run("guarantee-reclaim", text=LONG)
    assert _times(guarantee_result)[4:] == [(10, 310), (310, 610)]


def test_guarantee_reclaim_restores_only_the_guarantee():
    """Kueue's and KAI's rule: a may reclaim only while it stays within its guarantee (1 GPU): A1
    takes B4's GPU at t=10; A2 would take a to 2 GPUs and waits for A1 to end (t=110)."""
    result, metrics = _run("guarantee-reclaim")
    assert _times(result) == [(0, 1000), (0, 1000), (0, 1000), (210, 1210), (10, 110), (110, 210)]
    assert metrics["reclaim_evictions"] == 1
    assert metrics["reclaim_lost_gpu_hours"] == round(10 / 3600, 3)
    assert metrics["queues"]["a"]["avg_wait_s"] == 50
    # a always holds its guarantee (1) while it has demand, but only half its fair share.
    assert metrics["queues"]["a"]["below_guarantee_s"] == 0
    assert metrics["jain_index"] < 1.0


def test_without_queues_the_late_tenant_waits_behind_the_flood():
    """No queues: a's jobs wait for b's to end (t=1,000), 990 s, below a's guarantee all that time.
    Jain's index of usage / fair share: 1 on [0, 10) (b alone), on [10, 1,000) a holds 0 of 2 and
    b 4 of 2, so (0 + 2)^2 / (2 x (0 + 4)) = 0.5, then 1 on [1,000, 1,100) (a alone):
    (10 + 990 x 0.5 + 100) / 1,100 = 0.55."""
    result, metrics = _run("no-queues")
    assert _times(result) == [(0, 1000)] * 4 + [(1000, 1100)] * 2
    assert metrics["queues"]["a"]["avg_wait_s"] == 990
    assert metrics["queues"]["a"]["p95_wait_s"] == 990
    assert metrics["queues"]["a"]["below_guarantee_s"] == 990
    assert metrics["queues"]["a"]["demand_s"] == 1090
    assert metrics["queues"]["a"]["below_guarantee_share"] == round(990 / 1090, 4)
    assert metrics["reclaim_evictions"] == 0
    assert metrics["jain_index"] == 0.55


def test_reclaim_none_never_evicts():
    result, metrics = _run("gangsched-queues", config={"reclaim": "none"})
    assert metrics["reclaim_evictions"] == 0
    assert _times(result)[4:] == [(1000, 1100)] * 2


def test_the_tree_only_measures_a_policy_without_queues():
    """The same schedule with and without a tree for gangsched: the tree adds figures, no decision."""
    plain = replay(parse_trace(FLOOD, "hand"), load_cluster(NODE), get_policies(["gangsched"])[0])
    measured, metrics = _run("gangsched")
    assert plain.queues is None and "queues" not in summarise(plain)
    np.testing.assert_array_equal(plain.start, measured.start)
    np.testing.assert_array_equal(plain.finish, measured.finish)
    assert metrics["queues"]["a"]["avg_wait_s"] == 990


def test_jain_index_on_known_inputs():
    assert jain(np.array([1.0, 1.0, 1.0])) == 1.0
    assert jain(np.array([1.0, 0.0, 0.0, 0.0])) == 0.25
    assert jain(np.array([1.0, 2.0])) == pytest.approx(0.9)
    assert jain(np.array([])) == 1.0
    assert jain(np.array([0.0, 0.0])) == 1.0


def test_the_default_tree():
    tree = parse_queues(DEFAULT_QUEUES)
    assert tree.leaf_names == ("nlp", "vision", "batch", "dev")
    queues = {queue.name: queue for queue in tree.queues({"nvidia.com/gpu": 128, "cpu": 1000})}
    assert queues["lab"].parent is None and queues["lab"].guarantee == {"nvidia.com/gpu": 89, "cpu": 700}
    assert queues["nlp"].parent == "lab" and queues["nlp"].guarantee["nvidia.com/gpu"] == 51
    assert queues["dev"].guarantee == {"nvidia.com/gpu": 12, "cpu": 100} and queues["dev"].max == {}
    weighted = parse_queues("x=10%:weight=2:max=50%").queues({"nvidia.com/gpu": 10})[0]
    assert (weighted.weight, weighted.max, weighted.guarantee) == (
        2.0,
        {"nvidia.com/gpu": 5},
        {"nvidia.com/gpu": 1},
    )


@pytest.mark.parametrize(
    "spec, names",
    [
        ("a=60%,b=50%", "more than 100%"),
        ("a=20%:max=10%", "max below its guarantee"),
        ("a=20%:size=3", "unknown option 'size'"),
        ("a=twenty", "'twenty' must be a percentage"),
        ("a=20", "percentage from 0% to 100%"),
        ("a=20%,a=10%", "a: a leaf is named once"),
        ("x/a=20%,x=10%", "x: a leaf is named once"),
        ("a", "must be PATH=GUARANTEE%"),
        ("Big=10%", "queue name 'Big'"),
        ("default=10%", "queue name 'default'"),
        ("a=10%:weight=0", "weight must be a positive number"),
        ("x/a=10%,y/x/b=10%", "'x' has two parents"),
    ],
)
def test_bad_queue_specs_are_refused_naming_the_part(spec, names):
    with pytest.raises(QueueSpecError, match=names.replace("(", r"\(")):
        parse_queues(spec)


def test_the_tenant_rule_is_deterministic_and_floods_first():
    """SHA-256 of the job id picks the tenant: the same in every process and every run; in the first
    third of the submission span 3/4 of the jobs go to the last leaf (dev), later ones by
    guarantee."""
    rows = [f"j{i},{i},1,1,10,1,1Gi,1,0," for i in range(900)]
    rows[5] = "j5,5,1,1,10,1,1Gi,1,0,nlp"  # a job that names a leaf keeps it
    trace = parse_trace(trace_text(*rows), "t")
    tree = parse_queues(DEFAULT_QUEUES)
    first, second = assign(trace, tree), assign(trace, tree)
    assert [job.queue for job in first.jobs] == [job.queue for job in second.jobs]
    assert first.jobs[5].queue == "nlp"
    for job in first.jobs[:299]:
        if job.id != "j5" and tenant_draw(job.id) < FLOOD_SHARE:
            assert job.queue == "dev"
    early = [job.queue for job in first.jobs[:299]]
    late = [job.queue for job in first.jobs[300:]]
    assert early.count("dev") > 0.7 * len(early)
    assert 0.05 * len(late) < late.count("dev") < 0.2 * len(late)
    assert tenant_draw("j1") == int("08243666f926aa4e", 16) / 2**64  # fixed, whatever the process
    assert late.count("nlp") > late.count("vision") > late.count("batch") > late.count("dev")


def test_a_job_naming_a_queue_outside_the_tree_is_an_error():
    trace = parse_trace(trace_text("x,0,1,1,10,1,1Gi,1,0,nope"), "t")
    with pytest.raises(TraceError, match="line 2: queue 'nope' is not a leaf"):
        assign(trace, parse_queues(TREE))


def test_simulate_compares_the_queue_policies(tmp_path):
    trace = tmp_path / "flood.csv"
    trace.write_text(LONG)
    out = tmp_path / "out"
    call_command(
        "simulate",
        "--trace",
        str(trace),
        "--cluster",
        NODE,
        "--queues",
        TREE,
        *("--policy", "gangsched-queues", "--policy", "guarantee-reclaim", "--policy", "no-queues"),
        "--out",
        str(out),
        "--processes",
        "1",
    )
    results = json.loads((out / "results.json").read_text())
    assert results["queues"] == TREE
    waits = {name: m["queues"]["a"]["avg_wait_s"] for name, m in results["policies"].items()}
    assert waits == {"gangsched-queues": 60, "guarantee-reclaim": 150, "no-queues": 990}


def test_simulate_refuses_a_bad_queue_spec(tmp_path):
    trace = tmp_path / "flood.csv"
    trace.write_text(FLOOD)
    with pytest.raises(CommandError, match="--queues: the guarantees add up to more than 100%"):
        call_command(
            "simulate",
            "--trace",
            str(trace),
            "--cluster",
            NODE,
            "--queues",
            "a=90%,b=20%",
            "--out",
            str(tmp_path),
        )
