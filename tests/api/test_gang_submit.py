"""POST /api/v1/gangs/: a JSON gang job, validated field by field; a refusal is a 400 naming the
field and the reason, and leaves nothing behind."""

from types import SimpleNamespace

import pytest

from dashboard.api.auth import TokenThrottle
from dashboard.api.throttles import SubmitThrottle, process_cache
from scheduler_core.models import Gang, GangEvent, GangGroup, Member
from tests.cast import make_gang

from .conftest import errors, job

URL = "/api/v1/gangs/"


def test_a_gang_job_is_created_with_its_pods_and_the_caller_as_submitter(as_alice):
    response = as_alice.post(URL, job(priority=100, placement="spread"), format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["key"], body["phase"], body["minMember"], body["submitter"]) == (
        "ml/train",
        "Pending",
        2,
        "alice",
    )
    gang = Gang.objects.get(namespace="ml", name="train")
    assert (gang.submitter, gang.placement, gang.priority, gang.source_format) == (
        "alice",
        "spread",
        100,
        "api",
    )
    assert gang.declaration["pods"][0]["name"] == "train-0"
    member = Member.objects.get(name="train-0")
    assert member.requests == {"cpu": 2000, "memory": 4 * 2**30, "nvidia.com/gpu": 1}
    assert GangEvent.objects.filter(gang=gang, kind="created").count() == 1


def test_a_submitter_field_in_the_body_is_refused_not_trusted(as_alice):
    response = as_alice.post(URL, job(submitter="bob"), format="json")
    assert response.status_code == 400
    assert errors(response) == [("submitter", "unknown field")]


def test_tasks_are_expanded_to_pods_named_after_gang_task_and_index(as_alice):
    tasks = [
        {"name": "master", "replicas": 1, "template": {"requests": {"cpu": "1"}}},
        {
            "name": "worker",
            "replicas": 3,
            "template": {
                "requests": {"cpu": "4", "memory": "8Gi"},
                "nodeSelector": {"interconnect": "infiniband"},
                "tolerations": [{"key": "hpc", "operator": "Exists", "effect": "NoSchedule"}],
                "durationSeconds": 600,
                "labels": {"app": "mpi"},
            },
        },
    ]
    response = as_alice.post(
        URL, job(name="mpi", minMember=3, pods=None, tasks=tasks) | {"pods": None}, format="json"
    )
    assert response.status_code == 400  # "pods": null is not "no pods": say which one you mean

    body = job(name="mpi", minMember=3, tasks=tasks)
    del body["pods"]
    response = as_alice.post(URL, body, format="json")

    assert response.status_code == 201, response.content
    names = sorted(Member.objects.filter(gang__name="mpi").values_list("name", flat=True))
    assert names == ["mpi-master-0", "mpi-worker-0", "mpi-worker-1", "mpi-worker-2"]
    worker = Member.objects.get(name="mpi-worker-2")
    assert worker.node_selector == {"interconnect": "infiniband"}
    assert worker.duration_seconds == 600
    assert worker.labels == {"app": "mpi", "gangsched.io/task": "worker"}


def test_a_pods_kubernetes_affinity_object_is_stored_as_its_required_terms(as_alice):
    terms = [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]}]
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    pods = [{"name": "a", "affinity": affinity}, {"name": "b", "affinity": terms}]
    response = as_alice.post(URL, job(pods=pods), format="json")
    assert response.status_code == 201, response.content
    assert {m.affinity == terms for m in Member.objects.all()} == {True}


def test_groups_put_the_gang_and_the_gangs_it_lists_in_one_gang_group(as_alice):
    make_gang("other", "worker", submitter="alice")
    response = as_alice.post(URL, job(groups=["other/worker"]), format="json")
    assert response.status_code == 201, response.content
    group = GangGroup.objects.get()
    assert group.members == ["ml/train", "other/worker"]
    assert response.json()["group"] == group.key
    assert {gang.key: gang.group for gang in Gang.objects.all()} == {"ml/train": group, "other/worker": group}


