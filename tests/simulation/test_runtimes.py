"""Replays without an oracle (``--runtimes``): the limit model, oracle unchanged, learned mode
blind to the truth until a job ends, the head's guarantee measured, the ``user`` column."""

import importlib
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from scheduler_core.engine.runtimes import Estimate, overrun
from scheduler_core.simulation import (
    ReplayOptions,
    TraceError,
    get_policies,
    load_cluster,
    load_trace,
    parse_trace,
    replay,
)
from scheduler_core.simulation.runtime_view import (
    LIMIT_FACTOR,
    RuntimeView,
    learning_key,
    limits,
)
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES

from .helpers import HEADER, LEAST_WORK, ONE_NODE, STARVATION, bench_module, csv_text, trace_text

# The loop's module (the package's ``replay`` is the function of that name).
replay_module = importlib.import_module("scheduler_core.simulation.replay")
TIRESIAS = REPOSITORY_TRACES / "tiresias-60-jobs.csv"


def _replay(text: str, cluster: str, policy: str = "gangsched", **options):
    trace = parse_trace(text, "hand")
    return replay(trace, load_cluster(cluster), get_policies([policy])[0], ReplayOptions(**options))


# ---------------------------------------------------------------- the limit model


def test_limits_are_deterministic_never_below_the_runtime_and_at_most_f_times_it():
    trace = load_trace(TIRESIAS)
    first, again = limits(trace), limits(load_trace(TIRESIAS))
    durations = np.array([job.duration for job in trace.jobs])
    assert np.array_equal(first, again)
    assert (first >= durations).all()
    assert (first <= np.ceil(durations * LIMIT_FACTOR)).all()
    assert len(set(np.round(first / durations, 3))) > 30  # factors drawn, not one constant


def test_a_limit_replay_is_deterministic_and_ends_every_job_at_its_true_runtime():
    text = csv_text(load_trace(TIRESIAS).jobs)
    one = _replay(text, "4x{cpu=40,memory=256Gi,nvidia.com/gpu=4}", runtimes="limit")
    two = _replay(text, "4x{cpu=40,memory=256Gi,nvidia.com/gpu=4}", runtimes="limit")
    assert np.array_equal(one.start, two.start, equal_nan=True)
    durations = np.array([job.duration for job in load_trace(TIRESIAS).jobs])
    assert np.allclose(one.finish - one.start, durations, atol=1.0)  # ends at the next tick
    assert one.runtimes["starts_by_source"] == {"limit": 60}


# ---------------------------------------------------------------- oracle unchanged


@pytest.mark.parametrize("trace", [STARVATION, LEAST_WORK])
def test_oracle_is_the_replay_without_the_option(trace):
    default = _replay(trace, ONE_NODE)
    oracle = _replay(trace, ONE_NODE, runtimes="oracle")
    assert np.array_equal(default.start, oracle.start, equal_nan=True)
    assert np.array_equal(default.finish, oracle.finish, equal_nan=True)
    assert default.runtimes["starts_by_source"] == {"declared": len(default.start)}


def test_the_command_writes_the_same_results_with_and_without_runtimes_oracle(tmp_path):
    trace = tmp_path / "jobs.csv"
    trace.write_text(csv_text(load_trace(TIRESIAS).jobs))
    outs = []
    for extra in ([], ["--runtimes", "oracle"]):
        out = tmp_path / f"out{len(outs)}"
        call_command(
            "simulate", "--trace", str(trace), "--cluster", "2x{cpu=40,memory=256Gi,nvidia.com/gpu=4}",
            "--policy", "gangsched", "--policy", "coscheduling", "--out", str(out), "--processes", "1",
            *extra,
        )  # fmt: skip
        outs.append(json.loads((out / "results.json").read_text()))
    for results in outs:
        for metrics in results["policies"].values():
            for key in [k for k in metrics if "seconds" in k]:
                del metrics[key]
    assert outs[0] == outs[1]
    assert outs[0]["runtimes"] == "oracle"


