"""A YuniKorn application driven only through ``manage.py`` commands, against a real worker:
its originator reserves the task group with placeholders, its workers take their places.

Re-expresses Verify_Annotation_TaskGroup_Def of apache/yunikorn-k8shim
``test/e2e/gang_scheduling/gang_scheduling_test.go``: the originator (in no task group) carries
the definition, placeholders run, the real task-group pods replace them and run on their nodes.
"""

import pytest

from tests.loop.workers import wait_for

from .conftest import manage, manage_json, write

# The scenario's fixtures: a real worker takes the tasks, and changes really wake it.
from .test_scenario import NODE, no_cycle_trigger, ticking, worker  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

ORIGINATOR = """
apiVersion: v1
kind: Pod
metadata:
  name: launcher
  namespace: etl
  labels: {applicationId: etl-7}
  annotations:
    yunikorn.apache.org/task-groups: '[{"name": "workers", "minMember": 2, "minResource": {"cpu": "3"}}]'
spec:
  schedulerName: gangsched
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""

WORKER = """
apiVersion: v1
kind: Pod
metadata:
  name: worker-%d
  namespace: etl
  labels: {applicationId: etl-7}
  annotations: {yunikorn.apache.org/task-group-name: workers}
spec:
  schedulerName: gangsched
  containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
"""


def pods() -> dict[str, dict]:
    return {pod["name"]: pod for pod in manage_json("get", "pods", "-A", "--application", "etl-7")}


@pytest.mark.usefixtures("worker")
def test_the_originator_reserves_then_the_workers_replace_the_placeholders(tmp_path):
    manage("apply", "-f", write(tmp_path, "---".join(NODE % n for n in ("n-1", "n-2")), "nodes.yaml"))
    out = manage("apply", "-f", write(tmp_path, ORIGINATOR, "launcher.yaml"))
    assert "gang etl/etl-7-workers created" in out
    assert sorted(pods()) == ["launcher", "tg-etl-7-workers-0", "tg-etl-7-workers-1"]

    wait_for(ticking(lambda: {p["phase"] for p in pods().values()} == {"Running"}), what="the reservation")
    held = sorted(p["node"] for name, p in pods().items() if name.startswith("tg-"))
    assert held == ["n-1", "n-2"]  # 3 CPUs each: one placeholder per 4-CPU node

    manage("apply", "-f", write(tmp_path, "---".join(WORKER % i for i in (0, 1)), "workers.yaml"))

    def replaced() -> bool:
        now = pods()
        return not any(n.startswith("tg-") for n in now) and all(
            p["phase"] == "Running" for p in now.values()
        )

    wait_for(ticking(replaced), what="the workers to replace the placeholders")
    assert sorted(p["node"] for n, p in pods().items() if n.startswith("worker-")) == held
    gangs = {g["name"]: g for g in manage_json("get", "gangs", "-A", "--application", "etl-7")}
    assert sorted(gangs) == ["etl-7", "etl-7-workers"]
    assert gangs["etl-7-workers"]["state"] == "Running" and gangs["etl-7-workers"]["application"] == "etl-7"
