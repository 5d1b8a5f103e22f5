"""``manage.py get queues`` and ``describe queue``: the tree as kubectl would print it, amounts
as Kubernetes writes them, the same live figures as the API."""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from scheduler_core.models import Gang, LocalQueue, Member, Queue, QueueAccess

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def tree():
    ml = Queue.objects.create(name="ml", guarantee={GPU: 8, "cpu": 16000}, max={GPU: 16})
    nlp = Queue.objects.create(name="nlp", parent=ml, guarantee={GPU: 2}, open=False)
    gang = Gang.objects.create(namespace="team", name="bert", min_member=1, queue="nlp", phase="Running")
    Member.objects.create(
        namespace="team",
        name="bert-0",
        gang=gang,
        node="n1",
        phase="Running",
        requests={GPU: 4, "memory": 2**31},
    )
    Member.objects.create(namespace="team", name="alone", queue="nlp", requests={"cpu": 500})
    return ml, nlp


def test_get_queues_prints_the_tree(tree):
    lines = run("get", "queues").splitlines()

    assert lines[0].split() == ["NAME", "PARENT", "GUARANTEE", "MAX", "USED", "PENDING", "STATE"]
    assert lines[1].split() == [
        "ml",
        "<none>",
        "cpu=16,nvidia.com/gpu=8",
        "nvidia.com/gpu=16",
        "memory=2Gi,nvidia.com/gpu=4",
        "cpu=0.5",  # the table displays cores; -o json keeps "500m"
        "Open",
    ]
    assert lines[2].split() == [
        "nlp",
        "ml",
        "nvidia.com/gpu=2",
        "<unlimited>",
        "memory=2Gi,nvidia.com/gpu=4",
        "cpu=0.5",  # the table displays cores; -o json keeps "500m"
        "Closed",
    ]


def test_get_queues_wide_and_json(tree):
    assert "BORROWED" in run("get", "queues", "-o", "wide").splitlines()[0]
    rows = json.loads(run("get", "queue", "-o", "json"))
    assert [(r["name"], r["path"], r["borrowed"]) for r in rows] == [
        ("ml", "ml", "memory=2Gi"),
        ("nlp", "ml/nlp", "memory=2Gi,nvidia.com/gpu=2"),
    ]


def test_no_queues_says_so(db):
    assert run("get", "queues").strip() == "No queues found."


def test_describe_queue(tree):
    ml, nlp = tree
    QueueAccess.objects.create(queue=nlp, group=Group.objects.create(name="nlp-team"))
    LocalQueue.objects.create(namespace="team", name="main", cluster_queue=nlp)

    text = run("describe", "queue", "nlp")

    assert "Path:           ml/nlp   Parent: ml" in text
    assert "State:          Closed" in text
    assert "Borrowed:       memory=2Gi,nvidia.com/gpu=2" in text
    assert "Pending:        cpu=0.5 (1 pods)" in text
    assert "Who may submit: group nlp-team" in text
    assert "LocalQueues:    team/main" in text
    assert "  team/bert Running" in text
    assert json.loads(run("describe", "queue", "ml", "-o", "json"))["children"] == ["nlp"]


def test_describe_an_unknown_queue_names_it(db):
    with pytest.raises(CommandError, match="queue nowhere not found"):
        run("describe", "queue", "nowhere")


def test_describe_lists_gangs_through_its_local_queues_in_their_namespace_only(tree):
    ml, nlp = tree
    LocalQueue.objects.create(namespace="team", name="main", cluster_queue=nlp)
    Gang.objects.create(namespace="team", name="via-local", min_member=1, queue="main")
    Gang.objects.create(namespace="other", name="elsewhere", min_member=1, queue="main")

    gangs = json.loads(run("describe", "queue", "nlp", "-o", "json"))["gangs"]

    assert gangs == ["team/bert Running", "team/via-local Pending"]


def test_describe_queue_displays_amounts_as_the_pages_do_with_the_exact_form_after_a_rounded_one():
    from scheduler_core.management.commands._queues import _shown

    assert _shown("cpu=16500m,memory=250000Mi") == "cpu=16.5,memory=244Gi (250000Mi)"
    assert _shown("nvidia.com/gpu=2,memory=128Gi") == "nvidia.com/gpu=2,memory=128Gi"
    assert _shown("<unlimited>") == "<unlimited>"
