"""The API emulator, through the unmodified official client: each real-server behaviour the
Kubernetes backend relies on (see the docstring of ``tests/kube/emulator.py``)."""

import json
import queue
import threading

import pytest
from kubernetes import client, watch

from tests.kube.emulator import KubeAPI

PODGROUPS = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")


def pod(name, *, labels=None, scheduler="gangsched", node=None, namespace="default"):
    spec = {"schedulerName": scheduler, "containers": [{"name": "main", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def binding(name, node):
    target = client.V1ObjectReference(kind="Node", name=node)
    return client.V1Binding(metadata=client.V1ObjectMeta(name=name), target=target)


def names(items):
    return [item.metadata.name for item in items]


def watched(func, *args, count, **kwargs):
    """The first ``count`` events of a watch (``timeout_seconds`` only bounds a broken test)."""
    events, stream = [], watch.Watch()
    for event in stream.stream(func, *args, timeout_seconds=5, **kwargs):
        events.append((event["type"], event["raw_object"]))
        if len(events) == count:
            stream.stop()
    return events


@pytest.fixture
def v1(kube_api):
    return client.CoreV1Api(kube_api.api_client())


@pytest.fixture
def custom(kube_api):
    kube_api.add_crd(*PODGROUPS, kind="PodGroup")
    return client.CustomObjectsApi(kube_api.api_client())


def test_writes_set_uid_creation_time_and_a_growing_resource_version(kube_api, v1):
    first = v1.create_namespaced_pod("default", pod("a"))
    second = v1.create_namespaced_pod("default", pod("b"))
    patched = v1.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"x": "1"}}})

    assert first.metadata.uid and first.metadata.uid != second.metadata.uid
    assert first.metadata.creation_timestamp is not None
    rvs = [int(o.metadata.resource_version) for o in (first, second, patched)]
    assert rvs == sorted(set(rvs))
    assert patched.metadata.uid == first.metadata.uid
    assert v1.list_namespaced_pod("default").metadata.resource_version == str(rvs[-1])
    assert kube_api.resource_version == rvs[-1]


def test_a_write_that_changes_nothing_is_not_a_new_version(v1):
    created = v1.create_namespaced_pod("default", pod("a", labels={"x": "1"}))
    same = v1.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"x": "1"}}})
    assert same.metadata.resource_version == created.metadata.resource_version


def test_watch_from_the_list_resource_version_sees_only_later_events(v1):
    v1.create_namespaced_pod("default", pod("old"))
    v1.create_namespaced_pod("default", pod("gone"))
    listed = v1.list_namespaced_pod("default")
    v1.create_namespaced_pod("default", pod("new"))
    v1.patch_namespaced_pod("old", "default", {"metadata": {"labels": {"seen": "yes"}}})
    v1.delete_namespaced_pod("gone", "default")

    events = watched(
        v1.list_namespaced_pod, "default", count=3, resource_version=listed.metadata.resource_version
    )

    assert [(kind, obj["metadata"]["name"]) for kind, obj in events] == [
        ("ADDED", "new"),
        ("MODIFIED", "old"),
        ("DELETED", "gone"),
    ]
    rvs = [int(obj["metadata"]["resourceVersion"]) for _, obj in events]
    assert rvs == sorted(rvs) and rvs[0] > int(listed.metadata.resource_version)
    assert events[1][1]["metadata"]["labels"] == {"seen": "yes"}


def test_watch_without_resource_version_starts_with_current_objects(v1):
    v1.create_namespaced_pod("default", pod("a"))
    v1.create_namespaced_pod("other", pod("b", namespace="other"))

    events = watched(v1.list_pod_for_all_namespaces, count=2)

    assert [(kind, obj["metadata"]["name"]) for kind, obj in events] == [("ADDED", "a"), ("ADDED", "b")]


def test_watch_ends_after_timeout_seconds(v1):
    events = list(watch.Watch().stream(v1.list_namespaced_pod, "default", timeout_seconds=1))
    assert events == []


