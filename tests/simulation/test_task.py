"""The run's task: called directly, and in a real Celery worker."""

import pytest
from django.db import IntegrityError

from dashboard.models import SimulationRun, SimulationRuntimes
from dashboard.simulation_start import simulation_run_create
from dashboard.simulations import plot_dir, simulation_run_execute
from dashboard.tasks import run_simulation
from scheduler_core.simulation import RUNTIME_MODES
from scheduler_core.simulation.plots import PLOTS
from tests.loop.workers import Worker, wait_for

from .helpers import JOB_A_JOB_B, LEAST_WORK, ONE_NODE, THREE_NODES
from .test_runtimes import ABSURD

#: ABSURD's three runs of one job by one user: what each start was planned with, per mode.
STARTS_BY_SOURCE = {"oracle": {"declared": 3}, "limit": {"limit": 3}, "learned": {"learned": 2, "limit": 1}}


def _upload_run(user=None, text=JOB_A_JOB_B) -> SimulationRun:
    return SimulationRun.objects.create(
        trace_name="ab.csv",
        trace_text=text,
        cluster_spec=THREE_NODES,
        policies=["pod", "gangsched"],
        requested_by=user,
    )


@pytest.mark.django_db
def test_executing_a_run_stores_its_results_and_plots():
    run = simulation_run_execute(_upload_run().pk)
    run.refresh_from_db()
    assert run.status == SimulationRun.Status.SUCCEEDED and run.progress == 1.0
    assert run.started is not None and run.finished >= run.started
    assert list(run.results["policies"]) == ["pod", "gangsched"]
    assert run.results["policies"]["pod"]["deadlocked_jobs"] == 2
    assert run.results["policies"]["gangsched"]["jobs_finished"] == 5
    assert sorted(run.plots) == sorted(PLOTS)
    for name in run.plots:
        assert (plot_dir(run) / name).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.django_db
@pytest.mark.parametrize(("limit", "small_start"), [(None, 100.0), (0.0, 1100.0)])
def test_a_run_replays_gangsched_with_its_overtake_limit(limit, small_start):
    run = SimulationRun.objects.create(
        trace_name="least-work.csv",
        trace_text=LEAST_WORK,
        cluster_spec=ONE_NODE,
        policies=["gangsched", "fifo-gang"],
        overtake_limit_s=limit,
    )
    results = simulation_run_execute(run.pk).results["policies"]
    assert results["gangsched"]["overtake_limit_s"] == (3600.0 if limit is None else limit)
    assert results["fifo-gang"]["overtake_limit_s"] == 0.0
    # SMALL (submitted at t=2, 10 s) starts when R ends under least work first; after BIG in FIFO.
    waits = {None: (0 + 109 + 98) / 3, 0.0: (0 + 99 + (small_start - 2)) / 3}
    assert results["gangsched"]["avg_wait_s"] == pytest.approx(waits[limit])


def test_the_run_s_modes_are_the_replay_s():
    """Spelled twice (loading the models imports no numpy): both lists must agree."""
    assert SimulationRuntimes.values == list(RUNTIME_MODES)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", RUNTIME_MODES)
def test_the_task_replays_with_the_run_s_runtimes(mode):
    run = SimulationRun.objects.create(
        trace_name="absurd.csv",
        trace_text=ABSURD,
        cluster_spec=ONE_NODE,
        policies=["gangsched"],
        runtimes=mode,
    )
    run_simulation.apply(args=[run.pk])  # the Celery task's body, in this process
    run.refresh_from_db()
    assert run.status == SimulationRun.Status.SUCCEEDED, run.error
    assert run.results["runtimes"] == mode
    figures = run.results["policies"]["gangsched"]["runtimes"]
    assert figures["mode"] == mode and figures["starts_by_source"] == STARTS_BY_SOURCE[mode]


@pytest.mark.django_db
def test_the_database_refuses_a_mode_the_replay_does_not_know():
    with pytest.raises(IntegrityError, match="simulationrun_runtimes_known"):
        SimulationRun.objects.create(trace_name="t.csv", cluster_spec="n32g4", runtimes="psychic")


@pytest.mark.django_db
def test_a_run_whose_stored_trace_went_bad_fails_with_the_reason():
    run = _upload_run(text=JOB_A_JOB_B + "C,zero,1,1,1,1,1Gi,0,0,\n")
    with pytest.raises(ValueError):
        simulation_run_execute(run.pk)
    run.refresh_from_db()
    assert run.status == SimulationRun.Status.FAILED
    assert "line 7: submit_s must be a number of seconds, got 'zero'" in run.error


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_started_simulation(olga):
    worker = Worker("simulation")
    try:
        run = simulation_run_create(
            user=olga,
            shared=None,
            upload_name="absurd.csv",
            upload_text=ABSURD,
            cluster=ONE_NODE,
            policies=["fifo-gang"],
            runtimes="learned",
        )
        done = wait_for(
            lambda: SimulationRun.objects.filter(pk=run.pk, status__in=["succeeded", "failed"]).first(),
            timeout=60,
            what="the worker to finish the simulation",
        )
    finally:
        worker.stop()
    assert done.status == "succeeded", done.error
    assert done.results["policies"]["fifo-gang"]["jobs_finished"] == 3
    assert (
        done.results["policies"]["fifo-gang"]["runtimes"]["starts_by_source"] == STARTS_BY_SOURCE["learned"]
    )
    assert (plot_dir(done) / "comparison.png").is_file()
