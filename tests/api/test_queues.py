"""/api/v1/queues/: everyone signed in reads the tree with its live figures (a submitter, the
queues they may submit to and their ancestors); operators create,
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
    # The pending pod is no gang of alice's: she counts her own (none), an operator every one.
    assert (detail["weight"], detail["open"], detail["pendingPods"]) == (1.0, True, 0)
    assert as_olga.get("/api/v1/queues/nlp/").json()["pendingPods"] == 1
    assert (detail["stalled"], detail["stalledPods"]) == ({}, 0)
    gang.phase = "TimedOut"  # nobody tries it until an operator retries it
    gang.save(update_fields=["phase"])
    detail = as_alice.get("/api/v1/queues/nlp/").json()
    assert (detail["pending"], detail["pendingPods"]) == ({}, 0)
    assert (detail["stalled"], detail["stalledPods"]) == ({GPU: 1}, 0)  # the amount is the queue's
    detail = as_olga.get("/api/v1/queues/nlp/").json()
    assert (detail["stalled"], detail["stalledPods"]) == ({GPU: 1}, 1)
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


@pytest.mark.parametrize("key", ["reclaimable", "open", "cohort"])
@pytest.mark.parametrize("value", ["yes", "true", 1, 0])
def test_a_queue_s_booleans_are_json_booleans(as_olga, key, value):
    created = as_olga.post("/api/v1/queues/", {"name": "q", key: value}, format="json")
    assert created.status_code == 400
    assert errors(created) == [(key, "must be true or false (a JSON boolean)")]
    Queue.objects.create(name="q")
    changed = as_olga.patch("/api/v1/queues/q/", {key: value}, format="json")
    assert errors(changed) == [(key, "must be true or false (a JSON boolean)")]
    assert as_olga.patch("/api/v1/queues/q/", {key: False}, format="json").status_code == 200


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


@pytest.fixture
def private_tree(bob):
    """``org`` (bob only) over ``org-open`` (everyone) and ``org-bob`` (bob only); ``private-a``
    (bob only, top-level); ``public`` (everyone)."""
    from scheduler_core.models import QueueAccess

    org = Queue.objects.create(name="org")
    for name, parent, private in [
        ("org-open", org, False),
        ("org-bob", org, True),
        ("private-a", None, True),
        ("public", None, False),
    ]:
        queue = Queue.objects.create(name=name, parent=parent)
        if private:
            QueueAccess.objects.create(queue=queue, user=bob)
    QueueAccess.objects.create(queue=org, user=bob)


def test_a_submitter_reads_the_queues_they_may_use_and_their_ancestors(as_alice, as_bob, private_tree):
    listed = {row["name"]: row for row in as_alice.get("/api/v1/queues/").json()}
    # org stays, as the parent org-open's path names, but lists only the children alice reads.
    assert list(listed) == ["org", "org-open", "public"]
    assert listed["org"]["children"] == ["org-open"]
    assert listed["org-open"]["path"] == "org/org-open"
    assert [row["name"] for row in as_alice.get("/api/v1/queues/?parent=org").json()] == ["org-open"]
    assert as_alice.get("/api/v1/queues/?parent=private-a").json() == []
    for hidden in ("private-a", "org-bob"):
        refused, missing = as_alice.get(f"/api/v1/queues/{hidden}/"), as_alice.get("/api/v1/queues/nowhere/")
        assert (refused.status_code, refused.content) == (404, missing.content)
    assert as_alice.get("/api/v1/queues/org/").status_code == 200
    # Whoever may use them reads them all.
    assert [row["name"] for row in as_bob.get("/api/v1/queues/").json()] == [
        "org",
        "org-bob",
        "org-open",
        "private-a",
        "public",
    ]
    assert as_bob.get("/api/v1/queues/private-a/").status_code == 200


def test_a_group_grants_the_read_and_operators_and_viewers_read_everything(
    as_alice, alice, as_olga, as_vera, private_tree
):
    from django.contrib.auth.models import Group

    from scheduler_core.models import QueueAccess

    everything = ["org", "org-bob", "org-open", "private-a", "public"]
    assert [row["name"] for row in as_olga.get("/api/v1/queues/").json()] == everything
    assert [row["name"] for row in as_vera.get("/api/v1/queues/").json()] == everything
    assert as_vera.get("/api/v1/queues/private-a/").status_code == 200
    team = Group.objects.create(name="team")
    alice.groups.add(team)
    QueueAccess.objects.create(queue=Queue.objects.get(name="private-a"), group=team)
    assert as_alice.get("/api/v1/queues/private-a/").status_code == 200


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


VOLCANO_PODGROUP = (
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {{name: t, namespace: ml}}\nspec: {{minMember: 1, queue: {queue}}}\n"
)


def test_a_manifest_naming_a_refused_queue_reads_as_a_missing_one(as_alice, bob):
    from scheduler_core.models import QueueAccess

    private = Queue.objects.create(name="private")
    QueueAccess.objects.create(queue=private, user=bob)

    def apply(queue):
        return as_alice.post(
            "/api/v1/manifests/", VOLCANO_PODGROUP.format(queue=queue), content_type="application/yaml"
        )

    refused, missing = apply("private"), apply("nowhere")
    assert (refused.status_code, missing.status_code) == (400, 400)
    assert refused.content.replace(b"private", b"nowhere") == missing.content
    assert not Gang.objects.exists()


def test_queue_manifests_are_the_operators(as_alice):
    """Volcano, KAI and Kueue queue kinds are OPERATOR_KINDS: a submitter's is refused before
    it is read."""
    for api_version, kind in [
        ("scheduling.volcano.sh/v1beta1", "Queue"),
        ("scheduling.run.ai/v2", "Queue"),
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
        ("kueue.x-k8s.io/v1beta1", "LocalQueue"),
    ]:
        text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: q, namespace: ml}}\nspec: {{}}\n"
        response = as_alice.post("/api/v1/manifests/", text, content_type="application/yaml")
        assert response.status_code == 403, (kind, response.json())
    assert not Queue.objects.exists()


def test_a_nul_in_a_queue_name_is_not_found(as_olga):
    for method in ("get", "patch", "delete"):
        assert getattr(as_olga, method)("/api/v1/queues/a%00b/").status_code == 404
    assert as_olga.post("/api/v1/queues/a%00b/close/").status_code == 404


def test_fair_share_and_lent_come_from_the_latest_cycle(as_alice):
    """Only the engine computes a fair share: null until a cycle has seen the queue, then the
    cycle's figures (two queues of one CPU each, one of them borrowing the other's)."""
    from scheduler_core.services.cycle import cycle_run
    from scheduler_core.services.queues import queues_put
    from tests.loop.factories import make_gang, make_nodes
    from tests.queues.conftest import spec

    make_nodes(1, cpu=2)
    queues_put([spec("a", guarantee={"cpu": 1000}), spec("b", guarantee={"cpu": 1000})])
    before = {row["name"]: row for row in as_alice.get("/api/v1/queues/").json()}
    assert before["a"]["fairShare"] is None and before["a"]["lent"] is None

    make_gang("team/wide", 2, queue="a")  # 2 CPUs: borrows b's idle one
    cycle_run(holder="test")

    rows = {row["name"]: row for row in as_alice.get("/api/v1/queues/").json()}
    assert rows["a"]["fairShare"]["cpu"] == 2000  # b has no demand: a may have it all
    assert rows["a"]["borrowed"]["cpu"] == 1000
    assert rows["b"]["lent"] == {"cpu": 1000}
    assert as_alice.get("/api/v1/queues/b/").json()["lent"] == {"cpu": 1000}


def test_queue_reads_never_come_from_the_read_cache(as_alice, alice, private_tree, settings):
    """What a submitter reads of the tree follows access rows, which no gang change announces:
    a grant is read at once, and the fast path never answers a queue read."""
    from dashboard.api.cached_reads import fast_key
    from scheduler_core.models import QueueAccess

    settings.GANGSCHED_API_CACHE = True
    assert as_alice.get("/api/v1/queues/private-a/").status_code == 404
    QueueAccess.objects.create(queue=Queue.objects.get(name="private-a"), user=alice)
    assert as_alice.get("/api/v1/queues/private-a/").status_code == 200
    scope = {"method": "GET", "path": "/api/v1/queues/", "headers": [(b"authorization", b"Token x")]}
    assert fast_key(scope) is None


def test_a_queue_s_default_runtime(as_olga, as_alice):
    created = as_olga.post("/api/v1/queues/", {"name": "q", "defaultRuntimeSeconds": 600}, format="json")
    assert (created.status_code, created.json()["defaultRuntimeSeconds"]) == (201, 600.0)
    assert Queue.objects.get(name="q").default_runtime_s == 600
    for bad in (-1, "600", True):
        refused = as_olga.patch("/api/v1/queues/q/", {"defaultRuntimeSeconds": bad}, format="json")
        assert refused.status_code == 400 and errors(refused)[0][0] == "defaultRuntimeSeconds"
    cleared = as_olga.patch("/api/v1/queues/q/", {"defaultRuntimeSeconds": None}, format="json")
    assert (cleared.status_code, cleared.json()["defaultRuntimeSeconds"]) == (200, None)
    assert as_alice.patch("/api/v1/queues/q/", {"defaultRuntimeSeconds": 5}, format="json").status_code == 403
