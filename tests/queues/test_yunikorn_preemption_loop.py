"""YuniKorn's preemption rules, end to end: the ``yunikorn-configs`` ConfigMap and the pods
applied as ``manage.py apply -f`` does, then the real scheduling cycle and the simulated
kubelet against PostgreSQL.

YuniKorn preempts only to bring a queue up to its guarantee, never among a queue's own
applications (its preemption design, "Non goals: Intra-queue preemption",
https://yunikorn.apache.org/docs/design/preemption), and a queue with no guarantee on itself or
an ancestor never triggers it (YUNIKORN-1951, ``yunikorn-core``
``pkg/scheduler/objects/preemption.go``, ``checkPreemptionQueueGuarantees``).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.kubelet import kubelet_tick
from tests.loop.factories import make_nodes

from .conftest import pod_yaml, yunikorn_configs

pytestmark = pytest.mark.django_db

CONFIG = yunikorn_configs("{name: root, queues: [{name: default, resources: {max: {vcore: 1}}}]}")

HIGH = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""

SLEEP = """
apiVersion: v1
kind: Pod
metadata:
  name: sleep
  namespace: apps
  labels: {applicationId: app-sleep, queue: root.default}
spec:
  schedulerName: gangsched
  containers:
  - name: sleep
    image: alpine
    command: [sleep, infinity]
    resources: {requests: {cpu: "1"}}
"""

TASK_GROUP = (
    "{{yunikorn.apache.org/task-group-name: workers, yunikorn.apache.org/task-groups: "
    '\'[{{"name": "workers", "minMember": {size}, "minResource": {{"cpu": "{cpu}"}}}}]\'}}'
)


def app(name: str, queue: str, count: int, cpu: str = "1", gang: bool = False, priority: str = "null") -> str:
    """``count`` pods of YuniKorn application ``name`` in ``queue``: alone, or one task group of
    them all if ``gang`` (``minResource`` per member, as the shim reads it)."""
    labels = f"{{applicationId: {name}, queue: {queue}}}"
    annotations = TASK_GROUP.format(size=count, cpu=cpu) if gang else "{}"
    return "---".join(
        pod_yaml(f"{name}-{i}", "apps", labels, annotations, cpu, priority) for i in range(count)
    )


def apply(text: str) -> None:
    manifests_apply(documents_parse(text))


def minutes_pass(minutes: int) -> None:
    """Every gang and pod was created ``minutes`` earlier: a preemption delay may be over."""
    for model in (Gang, Member):
        for row in model.objects.all():
            model.objects.filter(pk=row.pk).update(created=row.created - timedelta(minutes=minutes))


def test_a_higher_priority_gang_never_evicts_its_own_queue_s_work():
    """The sleep application fills root.default's max (vcore 1); a higher-priority gang then
    arriving in root.default waits at the max, for minutes, and never evicts it: YuniKorn has
    no intra-queue preemption, and root.default (no guarantee, nor has root) never preempts."""
    make_nodes(2, cpu=4)
    apply(CONFIG + "---" + HIGH)
    apply(SLEEP)
    cycle_run(holder="test")
    kubelet_tick()
    sleep = Member.objects.get(name="sleep")
    assert sleep.node is not None and sleep.phase == "Running"

    apply(app("app-gang", "root.default", 2, cpu="500m", gang=True, priority="high"))
    start = timezone.now()
    for minute in range(1, 6):
        minutes_pass(1)
        cycle_run(holder="test")
        kubelet_tick(now=start + timedelta(minutes=minute))

    sleep.refresh_from_db()
    assert sleep.phase == "Running" and sleep.node is not None
    assert not GangEvent.objects.filter(kind="preempted").exists()
    waiting = Gang.objects.get(name="app-gang-workers")
    assert not Member.objects.filter(gang=waiting, node__isnull=False).exists()
    assert waiting.reason == "QueueAtMax", waiting.message


GUARANTEED = yunikorn_configs(
    "{name: root, queues: [{name: a, resources: {guaranteed: {vcore: 2}}}, {name: b}, {name: c}]}"
)


def running(prefix: str) -> int:
    return Member.objects.filter(name__startswith=prefix, node__isnull=False, phase="Running").count()


def test_a_queue_reclaims_up_to_its_guarantee_after_its_delay_and_one_without_never_does():
    """root.b (no guarantee) fills the 4-CPU cluster. A 1-CPU application of root.c (no
    guarantee either, nor has root) then waits for minutes and evicts nothing, though it is
    below its fair share (gangsched's own rule would take the CPU): a queue with no guarantee on
    itself or an ancestor never preempts (YUNIKORN-1951). root.a (guaranteed vcore 2) gets its
    2 CPUs back, from root.b, but only once its application has waited the preemption delay (30
    s by default), where gangsched's rule up to a guarantee would not wait."""
    make_nodes(1, cpu=4)
    apply(GUARANTEED)
    apply(app("app-b", "root.b", 4))
    cycle_run(holder="test")
    kubelet_tick()
    assert running("app-b-") == 4

    apply(app("app-c", "root.c", 1, gang=True))
    for _ in range(3):
        minutes_pass(1)
        cycle_run(holder="test")
    assert running("app-b-") == 4 and running("app-c-") == 0

    apply(app("app-a", "root.a", 2, gang=True))
    cycle_run(holder="test")
    assert not Member.objects.filter(phase="Failed").exists()  # its delay is not over

    minutes_pass(1)
    cycle_run(holder="test")  # evicts two of root.b's pods
    cycle_run(holder="test")  # the room is free: root.a's pods bind
    kubelet_tick()
    assert running("app-a-") == 2 and running("app-b-") == 2 and running("app-c-") == 0
    assert Member.objects.filter(name__startswith="app-b-", phase="Failed").count() == 2
    reclaim = GangEvent.objects.get(kind="explained", details__has_key="from").details
    assert reclaim["queue"] == "root/root.a" and reclaim["from"][0]["queue"] == "root/root.b"