def test_groups_naming_no_gang_or_anothers_gang_are_refused_alike(as_alice, as_olga):
    """Another tenant's gang reads as one that does not exist: the same 400, nothing written."""
    make_gang("other", "worker", submitter="bob")
    missing = as_alice.post(URL, job(groups=["ml/train", "other/nobody"]), format="json")
    anothers = as_alice.post(URL, job(groups=["ml/train", "other/worker"]), format="json")
    assert (missing.status_code, anothers.status_code) == (400, 400)
    assert errors(anothers) == [("groups[1]", "gang other/worker not found")]
    assert anothers.content.replace(b"worker", b"nobody") == missing.content
    assert list(Gang.objects.values_list("name", "group")) == [("worker", None)]
    assert not GangGroup.objects.exists() and not Member.objects.filter(gang__name="train").exists()
    # An operator may group any tenant's gangs.
    assert as_olga.post(URL, job(groups=["other/worker"]), format="json").status_code == 201
    assert Gang.objects.get(name="worker").group is not None


def test_a_listed_gang_already_in_another_group_is_refused(as_alice):
    make_gang("ml", "a", submitter="alice")
    make_gang("ml", "b", submitter="alice")
    body = job(name="c", groups=["ml/a"], pods=[pod("c-0")], minMember=1)
    grouped = as_alice.post(URL, body, format="json")
    assert grouped.status_code == 201, grouped.content
    response = as_alice.post(URL, job(groups=["ml/a", "ml/b"]), format="json")
    assert response.status_code == 400
    assert errors(response) == [("groups[0]", "gang ml/a is already in gang group ml/a,ml/c")]
    assert not Gang.objects.filter(name="train").exists() and Gang.objects.get(name="b").group is None


def pod(name="train-0", **fields):
    return {"name": name, "requests": {"cpu": "1"}, **fields}


def without_pods(body):
    return {key: value for key, value in body.items() if key != "pods"}


def with_request(resource, value):
    return job(minMember=1, pods=[{"name": "train-0", "requests": {resource: value}}])


TOO_LONG_LABEL = "a" * 64

