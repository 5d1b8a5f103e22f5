"""``docs/tour/queues.yaml``, the two queues the dashboard's pictures are made with
(``scripts/screenshot.py``): what its comment promises holds, so that the Queues picture shows a
queue with a lane waiting at its max."""

from pathlib import Path

import pytest
from django.core.management import call_command

from scheduler_core.models import Gang
from scheduler_core.services.cycle import cycle_run
from tests.loop.factories import make_nodes

pytestmark = pytest.mark.django_db

TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour" / "queues.yaml"


def test_one_research_job_runs_and_two_wait_at_the_queue_s_max():
    make_nodes(4, cpu=64)
    call_command("apply", "-f", str(TOUR))

    cycle_run(holder="test")

    gangs = {gang.name: gang for gang in Gang.objects.filter(namespace="research")}
    assert gangs["ablation-a"].satisfied
    for name in ("ablation-b", "ablation-c"):
        assert not gangs[name].satisfied and gangs[name].reason == "QueueAtMax"