def test_watch_from_a_compacted_resource_version_is_410_gone(kube_api, v1):
    v1.create_namespaced_pod("default", pod("a"))
    old = v1.list_namespaced_pod("default").metadata.resource_version
    v1.create_namespaced_pod("default", pod("b"))
    kube_api.compact()

    raw = v1.list_namespaced_pod("default", watch=True, resource_version=old, _preload_content=False)
    assert raw.status == 200
    lines = [json.loads(line) for line in raw.data.splitlines()]
    assert lines == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "code": 410,
                "status": "Failure",
                "message": f"too old resource version: {old} ({int(old) + 1})",
                "reason": "Expired",
            },
        }
    ]
    with pytest.raises(client.ApiException) as gone:
        watched(v1.list_namespaced_pod, "default", count=1, resource_version=old)
    assert gone.value.status == 410

    current = v1.list_namespaced_pod("default").metadata.resource_version
    v1.create_namespaced_pod("default", pod("c"))
    events = watched(v1.list_namespaced_pod, "default", count=1, resource_version=current)
    assert events[0][1]["metadata"]["name"] == "c"


def test_history_keeps_only_its_limit_of_events_per_kind():
    api = KubeAPI(history_limit=2)
    try:
        v1 = client.CoreV1Api(api.api_client())
        rvs = [v1.create_namespaced_pod("default", pod(f"p{i}")).metadata.resource_version for i in range(4)]
        with pytest.raises(client.ApiException) as gone:
            watched(v1.list_namespaced_pod, "default", count=1, resource_version=rvs[0])
        assert gone.value.status == 410
        events = watched(v1.list_namespaced_pod, "default", count=2, resource_version=rvs[1])
        assert [obj["metadata"]["name"] for _, obj in events] == ["p2", "p3"]
    finally:
        api.close()


def test_a_dropped_watch_resumes_from_its_last_resource_version(kube_api, v1):
    got: queue.Queue = queue.Queue()
    stream = watch.Watch()  # no timeout: the client reconnects from its last RV by itself

    def consume():
        for count, event in enumerate(stream.stream(v1.list_namespaced_pod, "default"), 1):
            got.put((event["type"], event["raw_object"]["metadata"]["name"]))
            if count == 3:
                stream.stop()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    first_rv = v1.create_namespaced_pod("default", pod("p1")).metadata.resource_version
    assert got.get(timeout=10) == ("ADDED", "p1")

    kube_api.drop_watches()
    v1.create_namespaced_pod("default", pod("p2"))
    v1.create_namespaced_pod("default", pod("p3"))
    consumer.join(timeout=10)
    assert not consumer.is_alive()

    assert [got.get_nowait() for _ in range(got.qsize())] == [("ADDED", "p2"), ("ADDED", "p3")]
    watches = [r for r in kube_api.requests() if r.params.get("watch") == "true"]
    assert len(watches) == 2
    assert watches[1].params["resourceVersion"] == first_rv


def test_field_selectors_on_list(v1):
    v1.create_namespaced_pod("default", pod("mine"))
    v1.create_namespaced_pod("default", pod("bound", node="n1"))
    v1.create_namespaced_pod("default", pod("theirs", scheduler="default-scheduler"))

    def listed(selector):
        return names(v1.list_pod_for_all_namespaces(field_selector=selector).items)

    assert listed("spec.schedulerName=gangsched") == ["bound", "mine"]
    assert listed("spec.schedulerName==gangsched,spec.nodeName=") == ["mine"]
    assert listed("spec.nodeName!=") == ["bound"]
    assert listed("spec.nodeName=n1,metadata.namespace=default") == ["bound"]
    assert listed("status.phase=Pending,metadata.name!=mine") == ["bound", "theirs"]
    with pytest.raises(client.ApiException) as refused:
        listed("spec.priority=1")
    assert refused.value.status == 400


def test_field_selector_on_custom_objects_knows_only_metadata(custom):
    for name in ("a", "b"):
        custom.create_namespaced_custom_object(*PODGROUPS[:2], "default", PODGROUPS[2], podgroup(name))
    found = custom.list_namespaced_custom_object(
        *PODGROUPS[:2], "default", PODGROUPS[2], field_selector="metadata.name=b"
    )
    assert [item["metadata"]["name"] for item in found["items"]] == ["b"]
    with pytest.raises(client.ApiException) as refused:
        custom.list_namespaced_custom_object(
            *PODGROUPS[:2], "default", PODGROUPS[2], field_selector="spec.minMember=2"
        )
    assert refused.value.status == 400


def test_a_watch_with_a_field_selector_sees_an_object_leave_it(v1):
    v1.create_namespaced_pod("default", pod("p"))
    rv = v1.list_namespaced_pod("default").metadata.resource_version
    v1.create_namespaced_pod_binding("p", "default", binding("p", "n1"), _preload_content=False)

    events = watched(
        v1.list_namespaced_pod, "default", count=1, resource_version=rv, field_selector="spec.nodeName="
    )

    assert [(kind, obj["metadata"]["name"], obj["spec"]["nodeName"]) for kind, obj in events] == [
        ("DELETED", "p", "n1")
    ]