# (body, field, words in the reason)
REFUSALS = [
    # names: RFC 1123
    (job(namespace="ML"), "namespace", "RFC 1123 label"),
    (job(namespace=TOO_LONG_LABEL), "namespace", "RFC 1123 label"),
    (job(namespace="-ml"), "namespace", "RFC 1123 label"),
    (job(name="Train"), "name", "RFC 1123 subdomain"),
    (job(name=f"{TOO_LONG_LABEL}.x"), "name", "RFC 1123 subdomain"),
    (job(name="x" * 254), "name", "RFC 1123 subdomain"),
    (job(name="train_1"), "name", "RFC 1123 subdomain"),
    (job(pods=[pod("Pod-0"), pod("p1")]), "pods[0].name", "RFC 1123 subdomain"),
    (job(queue="root/analytics"), "queue", "RFC 1123 subdomain"),
    (job(groups=["not-a-key"]), "groups", "namespace/name"),
    # minMember: 1 .. members, and a set maximum
    (job(minMember=0), "minMember", "greater than or equal to 1"),
    (job(minMember=-3), "minMember", "greater than or equal to 1"),
    (job(minMember=3), "minMember", "more than the 2 pods"),
    (job(minMember="2"), "minMember", "valid integer"),
    (job(minMember=2.0), "minMember", "valid integer"),
    (job(minMember=True), "minMember", "valid integer"),
    (job(minMember=10001, totalNumber=20000), "minMember", "at most 10000"),
    (job(totalNumber=1), "totalNumber", "below minMember"),
    (job(minMember=1, totalNumber=1), "totalNumber", "2 pods but totalNumber is 1"),
    # quantities: the Kubernetes grammar, finite, non-negative, capped
    (with_request("cpu", "NaN"), "pods[0].requests.cpu", "not a finite quantity"),
    (with_request("cpu", "nan"), "pods[0].requests.cpu", "not a finite quantity"),
    (with_request("cpu", "Infinity"), "pods[0].requests.cpu", "not a finite quantity"),
    (with_request("memory", "-inf"), "pods[0].requests.memory", "not a finite quantity"),
    (with_request("cpu", "1_000"), "pods[0].requests.cpu", "underscores"),
    (with_request("cpu", "1e999999999"), "pods[0].requests.cpu", "out of range"),
    (with_request("memory", "1e15"), "pods[0].requests.memory", "above the limit"),
    (with_request("memory", "1e20"), "pods[0].requests.memory", "too large"),
    (with_request("memory", 2**48 + 1), "pods[0].requests.memory", "above the limit"),
    (with_request("cpu", "-1"), "pods[0].requests.cpu", "must not be negative"),
    (with_request("cpu", "2 cores"), "pods[0].requests.cpu", "expected a number"),
    (with_request("cpu", "0x10"), "pods[0].requests.cpu", "expected a number"),
    (with_request("cpu", True), "pods[0].requests.cpu", "quantity string"),
    (with_request("cpu", None), "pods[0].requests.cpu", "quantity string"),
    (with_request("nvidia.com/gpu", "0.5"), "pods[0].requests.nvidia.com/gpu", "whole numbers"),
    (with_request("bad resource", "1"), "pods[0].requests.bad resource", "qualified name"),
    (job(minResources={"cpu": "lots"}), "minResources.cpu", "expected a number"),
    # wait and duration times: positive and bounded
    (job(waitSeconds=0), "waitSeconds", "must be positive"),
    (job(waitSeconds=-5), "waitSeconds", "must be positive"),
    (job(waitSeconds=8 * 24 * 3600), "waitSeconds", "at most 604800 seconds"),
    (job(waitSeconds="300"), "waitSeconds", "valid number"),
    (job(waitSeconds="1_000"), "waitSeconds", "valid number"),
    (
        job(pods=[pod("a", durationSeconds=-1), pod("b")]),
        "pods[0].durationSeconds",
        "greater than or equal to 0",
    ),
    # booleans: JSON's true and false only (DRF would take "yes", "true", "on", 1 as true)
    (job(preemptible="yes"), "preemptible", "a JSON boolean"),
    (job(preemptible="false"), "preemptible", "a JSON boolean"),
    (job(preemptible=1), "preemptible", "a JSON boolean"),
    (job(preemptible=None), "preemptible", "may not be null"),
    (job(pods=[pod("a", preemptible="on"), pod("b")]), "pods[0].preemptible", "a JSON boolean"),
    (
        without_pods(job(tasks=[{"name": "w", "replicas": 2, "template": {"preemptible": 0}}])),
        "tasks[0].template.preemptible",
        "a JSON boolean",
    ),
    # enumerations
    (job(mode="Lenient"), "mode", "not a valid choice"),
    (job(style="Medium"), "style", "not a valid choice"),
    (job(placement="random"), "placement", "not a valid choice"),
    (job(restartPolicy="Always"), "restartPolicy", "not a valid choice"),
    # shapes
    (job(minMembers=2), "minMembers", "unknown field"),
    (job(pods=[pod("a", image="x"), pod("b")]), "pods[0].image", "unknown field"),
    (job(pods=[]), "pods", "at least one pod"),
    (job(pods=[pod("a"), pod("a")]), "pods", "used twice"),
    (job(pods=[pod("a", labels={"app": 1}), pod("b")]), "pods[0].labels.app", "must be a string"),
    (
        job(pods=[pod("a", nodeSelector={"bad key!": "x"}), pod("b")]),
        "pods[0].nodeSelector.bad key!",
        "qualified",
    ),
    (
        job(pods=[pod("a", tolerations=[{"operator": "Sometimes"}]), pod("b")]),
        "pods[0].tolerations",
        "operator",
    ),
    (
        job(pods=[pod("a", affinity=[{"matchExpressions": [{"key": "x", "operator": "Near"}]}]), pod("b")]),
        "pods[0].affinity",
        "operator",
    ),
    (job(tasks=[{"name": "w", "replicas": 2}]), "pods", "either pods or tasks"),
    # What Kubernetes bounds is bounded here too, shown in JSON's words.
    *[
        (
            job(
                pods=[
                    pod("a", affinity=[{"matchExpressions": [{"key": "rank", "operator": op, "values": v}]}])
                ]
            ),
            "pods[0].affinity",
            "exactly one value, an integer from 0 to 2^63-1",
        )
        for op, v in [
            ("Gt", ["1", "2"]),
            ("Lt", []),
            ("Gt", ["9223372036854775808"]),
            ("Lt", ["-1"]),
            ("Gt", ["x"]),
        ]
    ],
    (
        job(pods=[pod("a", tolerations=[{"key": "k", "effect": "NoExecute", "tolerationSeconds": 2**63}])]),
        "pods[0].tolerations",
        "tolerationSeconds must be an integer within int64",
    ),
    (
        job(pods=[pod("a", tolerations=[{"key": "k", "effect": "NoExecute", "tolerationSeconds": 1.5}])]),
        "pods[0].tolerations",
        '"tolerationSeconds": 1.5',  # the value as JSON, not as Python
    ),
]


