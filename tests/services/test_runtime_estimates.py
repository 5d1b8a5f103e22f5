"""Each gang's expected runtime: set on submission, learned from the same submitter's finished
runs of the same job, extended when a running gang outlives it, seen by backfilling."""

import dataclasses
import io
from datetime import timedelta

import pytest
from django.core.management import call_command

from scheduler_core.declarations import documents_parse, manifests_apply
from scheduler_core.engine import run_cycle
from scheduler_core.models import Gang, Member, MemberPhase, Queue
from scheduler_core.services.lifecycle import gangs_refresh
from scheduler_core.services.runtimes import gang_estimates_refresh
from scheduler_core.services.submit import gang_submit
from scheduler_core.snapshot.build import build_snapshot
from tests.cluster.world import NOW, cpu_node, later

pytestmark = pytest.mark.django_db


def submit(
    name, *, submitter="ana", queue="default", size=2, cpu="1", duration=None, deadline=None, **fields
):
    pods = [
        {
            "name": f"{name}-{i}",
            "requests": {"cpu": cpu, "memory": "1Gi"},
            "duration_seconds": duration,
            "deadline_seconds": deadline,
        }
        for i in range(size)
    ]
    Queue.objects.get_or_create(name=queue)
    return gang_submit(
        namespace="ml", name=name, min_member=size, pods=pods, submitter=submitter, queue=queue, **fields
    )


def finish(gang, seconds, start=NOW):
    """The gang ran ``seconds`` from ``start`` and all its pods succeeded."""
    Member.objects.filter(gang=gang).update(
        phase=MemberPhase.SUCCEEDED,
        node="cpu-a",
        started_at=start,
        finished_at=start + timedelta(seconds=seconds),
    )
    gangs_refresh(now=start + timedelta(seconds=seconds), gang_ids=[gang.pk])
    gang.refresh_from_db()
    assert gang.phase == "Finished"


def believed(gang):
    gang.refresh_from_db()
    return gang.runtime_estimate_s, gang.runtime_source


def test_precedence_on_submission(settings):
    settings.GANGSCHED_DEFAULT_RUNTIME_S = None
    assert believed(submit("nothing")) == (None, "")
    assert believed(submit("declared", duration=90, deadline=3600)) == (90, "declared")
    assert believed(submit("limited", deadline=3600)) == (3600, "limit")
    settings.GANGSCHED_DEFAULT_RUNTIME_S = 1800
    assert believed(submit("global")) == (1800, "default")
    Queue.objects.create(name="short", default_runtime_s=300)
    assert believed(submit("queued", queue="short")) == (300, "default")
    assert believed(submit("queued-limit", queue="short", deadline=7200)) == (7200, "limit")


def test_a_partly_declared_gang_is_not_declared():
    gang = submit("mixed", deadline=600)
    Member.objects.filter(name="mixed-0").update(duration_seconds=30)
    gang_estimates_refresh([gang.pk])
    assert believed(gang) == (600, "limit")


def test_learned_from_the_last_two_runs_of_the_same_submitter_queue_and_shape():
    waiting = submit("bert-ft-x8k2q", deadline=7200)  # waiting while the others run
    assert believed(waiting) == (7200, "limit")
    finish(submit("bert-ft-1", deadline=7200), 1000)
    assert believed(waiting) == (1000, "learned")  # refreshed when the run finished
    finish(submit("bert-ft-2", deadline=7200), 3000, start=later(5000))
    assert believed(waiting) == (2000, "learned")
    finish(submit("bert-ft-3", deadline=7200), 500, start=later(10000))
    assert believed(waiting) == (1750, "learned")  # the last two: 3000 and 500
    assert believed(submit("bert-ft-4")) == (1750, "learned")  # a new run, no limit this time
    # Not learned: another submitter, another queue, another size, other pods, another job.
    assert believed(submit("bert-ft-5", submitter="bo", deadline=7200)) == (7200, "limit")
    assert believed(submit("bert-ft-6", queue="other", deadline=7200)) == (7200, "limit")
    assert believed(submit("bert-ft-7", size=4, deadline=7200)) == (7200, "limit")
    assert believed(submit("bert-ft-8", cpu="2", deadline=7200)) == (7200, "limit")
    assert believed(submit("gpt-ft-1", deadline=7200)) == (7200, "limit")


def test_a_learned_runtime_is_capped_at_the_limit():
    finish(submit("etl-1"), 5000)
    assert believed(submit("etl-2")) == (5000, "learned")
    assert believed(submit("etl-3", deadline=3600)) == (3600, "limit")