def test_label_selectors(v1):
    v1.create_namespaced_pod("default", pod("a", labels={"app": "web", "tier": "front"}))
    v1.create_namespaced_pod("default", pod("b", labels={"app": "db"}))
    v1.create_namespaced_pod("default", pod("c"))

    def listed(selector):
        return names(v1.list_namespaced_pod("default", label_selector=selector).items)

    assert listed("app=web") == ["a"]
    assert listed("app==db") == ["b"]
    assert listed("app!=web") == ["b", "c"]
    assert listed("app in (web,db)") == ["a", "b"]
    assert listed("app notin (web)") == ["b", "c"]
    assert listed("app") == ["a", "b"]
    assert listed("!app") == ["c"]
    assert listed("app in (web, db),!tier") == ["b"]
    events = watched(v1.list_namespaced_pod, "default", count=1, label_selector="tier=front")
    assert events[0][1]["metadata"]["name"] == "a"


def test_binding_sets_the_node_then_conflicts_and_is_404_for_a_missing_pod(v1):
    created = v1.create_namespaced_pod("default", pod("p"))

    answer = v1.create_namespaced_pod_binding("p", "default", binding("p", "n1"), _preload_content=False)

    assert answer.status == 201
    assert json.loads(answer.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    bound = v1.read_namespaced_pod("p", "default")
    assert bound.spec.node_name == "n1"
    assert int(bound.metadata.resource_version) > int(created.metadata.resource_version)
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]

    with pytest.raises(client.ApiException) as conflict:
        v1.create_namespaced_pod_binding("p", "default", binding("p", "n2"), _preload_content=False)
    assert conflict.value.status == 409
    body = json.loads(conflict.value.body)
    assert (body["reason"], body["message"]) == ("Conflict", 'pod p is already assigned to node "n1"')
    assert v1.read_namespaced_pod("p", "default").spec.node_name == "n1"

    with pytest.raises(client.ApiException) as missing:
        v1.create_namespaced_pod_binding("nope", "default", binding("nope", "n1"), _preload_content=False)
    assert missing.value.status == 404
    assert json.loads(missing.value.body)["reason"] == "NotFound"


def test_patch_with_a_stale_resource_version_is_409(v1):
    created = v1.create_namespaced_pod("default", pod("p"))
    stale = created.metadata.resource_version
    v1.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": "1"}, "resourceVersion": stale}})

    with pytest.raises(client.ApiException) as conflict:
        v1.patch_namespaced_pod(
            "p", "default", {"metadata": {"labels": {"a": "2"}, "resourceVersion": stale}}
        )

    assert conflict.value.status == 409
    assert json.loads(conflict.value.body)["reason"] == "Conflict"
    assert v1.read_namespaced_pod("p", "default").metadata.labels == {"a": "1"}


def test_lease_create_get_replace_with_optimistic_concurrency(kube_api):
    leases = client.CoordinationV1Api(kube_api.api_client())
    spec = client.V1LeaseSpec(holder_identity="worker-1", lease_duration_seconds=15)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="gangsched"), spec=spec)
    created = leases.create_namespaced_lease("default", body)

    read = leases.read_namespaced_lease("gangsched", "default")
    assert read.spec.holder_identity == "worker-1"
    read.spec.holder_identity = "worker-2"
    replaced = leases.replace_namespaced_lease("gangsched", "default", read)
    assert replaced.spec.holder_identity == "worker-2"
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)

    created.spec.holder_identity = "worker-3"  # a rival holding the first version
    with pytest.raises(client.ApiException) as conflict:
        leases.replace_namespaced_lease("gangsched", "default", created)
    assert conflict.value.status == 409
    assert leases.read_namespaced_lease("gangsched", "default").spec.holder_identity == "worker-2"


def podgroup(name, min_member=2):
    meta = {"name": name, "namespace": "default"}
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": min_member},
    }