@pytest.mark.parametrize(("body", "field", "words"), REFUSALS, ids=[f"{r[1]}:{r[2]}" for r in REFUSALS])
def test_each_rule_refuses_with_the_field_and_the_reason_and_creates_nothing(as_alice, body, field, words):
    response = as_alice.post(URL, body, format="json")

    assert response.status_code == 400, response.content
    assert any(f == field and words in reason for f, reason in errors(response)), errors(response)
    assert not Gang.objects.exists() and not Member.objects.exists() and not GangGroup.objects.exists()


PREFIX = '{"namespace": "ml", "name": "t", "minMember": 1, '


def test_json_nan_and_infinity_tokens_are_refused_as_a_parse_error(as_alice):
    for token in ("NaN", "Infinity", "-Infinity"):
        text = PREFIX + f'"waitSeconds": {token}, "pods": [{{"name": "a"}}]}}'
        response = as_alice.post(URL, text, content_type="application/json")
        assert response.status_code == 400
        assert response.json()["errors"][0]["reason"].startswith("JSON parse error")
        assert response.json()["errors"][0]["field"] == "body"
    assert not Gang.objects.exists()


def test_the_int64_bounds_themselves_are_accepted(as_alice):
    expression = {"key": "rank", "operator": "Gt", "values": [str(2**63 - 1)]}
    toleration = {"key": "k", "effect": "NoExecute", "tolerationSeconds": 2**63 - 1}
    body = job(
        minMember=1, pods=[pod("a", affinity=[{"matchExpressions": [expression]}], tolerations=[toleration])]
    )
    assert as_alice.post(URL, body, format="json").status_code == 201


def test_a_json_number_that_overflows_to_infinity_is_refused(as_alice):
    text = PREFIX + '"waitSeconds": 1e999, "pods": [{"name": "a"}]}'
    response = as_alice.post(URL, text, content_type="application/json")
    assert response.status_code == 400
    assert errors(response) == [("waitSeconds", "must be a finite number")]
    text = PREFIX + '"pods": [{"name": "a", "requests": {"cpu": 1e999}}]}'
    response = as_alice.post(URL, text, content_type="application/json")
    assert errors(response) == [("pods[0].requests.cpu", "must be a finite number")]
    assert not Gang.objects.exists()


def test_min_member_maximum_is_a_setting(as_alice, settings):
    settings.GANGSCHED_MAX_MIN_MEMBER = 1
    response = as_alice.post(URL, job(), format="json")
    assert response.status_code == 400
    assert ("pods", "at most 1 pods in a gang") in errors(response)


def test_a_task_expanding_past_the_maximum_is_refused(as_alice, settings):
    settings.GANGSCHED_MAX_MIN_MEMBER = 5
    body = job(minMember=1, tasks=[{"name": "w", "replicas": 6}])
    del body["pods"]
    response = as_alice.post(URL, body, format="json")
    assert response.status_code == 400
    assert errors(response) == [("tasks", "at most 5 pods in a gang")]


