"""The Queues page in Chromium: a tree made through services/queues.py, a gang
submitted into a leaf queue, and its queue's usage bar (and its parent's) moving without a
reload as the worker binds it; the chart gains a point; an operator closes a queue from the
page and the gang page then names its queue."""

from __future__ import annotations

import pytest

from scheduler_core.models import Queue, QueueSample
from scheduler_core.services.queues import queues_put
from tests.loop.factories import make_nodes
from tests.queues.conftest import spec

from .conftest import api_post, kick_until, log_in, wait_live
from .test_live_pages import assert_not_reloaded, bound, gang_json, mark

pytestmark = pytest.mark.django_db(transaction=True)


#: The bar of queue q and resource r, in the page's JS.
BAR = 'document.querySelector(`.queue-bar[data-queue="${q}"][data-resource="${r}"]`)'


def used(page, queue: str, resource: str = "cpu") -> str | None:
    return page.evaluate(
        f"([q, r]) => {{ const b = {BAR}; return b ? b.dataset.used : null; }}", [queue, resource]
    )


def wait_used(page, queue: str, value: str, resource: str = "cpu") -> None:
    page.wait_for_function(
        f"([q, r, v]) => {{ const b = {BAR}; return b && b.dataset.used === v; }}",
        arg=[queue, resource, value],
        timeout=15_000,
    )


def test_a_queues_usage_moves_live_and_an_operator_closes_a_queue(page, live, olga):
    make_nodes(2)  # 8 CPUs
    queues_put(
        [
            spec("ml", max={"cpu": 8000}),
            spec("nlp", parent="ml", guarantee={"cpu": 4000}),
            spec("cv", parent="ml", guarantee={"cpu": 2000}),
        ]
    )
    log_in(page, live, "olga", "olga-pass-123")
    page.goto(live + "/queues/")
    wait_live(page)
    mark(page)
    assert page.locator("#queue-tree tr[data-queue]").evaluate_all(
        "rows => rows.map(r => r.dataset.queue)"
    ) == [
        "ml",
        "cv",
        "nlp",
    ]
    assert used(page, "nlp") == "0" and used(page, "ml") == "0"
    points = page.evaluate("window.gangschedQueues.data.points.length")

    response = api_post(page, live, "/api/v1/gangs/", gang_json("bert", 2, queue="nlp"))  # 2 x 2 CPUs
    assert response.status == 201, response.text()
    kick_until(lambda: bound("ml/bert") == 2, what="ml/bert bound")

    wait_used(page, "nlp", "4000")
    wait_used(page, "ml", "4000")  # the parent's usage adds up its subtree
    assert page.evaluate("window.gangschedQueues.data.points.length") > points
    assert page.evaluate("window.gangschedQueues.data.points.at(-1).usage.cpu") == 4000
    assert page.locator('#queue-charts svg[data-resource="cpu"] path[data-series="usage"]').count() == 1
    assert_not_reloaded(page)
    assert QueueSample.objects.filter(queue="nlp").exists()  # the worker's cycles keep history

    page.locator("#queue-cv").get_by_role("button", name="Close").click()
    page.wait_for_url(live + "/queues/#queue-cv")
    assert page.locator("#queue-cv .queue-state").inner_text().strip() == "Closed"
    assert "queue cv closed" in page.locator("ul.messages").inner_text()
    assert Queue.objects.get(name="cv").open is False

    page.goto(live + "/gangs/ml/bert/")
    page.locator("a.gang-queue").click()
    page.wait_for_url(live + "/queues/#queue-nlp")
