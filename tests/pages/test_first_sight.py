"""What a new user sees first: requests as Kubernetes writes them, pods
counted on the nodes, one line per worker process, and a legend for the progress bars."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from dashboard.pages.selectors import progress_label
from scheduler_core.models import Member, Node, SchedulingCycle
from scheduler_core.services.submit import gang_submit
from tests.pages.conftest import time_out

pytestmark = pytest.mark.django_db

BIG = {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "8"}


@pytest.fixture
def big(db):
    """olga's ml/big: four pods of 16 CPUs, 128Gi and 8 GPUs, all bound to n1 (110 pods)."""
    gang = gang_submit(
        namespace="ml",
        name="big",
        min_member=4,
        pods=[{"name": f"big-{i}", "requests": BIG} for i in range(4)],
        submitter="olga",
    )
    Node.objects.create(
        name="n1", allocatable={"cpu": 128000, "memory": 2**40, "nvidia.com/gpu": 32, "pods": 110}
    )
    Member.objects.filter(gang=gang).update(node="n1", phase="Running")
    return gang


def test_gang_detail_shows_requests_as_kubernetes_writes_them(as_olga, big):
    html = as_olga.get("/gangs/ml/big/").content.decode()

    assert '<td class="requests">cpu 16, memory 128Gi, nvidia.com/gpu 8</td>' in html
    assert "cpu=16000" not in html and "137438953472<" not in html


@pytest.mark.parametrize(
    ("url", "labels"),
    [
        ("/nodes/", ["pods 4 / 110 (4%)", "memory 512Gi / 1Ti (50%)", "cpu 64 / 128 (50%)"]),
        ("/", ["memory 512Gi / 1Ti (50%)", "nvidia.com/gpu 32 / 32 (100%)"]),
    ],
)
def test_the_bars_count_pods_and_use_kubernetes_quantities(as_olga, big, url, labels):
    """A node running 4 pods shows them against its ``pods`` allocatable, as the API counts them."""
    html = as_olga.get(url).content.decode()

    assert [label for label in labels if label not in html] == []
    if url == "/nodes/":
        assert 'data-resource="pods" data-capacity="110" data-used="4"' in html


def test_the_overview_lists_one_line_per_worker_process(as_olga, db):
    now = timezone.now()
    for i in range(5):  # a Celery worker process runs each cycle as a task of its own
        SchedulingCycle.objects.create(
            worker=f"worker@vm:29750:task-{i:04d}-uuid", started_at=now - timedelta(minutes=i + 1)
        )
    SchedulingCycle.objects.create(worker="worker@vm:29751:task-x", started_at=now - timedelta(minutes=30))
    SchedulingCycle.objects.create(worker="laptop:4242", started_at=now - timedelta(minutes=2))  # no task
    SchedulingCycle.objects.create(worker="worker@vm:1:old", started_at=now - timedelta(hours=2))

    html = as_olga.get("/").content.decode()

    assert html.count("data-worker-process=") == 3
    assert '<div data-worker-process="worker@vm:29750">worker@vm:29750: 5 cycles, last <time' in html
    assert '<div data-worker-process="worker@vm:29751">worker@vm:29751: 1 cycle, last <time' in html
    assert '<div data-worker-process="laptop:4242">laptop:4242: 1 cycle, last <time' in html
    assert "task-0001" not in html and "worker@vm:1" not in html


@pytest.mark.parametrize("url", ["/gangs/", "/gangs/ml/big/", "/timed-out/"])
def test_progress_bars_have_a_legend_and_a_tooltip(as_olga, big, url):
    if url == "/timed-out/":
        time_out(big)
    html = as_olga.get(url).content.decode()

    assert 'class="legend progress-legend"' in html
    assert "<code>+Nr</code> for N more reserved: room held on a node" in html
    assert 'title="4 bound, 0 reserved (room held, not bound yet) of 4 needed (4 members)"' in html


def test_a_gang_beyond_its_minimum_counts_against_all_its_members_never_6_of_4():
    assert progress_label(bound=6, reserved=0, minimum=4, total=6) == "6/6 (min 4)"
    assert progress_label(bound=3, reserved=1, minimum=4, total=4) == "3/4 +1r"
    assert progress_label(bound=4, reserved=2, minimum=4, total=8) == "4/8 (min 4) +2r"


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_cli_shows_requests_as_kubernetes_writes_them(big):
    described = _run("describe", "gang", "ml/big")
    assert "cpu 16, memory 128Gi, nvidia.com/gpu 8" in described
    assert "16000" not in described

    pods = _run("get", "pods", "-n", "ml", "-o", "json")
    assert '"memory": "128Gi"' in pods and '"cpu": "16"' in pods
    nodes = _run("get", "nodes", "-o", "json")
    assert '"memory": "1Ti"' in nodes and '"pods": "110"' in nodes


def test_the_overview_shows_the_processes_make_run_restarted(as_olga, settings, tmp_path):
    restarts = tmp_path / "restarts.json"
    restarts.write_text(
        json.dumps(
            {
                "children": {
                    "web": {"restarts": 0},
                    "worker": {
                        "restarts": 3,
                        "last_exit_status": -9,
                        "last_restart_at": "2026-11-28T20:31:05Z",
                    },
                    "beat": {"restarts": 1, "last_exit_status": 1, "last_restart_at": "2026-11-28T20:30:00Z"},
                }
            }
        )
    )
    settings.GANGSCHED_RESTARTS_FILE = str(restarts)

    html = as_olga.get("/").content.decode()

    assert '<div data-process="worker"><span class="restarts-badge">worker restarted 3 times</span>' in html
    assert 'last exit -9 (SIGKILL), restarted <time datetime="2026-11-28T20:31:05+00:00" data-ago>' in html
    assert '<span class="restarts-badge">beat restarted 1 time</span> last exit 1,' in html
    assert 'data-process="web"' not in html


@pytest.mark.parametrize("content", [None, '{"children": {"worker": {"restarts": 0}}}'])
def test_the_overview_says_nothing_of_restarts_when_there_were_none(as_olga, settings, tmp_path, content):
    restarts = tmp_path / "restarts.json"
    if content is not None:
        restarts.write_text(content)
    settings.GANGSCHED_RESTARTS_FILE = str(restarts) if content is not None else ""

    html = as_olga.get("/").content.decode()

    assert 'id="restarts"' not in html and "restarts-badge" not in html