def test_a_duplicate_gang_is_refused_and_the_first_one_is_untouched(as_alice):
    assert as_alice.post(URL, job(), format="json").status_code == 201
    response = as_alice.post(URL, job(pods=[pod("other-0"), pod("other-1")]), format="json")
    assert response.status_code == 400
    assert "already exists" in errors(response)[0][1]
    assert Member.objects.count() == 2


def test_a_pod_name_taken_in_the_namespace_leaves_no_gang_behind(as_alice):
    assert as_alice.post(URL, job(), format="json").status_code == 201
    response = as_alice.post(URL, job(name="again"), format="json")
    assert response.status_code == 400
    assert "pod ml/train-0 already exists" in errors(response)[0][1]
    assert list(Gang.objects.values_list("name", flat=True)) == ["train"]


def test_a_long_gang_group_is_keyed_by_a_hash_of_its_members(as_alice):
    keys = [f"ns-{i}/{'g' * 60}" for i in range(20)]  # too long together for a key
    for key in keys:
        make_gang(*key.split("/"), submitter="alice", pods=1)
    response = as_alice.post(URL, job(groups=keys), format="json")
    assert response.status_code == 201, response.content
    assert GangGroup.objects.get().key.startswith("group-")


def test_a_refused_gang_group_rolls_back_the_gang(as_alice, monkeypatch):
    def refuse(**kwargs):
        raise ValueError("gang group refused")

    monkeypatch.setattr("dashboard.api.gang_submission.gang_group_join", refuse)
    response = as_alice.post(URL, job(groups=["other/worker"]), format="json")
    assert response.status_code == 400, response.content
    assert errors(response) == [(None, "gang group refused")]
    assert not Gang.objects.exists() and not Member.objects.exists() and not GangGroup.objects.exists()


def test_submissions_are_throttled_per_user(as_alice, as_bob, settings):
    settings.GANGSCHED_SUBMIT_RATE = "2/min"
    statuses = [
        as_alice.post(URL, job(name=f"t{i}", pods=[pod(f"t{i}-0")], minMember=1), format="json").status_code
        for i in range(3)
    ]
    assert statuses == [201, 201, 429]
    assert as_alice.get(URL).status_code == 200  # reading is never throttled
    assert as_bob.post(URL, job(name="b", pods=[pod("b-0")], minMember=1), format="json").status_code == 201


def test_the_throttle_counts_in_one_cache_per_process_with_the_settings_prefix(alice, as_alice, settings):
    """One cache object (one Redis connection pool) for every request, not one per request; made
    again when CACHES changes, so a test's own key prefix is the one counted under."""
    settings.GANGSCHED_SUBMIT_RATE = "1/min"
    shared = process_cache()
    assert SubmitThrottle().cache is shared and TokenThrottle().cache is shared
    assert shared.key_prefix == settings.CACHES["default"]["KEY_PREFIX"]
    assert as_alice.post(URL, job(name="t", pods=[pod("t-0")], minMember=1), format="json").status_code == 201
    assert process_cache() is shared
    assert shared.get(SubmitThrottle().get_cache_key(SimpleNamespace(user=alice), None))  # counted there
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": "another"}}
    assert process_cache() is not shared and process_cache().key_prefix == "another"
    # a fresh prefix holds no count: the next submission passes
    assert as_alice.post(URL, job(name="u", pods=[pod("u-0")], minMember=1), format="json").status_code == 201


def test_the_answer_is_the_stored_gang_as_drfs_serializer_shows_it(as_alice):
    """The 201 is built by GangRowOutput (no per-field DRF calls) from the gang as submitted:
    it is exactly what GangOutput makes of the gang read back from the database."""
    from dashboard.api.serializers import GangOutput

    response = as_alice.post(URL, job(waitSeconds=90, priority=-5, totalNumber=3), format="json")
    assert response.status_code == 201, response.content
    stored = Gang.objects.select_related("group").get(namespace="ml", name="train")
    assert response.json() == GangOutput(stored).data