def test_podgroup_create_and_status_subresource(custom):
    group, version, plural = PODGROUPS
    created = custom.create_namespaced_custom_object(
        group, version, "default", plural, podgroup("g") | {"status": {"phase": "Forged"}}
    )
    assert "status" not in created  # the status subresource: create ignores it

    custom.patch_namespaced_custom_object_status(
        group, version, "default", plural, "g", {"status": {"phase": "Scheduled"}, "spec": {"minMember": 9}}
    )
    custom.patch_namespaced_custom_object(
        group, version, "default", plural, "g", {"status": {"phase": "Ignored"}, "spec": {"minMember": 3}}
    )

    stored = custom.get_namespaced_custom_object(group, version, "default", plural, "g")
    assert stored["status"] == {"phase": "Scheduled"}
    assert stored["spec"] == {"minMember": 3}
    assert int(stored["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])


def test_pod_status_patch_and_delete(v1):
    v1.create_namespaced_pod("default", pod("p"))
    patched = v1.patch_namespaced_pod_status("p", "default", {"status": {"phase": "Running"}})
    assert patched.status.phase == "Running"

    v1.delete_namespaced_pod("p", "default")

    assert names(v1.list_namespaced_pod("default").items) == []
    with pytest.raises(client.ApiException) as missing:
        v1.read_namespaced_pod("p", "default")
    assert missing.value.status == 404


def test_core_and_events_k8s_io_events_are_created(kube_api, v1):
    involved = client.V1ObjectReference(kind="Pod", name="p", namespace="default")
    core = client.CoreV1Event(
        metadata=client.V1ObjectMeta(generate_name="p."), involved_object=involved, reason="Bound"
    )
    created = v1.create_namespaced_event("default", core)
    assert created.metadata.name.startswith("p.") and created.reason == "Bound"

    events = client.EventsV1Api(kube_api.api_client())
    new = client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="p.2"),
        event_time="2026-11-23T00:00:00.000000Z",
        regarding=involved,
        reason="Waiting",
    )
    events.create_namespaced_event("default", new)
    assert [e.reason for e in events.list_namespaced_event("default").items] == ["Waiting"]


def test_discovery_lists_an_added_crd_and_is_404_for_an_absent_group(kube_api, custom):
    resources = custom.get_api_resources("scheduling.x-k8s.io", "v1alpha1")
    assert "podgroups" in [r.name for r in resources.resources]
    groups = client.ApisApi(kube_api.api_client()).get_api_versions()
    assert "scheduling.x-k8s.io" in [g.name for g in groups.groups]
    assert "batch.volcano.sh" not in [g.name for g in groups.groups]

    with pytest.raises(client.ApiException) as absent:
        custom.get_api_resources("batch.volcano.sh", "v1alpha1")
    assert absent.value.status == 404
    with pytest.raises(client.ApiException) as absent:
        custom.list_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "podgroups")
    assert absent.value.status == 404


def test_fail_next_answers_the_given_status_then_serves_again(kube_api, v1):
    v1.create_namespaced_pod("default", pod("p"))
    kube_api.fail_next("POST", r"/pods/p/binding$", 500)
    kube_api.fail_next("list", r"^/api/v1/namespaces/default/pods$", 503, times=2)

    with pytest.raises(client.ApiException) as failed:
        v1.create_namespaced_pod_binding("p", "default", binding("p", "n1"), _preload_content=False)
    assert failed.value.status == 500
    assert v1.read_namespaced_pod("p", "default").spec.node_name is None
    assert (
        v1.create_namespaced_pod_binding("p", "default", binding("p", "n1"), _preload_content=False).status
        == 201
    )

    for _ in range(2):
        with pytest.raises(client.ApiException) as unavailable:
            v1.list_namespaced_pod("default")
        assert unavailable.value.status == 503
    assert names(v1.list_namespaced_pod("default").items) == ["p"]


def test_a_429_carries_retry_after_and_the_client_retries_a_read_itself(kube_api, v1):
    kube_api.fail_next("GET", r"/pods$", 429)

    assert v1.list_namespaced_pod("default").items == []
    assert [r.action.value for r in kube_api.requests()] == ["LIST", "LIST"]


def test_direct_helpers_write_as_a_kubelet_would(kube_api, v1):
    created = kube_api.create(pod("p", node="n1") | {"status": {"phase": "Running"}})
    rv = created["metadata"]["resourceVersion"]
    assert v1.read_namespaced_pod("p", "default").status.phase == "Running"

    kube_api.patch("v1/pods", "p", {"status": {"phase": "Succeeded"}}, namespace="default")
    kube_api.delete("v1/pods", "p", namespace="default")

    events = watched(v1.list_namespaced_pod, "default", count=2, resource_version=rv)
    assert [(kind, obj["status"]["phase"]) for kind, obj in events] == [
        ("MODIFIED", "Succeeded"),
        ("DELETED", "Succeeded"),
    ]
    assert kube_api.get("v1/pods", "p", "default") is None
    assert kube_api.objects("v1/pods") == []