def test_the_command_refuses_an_unknown_mode(tmp_path):
    trace = tmp_path / "jobs.csv"
    trace.write_text(STARVATION)
    with pytest.raises(CommandError, match="unknown runtimes 'psychic'"):
        call_command(
            "simulate", "--trace", str(trace), "--cluster", ONE_NODE, "--out", str(tmp_path / "o"),
            "--runtimes", "psychic",
        )  # fmt: skip


# ---------------------------------------------------------------- learned mode sees no truth

# One node of 4 GPUs; three runs of one job by one user, each taking the whole node, with true
# runtimes nobody would guess. A runs first; B and C wait for it, then C for B.
A_TRUE, B_TRUE, C_TRUE = 7777.25, 1_000_000.5, 600_000.25
ABSURD = trace_text(
    f"train-1,0,1,1,{A_TRUE},1,1Gi,4,0,",
    f"train-2,1,1,1,{B_TRUE},1,1Gi,4,0,",
    f"train-3,2,1,1,{C_TRUE},1,1Gi,4,0,",
).replace(HEADER, HEADER + ",user")
ABSURD = "\n".join(line + ",alice" if i else line for i, line in enumerate(ABSURD.splitlines())) + "\n"


def test_learned_mode_tells_the_engine_only_limits_and_finished_runtimes(monkeypatch):
    seen: list[tuple[float, dict[str, float]]] = []
    real = replay_module.run_cycle

    def watching(snapshot, now, config):
        seen.append((now, {pod.gang: pod.duration for pod in snapshot.pods}))
        return real(snapshot, now, config)

    monkeypatch.setattr(replay_module, "run_cycle", watching)
    trace = parse_trace(ABSURD, "hand")
    assert len({learning_key(job) for job in trace.jobs}) == 1
    limit = dict(zip(("sim/job-0", "sim/job-1", "sim/job-2"), limits(trace), strict=True))
    result = replay(
        trace, load_cluster(ONE_NODE), get_policies(["gangsched"])[0], ReplayOptions(runtimes="learned")
    )
    start = dict(zip(limit, result.start, strict=True))
    finish = dict(zip(limit, result.finish, strict=True))
    truth = dict(zip(limit, (A_TRUE, B_TRUE, C_TRUE), strict=True))
    assert all(not math.isnan(finish[gang]) for gang in limit)

    def told_waiting(gang: str, now: float) -> float:
        """The mean of the last two runs that ended by ``now`` (capped at the limit), or the limit."""
        ended = [truth[g] for g in sorted(limit, key=finish.get) if finish[g] <= now and g != gang]
        return min(sum(ended[-2:]) / len(ended[-2:]), limit[gang]) if ended else limit[gang]

    for now, durations in seen:
        for gang, duration in durations.items():
            assert duration != truth[gang]  # never the truth, while it waits or runs
            if now < start[gang]:
                assert duration == told_waiting(gang, now), (now, gang)
            else:  # running: what it was told at its start, enlarged by overrun once outlived
                at_start = Estimate(told_waiting(gang, start[gang]), "learned")
                assert duration == overrun(at_start, now - start[gang], limit[gang]).seconds, (now, gang)
    # B ran on A's runtime as its estimate; C, waiting through B's end, was then told their mean.
    assert [d["sim/job-1"] for t, d in seen if t == start["sim/job-1"]] == [A_TRUE]
    assert [d["sim/job-2"] for t, d in seen if t == start["sim/job-2"]] == [
        pytest.approx((A_TRUE + B_TRUE) / 2)
    ]


# ---------------------------------------------------------------- the head's guarantee


def test_with_exact_runtimes_backfilling_never_makes_the_head_late():
    result = _replay(STARVATION, ONE_NODE)
    assert result.heads["started_as_head"] == 2  # BIG behind S1, then S2 behind BIG
    assert result.heads["late"] == 0 and result.heads["on_time"] == 2