def test_a_failed_run_teaches_nothing():
    failed = submit("sim-1")
    Member.objects.filter(gang=failed).update(phase=MemberPhase.FAILED, started_at=NOW, finished_at=later(10))
    Gang.objects.filter(pk=failed.pk).update(phase="Failed")
    assert believed(submit("sim-2", deadline=600)) == (600, "limit")


def test_active_deadlines_of_jobs_and_kubeflow_jobs_are_the_limit():
    cpu_node("cpu-a")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "etl", "namespace": "ml"},
        "spec": {
            "parallelism": 2,
            "activeDeadlineSeconds": 900,
            "template": {
                "spec": {
                    "schedulerName": "gangsched",
                    "activeDeadlineSeconds": 600,
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                }
            },
        },
    }
    manifests_apply([job])  # the pod's own deadline is the shorter
    assert set(Member.objects.filter(owner="job.batch/etl").values_list("deadline_seconds", flat=True)) == {
        600
    }
    torch = documents_parse(
        b"""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ft, namespace: ml}
spec:
  runPolicy: {activeDeadlineSeconds: 7200}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: i, resources: {requests: {cpu: "1"}}}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: i, resources: {requests: {cpu: "1"}}}]
"""
    )
    manifests_apply(torch)
    gang = Gang.objects.get(namespace="ml", name="ft")
    assert (gang.runtime_limit_s, gang.runtime_estimate_s, gang.runtime_source) == (7200, 7200, "limit")


def _backfill_world(settings):
    """Two 4-CPU nodes. ``long`` (no declared duration: the default estimate of 100 s; not
    preemptible) runs on
    cpu-a since NOW; ``head`` (priority 10) needs both nodes; ``small`` (50 s) could take cpu-b."""
    settings.GANGSCHED_DEFAULT_RUNTIME_S = 100
    cpu_node("cpu-a", cpu="4")
    cpu_node("cpu-b", cpu="4")
    long = submit("long", size=1, cpu="4", preemptible=False)
    Member.objects.filter(gang=long).update(node="cpu-a", phase=MemberPhase.RUNNING, started_at=NOW)
    Gang.objects.filter(pk=long.pk).update(phase="Running", satisfied=True, schedule_start_time=NOW)
    submit("head", size=2, cpu="4", duration=60, priority=10)
    submit("small", size=1, cpu="4", duration=50)


def _binds(snapshot, now):
    return {bind.pod for bind in run_cycle(snapshot, now).binds}


def test_backfilling_sees_the_estimate_of_a_gang_that_outlived_it(settings):
    _backfill_world(settings)
    # At 30 s, long is expected to end at 100 s: small (ends at 80 s) backfills before the head.
    early = NOW.timestamp() + 30
    assert "ml/small-0" in _binds(build_snapshot(early), early)
    # At 120 s long has outlived its 100 s: the scheduler now expects 200 s, so small (ends at
    # 170 s) still backfills. With the stale 100 s, the head's shadow time would be in the past
    # and small would be refused.
    now = NOW.timestamp() + 120
    snapshot = build_snapshot(now)
    (long_pod,) = [pod for pod in snapshot.pods if pod.gang == "ml/long"]
    assert long_pod.duration == 200
    assert "ml/small-0" in _binds(snapshot, now)
    stale = dataclasses.replace(
        snapshot,
        pods=tuple(dataclasses.replace(p, duration=100) if p.gang == "ml/long" else p for p in snapshot.pods),
    )
    assert "ml/small-0" not in _binds(stale, now)
    # Past 200 s too: doubled again (400 s).
    later_now = NOW.timestamp() + 250
    assert [p.duration for p in build_snapshot(later_now).pods if p.gang == "ml/long"] == [400]


def test_a_declared_duration_is_what_the_engine_sees_even_past_it(settings):
    settings.GANGSCHED_DEFAULT_RUNTIME_S = 100
    gang = submit("said", size=1, duration=30)
    Member.objects.filter(gang=gang).update(node="cpu-a", phase=MemberPhase.RUNNING, started_at=NOW)
    now = NOW.timestamp() + 500
    assert [p.duration for p in build_snapshot(now).pods] == [30]


def test_describe_shows_the_estimate_and_its_source():
    finish(submit("bert-1"), 600)
    submit("bert-2", deadline=3600)
    out = io.StringIO()
    call_command("describe", "gang", "ml/bert-2", stdout=out)
    assert (
        "Runtime:        10min, learned: the mean of its submitter's last two runs of this job; limit 60min"
        in (out.getvalue())
    )
