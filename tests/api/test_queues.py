"""/api/v1/queues/: everyone signed in reads the tree with its live figures; operators create,
change, close, open and delete, each through services/queues.py (the same refusals as a
manifest, naming the JSON key); submitters are refused writes with 403."""

import pytest

from scheduler_core.models import Gang, Member, Queue

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def errors(response):
    return [(e["field"], e["reason"]) for e in response.json()["errors"]]


def test_operators_build_a_tree_everyone_reads_with_usage(as_olga, as_alice):
    created = as_olga.post(
        "/api/v1/queues/",
        {"name": "ml", "guarantee": {GPU: 4, "cpu": "8"}, "max": {GPU: 8}, "weight": 2},
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["guarantee"] == {GPU: 4, "cpu": 8000}
    child = {"name": "nlp", "parent": "ml", "guarantee": {GPU: 2}, "lendingLimit": {GPU: 1}}
    assert as_olga.post("/api/v1/queues/", child, format="json").status_code == 201
    gang = Gang.objects.create(namespace="ns", name="g", min_member=1, queue="nlp")
    Member.objects.create(namespace="ns", name="a", gang=gang, node="n1", phase="Running", requests={GPU: 3})
    Member.objects.create(namespace="ns", name="b", gang=gang, requests={GPU: 1})

    listed = as_alice.get("/api/v1/queues/")

    assert listed.status_code == 200
    rows = {row["name"]: row for row in listed.json()}
    assert [row["name"] for row in listed.json()] == ["ml", "nlp"]
    assert (rows["nlp"]["path"], rows["nlp"]["parent"], rows["nlp"]["lendingLimit"]) == (
        "ml/nlp",
        "ml",
        {GPU: 1},
    )
    assert (rows["nlp"]["used"], rows["nlp"]["pending"], rows["nlp"]["borrowed"]) == (
        {GPU: 3},
        {GPU: 1},
        {GPU: 1},
    )
    assert (rows["ml"]["used"], rows["ml"]["borrowed"], rows["ml"]["children"]) == ({GPU: 3}, {}, ["nlp"])
    detail = as_alice.get("/api/v1/queues/nlp/").json()
    assert (detail["weight"], detail["open"], detail["pendingPods"]) == (1.0, True, 1)
    assert [r["name"] for r in as_alice.get("/api/v1/queues/?parent=ml").json()] == ["nlp"]


def test_submitters_may_not_write(as_alice, olga):
    Queue.objects.create(name="ml")
    assert as_alice.post("/api/v1/queues/", {"name": "x"}, format="json").status_code == 403
    assert as_alice.patch("/api/v1/queues/ml/", {"weight": 3}, format="json").status_code == 403
    assert as_alice.delete("/api/v1/queues/ml/").status_code == 403
    assert as_alice.post("/api/v1/queues/ml/close/").status_code == 403
    assert not Queue.objects.filter(name="x").exists() and Queue.objects.get(name="ml").open


def test_bad_trees_are_refused_naming_the_json_key(as_olga):
    Queue.objects.create(name="ml", guarantee={GPU: 4})
    cases = [
        ({"name": "a", "guarantee": {GPU: "-1"}}, "guarantee"),
        ({"name": "a", "parent": "nowhere"}, "parent"),
        ({"name": "a", "guarantee": {GPU: 4}, "max": {GPU: 2}}, f"max.{GPU}"),
        ({"name": "a", "guarantee": {GPU: 1}, "lendingLimit": {GPU: 2}}, f"lendingLimit.{GPU}"),
        ({"name": "a", "weight": 0}, "weight"),
        ({"name": "ml"}, "name"),
        ({"name": "a", "colour": "red"}, "colour"),
    ]
    for body, field in cases:
        response = as_olga.post("/api/v1/queues/", body, format="json")
        assert response.status_code == 400, (body, response.json())
        assert errors(response)[0][0].startswith(field), (body, errors(response))
    assert list(Queue.objects.values_list("name", flat=True)) == ["ml"]
    response = as_olga.patch("/api/v1/queues/ml/", {"max": {GPU: 1}}, format="json")
    assert errors(response) == [(f"max.{GPU}", "max 1 is below the guarantee 4 of queue ml")]


def test_change_close_open_and_delete(as_olga):
    Queue.objects.create(name="ml", weight=1)
    changed = as_olga.patch("/api/v1/queues/ml/", {"weight": 3, "reclaimable": False}, format="json")
    assert (changed.status_code, changed.json()["weight"], changed.json()["reclaimable"]) == (200, 3.0, False)
    assert as_olga.post("/api/v1/queues/ml/close/").json()["open"] is False
    assert as_olga.post("/api/v1/queues/ml/open/").json()["open"] is True
    Gang.objects.create(namespace="ns", name="g", min_member=1, queue="ml")
    busy = as_olga.delete("/api/v1/queues/ml/")
    assert busy.status_code == 409 and "holds active gangs" in errors(busy)[0][1]
    Gang.objects.all().delete()
    assert as_olga.delete("/api/v1/queues/ml/").status_code == 204
    assert as_olga.get("/api/v1/queues/ml/").status_code == 404
    assert as_olga.delete("/api/v1/queues/ml/").status_code == 404
    assert as_olga.post("/api/v1/queues/ml/close/").status_code == 404


def test_a_submitter_refused_a_queue_reads_it_as_missing(as_alice, bob):
    from scheduler_core.models import QueueAccess

    private = Queue.objects.create(name="private")
    QueueAccess.objects.create(queue=private, user=bob)
    body = {"namespace": "ml", "name": "t", "minMember": 1, "pods": [{"name": "t-0"}]}
    refused = as_alice.post("/api/v1/gangs/", {**body, "queue": "private"}, format="json")
    missing = as_alice.post("/api/v1/gangs/", {**body, "queue": "nowhere"}, format="json")
    assert (refused.status_code, missing.status_code) == (400, 400)
    assert errors(refused) == [("queue", "queue private not found")]
    assert errors(missing) == [("queue", "queue nowhere not found")]