def test_a_head_whose_backfilled_gang_overran_its_estimate_is_reported_late():
    # One node of 4 GPUs. Bob's first run (10 s) and S1 (100 s) share it; BIG (all 4 GPUs, 1 s)
    # waits: the head once bob's run ends, promised S1's end by S1's limit. Bob's second run is told
    # 10 s (his first run's), so it backfills beside S1; it runs 300 s past S1's limit.
    def text(second: float) -> str:
        rows = (
            "bob-job-1,0,1,1,10,1,1Gi,2,0,,bob",
            "S1,0,1,1,100,1,1Gi,2,0,,carol",
            "BIG,1,1,1,1,1,1Gi,4,0,,dave",
            f"bob-job-2,50,1,1,{second},1,1Gi,2,0,,bob",
        )
        return "\n".join((HEADER + ",user", *rows)) + "\n"

    limit_s1 = limits(parse_trace(text(1)))[1]  # the draws do not depend on the durations
    trace = text(limit_s1 + 300)
    result = _replay(trace, ONE_NODE, runtimes="learned")
    assert result.start[3] == 50 and result.start[2] >= limit_s1 + 350
    assert result.heads["late"] == 1
    assert result.heads["late_by_cause"]["backfill_overran"] == 1
    assert result.heads["late_max_s"] >= 300
    oracle = _replay(trace, ONE_NODE)
    assert oracle.heads["late"] == 0


# ---------------------------------------------------------------- the user column


def test_the_user_column_is_optional_and_read():
    text = trace_text("a,0,1,1,10,1,1Gi,0,0,").replace(HEADER, HEADER + ",user")
    text = text.replace("a,0,1,1,10,1,1Gi,0,0,", "a,0,1,1,10,1,1Gi,0,0,,alice\nb,1,1,1,10,1,1Gi,0,0,,")
    first, second = parse_trace(text).jobs
    assert (first.user, second.user) == ("alice", None)
    assert parse_trace(STARVATION).jobs[0].user is None
    # Tiresias: the model name stands in for the submitter.
    assert load_trace(TIRESIAS).jobs[0].user == "vgg19"


def test_bad_users_are_reported_with_their_line_numbers():
    text = (HEADER + ",user\n" + "a,0,1,1,10,1,1Gi,0,0,,alice\n" + "b,0,1,1,10,1,1Gi,0,0,,bob smith\n"
            + "c,0,1,1,10,1,1Gi,0,0,," + "x" * 300 + "\n" + "d,0,1,1,10,1,1Gi,0,0,\n")  # fmt: skip
    with pytest.raises(TraceError) as caught:
        parse_trace(text)
    errors = dict(caught.value.errors)
    assert set(errors) == {3, 4, 5}
    assert "space" in errors[3] and "at most 253" in errors[4] and "expected 11 fields" in errors[5]


def test_without_a_user_a_job_learns_from_nobody():
    trace = parse_trace(trace_text("a,0,1,1,10,1,1Gi,0,0,", "b,1,1,1,10,1,1Gi,0,0,"))
    assert len({learning_key(job) for job in trace.jobs}) == 2
    view = RuntimeView("learned", trace)
    view.finished(0, 10.0, view.pending(0))
    assert view.pending(1).source == "limit"


def test_generated_traces_name_submitters_without_moving_anything_else():
    make_trace = bench_module("make_trace")
    jobs = make_trace.production_jobs(300, gpus=80, load=1.0, seed=7)
    assert len({job.user for job in jobs}) > 20
    series = make_trace.series_jobs(400, gpus=256, load=1.3, seed=11)
    assert series == make_trace.series_jobs(400, gpus=256, load=1.3, seed=11)
    keys = {learning_key(job) for job in series}
    assert len(keys) < len(series) / 3  # runs of one series share a key
