"""The Queues page's waiting list and the Nodes page's taints in Chromium: gangs waiting in a
queue that borrows are listed in queue order with their places and the queue's badge, and the
list and badges follow the gangs without a reload; a GPU node's taint reads
``key=value:Effect`` and its labels unfold on a click."""

from __future__ import annotations

import pytest

from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.queues import queues_put
from tests.cast import make_gang
from tests.loop.factories import make_nodes
from tests.queues.conftest import spec

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import assert_not_reloaded, gang_json, mark

pytestmark = pytest.mark.django_db(transaction=True)
GPU = "nvidia.com/gpu"


def test_the_waiting_list_and_the_taints(page, live, olga):
    Node.objects.create(
        name="gpu-01",
        allocatable={"cpu": 8000, "memory": 2**34, GPU: 8, "pods": 110},
        labels={"node-pool": "gpu", "kubernetes.io/hostname": "gpu-01"},
        taints=[{"key": GPU, "value": "present", "effect": "NoSchedule"}],
    )
    queues_put([spec("team", guarantee={"cpu": 1000})])
    running = make_gang("ml", "running", submitter="olga", queue="team", pods=2)
    Member.objects.filter(gang=running).update(node="gpu-01", phase="Running")  # 2 CPUs: borrowing 1
    Gang.objects.filter(pk=running.pk).update(phase="Running")
    # Asking for more GPUs than the cluster has, they wait whatever the worker does.
    for name, priority in (("first", None), ("second", None), ("urgent", 50)):
        gang = make_gang("ml", name, submitter="olga", queue="team", pods=2, priority=priority)
        Member.objects.filter(gang=gang).update(requests={"cpu": 100, GPU: 16})

    log_in(page, live, "olga", "olga-pass-123")
    page.goto(live + "/queues/")
    lane = page.locator('#queue-pending .queue-pending[data-queue="team"]')
    assert lane.locator(".queue-flag").first.inner_text() == "borrowing"
    items = lane.locator("li[data-gang]")
    assert items.evaluate_all("li => li.map(e => [e.dataset.gang, e.dataset.position])") == [
        ["ml/urgent", "1"],
        ["ml/first", "2"],
        ["ml/second", "3"],
    ]
    assert items.first.locator(".position").inner_text() == "1st"
    assert page.locator('#queue-team .queue-flag[data-flag="borrowing"]').is_visible()

    page.goto(live + "/nodes/")
    row = page.locator('tr[data-node="gpu-01"]')
    assert row.locator("code.taint").inner_text() == f"{GPU}=present:NoSchedule"
    labels = row.locator("details.node-labels")
    assert not labels.locator("code").first.is_visible()
    labels.locator("summary").click()
    assert labels.locator("code", has_text="node-pool=gpu").is_visible()


def test_the_waiting_list_and_badges_follow_the_gangs_live(page, live, olga):
    """A gang that waits in a queue joins its lane without a reload, and the queue's
    "borrowing" badge appears once a gang of its is bound beyond its guarantee."""
    make_nodes(1, cpu=8)
    queues_put([spec("team", guarantee={"cpu": 1000})])
    log_in(page, live, "olga", "olga-pass-123")
    page.goto(live + "/queues/")
    wait_live(page)
    mark(page)
    lanes = page.locator("#queue-pending-lanes")
    assert lanes.locator("li[data-gang]").count() == 0
    assert page.locator("#queue-team .queue-flag").count() == 0

    too_big = gang_json("too-big", 2, cpu="1", queue="team")
    too_big["tasks"][0]["template"]["requests"][GPU] = "16"  # no node has a GPU: it waits
    assert api_post(page, live, "/api/v1/gangs/", too_big).status == 201
    lanes.locator('.queue-pending[data-queue="team"] li[data-gang="ml/too-big"]').wait_for()
    assert lanes.locator('li[data-gang="ml/too-big"] .position').inner_text() == "1st"

    assert api_post(page, live, "/api/v1/gangs/", gang_json("fits", 2, cpu="1", queue="team")).status == 201
    kick_until(
        lambda: Member.objects.filter(gang__name="fits", node__isnull=False).count() == 2,
        what="ml/fits bound",
    )
    page.locator('#queue-team .queue-flags .queue-flag[data-flag="borrowing"]').wait_for()
    assert lanes.locator('.queue-pending[data-queue="team"] .queue-flag[data-flag="borrowing"]').count() == 1
    assert_not_reloaded(page)
