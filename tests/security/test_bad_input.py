"""Hostile and malformed input is a clear 4xx in the one error shape and creates nothing: YAML
bombs, cycles, deep nesting (YAML and JSON, manifests and gang jobs), NUL characters, unicode
names, huge minMember, negative quantities, over-size bodies. The rules of each field are
tested in tests/api/test_gang_submit.py and tests/declarations/; these are the attacks."""

import json
from collections import Counter

import pytest
import yaml
from django.contrib.auth.models import User

from scheduler_core.declarations.documents import MAX_DEPTH, MAX_VALUES
from scheduler_core.models import Gang, GangEvent, GangGroup, Member, Node
from tests.api.conftest import errors, job
from tests.declarations.mutations import BAD, PYTHON, paths, replaced, samples

MANIFESTS = "/api/v1/manifests/"
GANGS = "/api/v1/gangs/"

# Each line refers to the previous one ten times: 10**12 values from 1 KiB.
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(11)
)
# A real manifest whose labels are an alias standing for a million-value mapping.
ALIASED_PODGROUP = (
    "labels: &big {" + ", ".join(f"k{i}: v" for i in range(1000)) + "}\n"
    "many: &many [" + ", ".join(["*big"] * 600) + "]\n"
    "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    "metadata: {name: pg, namespace: ns}\nspec: {minMember: 1}\n"
)


def podgroup(name="pg", namespace="ns", spec="{minMember: 1}") -> str:
    return (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        f"metadata: {{name: {name}, namespace: {namespace}}}\nspec: {spec}\n"
    )


def pod(requests: str, name="p", gang="pg") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns\n"
        f"  labels: {{scheduling.x-k8s.io/pod-group: {gang}}}\n"
        "spec:\n  schedulerName: gangsched\n  containers:\n"
        f"  - name: c\n    resources: {{requests: {requests}}}\n"
    )


@pytest.fixture
def nothing_created(db):
    yield
    assert not Gang.objects.exists()
    assert not Member.objects.exists()
    assert not GangGroup.objects.exists()
    assert not GangEvent.objects.exists()
    assert not Node.objects.exists()


# (manifest text, content type, field, words in the reason)
BAD_MANIFESTS = [
    (BILLION_LAUGHS, "application/yaml", "body", f"more than {MAX_VALUES} values"),
    (ALIASED_PODGROUP, "application/yaml", "body", f"more than {MAX_VALUES} values"),
    ("a: &a [x, *a]\n", "application/yaml", "body", "inside its own anchor"),
    ("a: &a {b: *a}\n", "application/yaml", "body", "inside its own anchor"),
    ("x: *nowhere\n", "application/yaml", "body", "undefined alias"),
    ("[" * 100_000 + "]" * 100_000, "application/yaml", "body", f"nested more than {MAX_DEPTH}"),
    ("".join("  " * i + "a:\n" for i in range(200)), "application/yaml", "body", "nested more than"),
    ('{"a": ' * 900 + "1" + "}" * 900, "application/json", "body", "nested more than"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "application/json", "body", "nested more than"),
    (podgroup() + 'status: {note: "\\0"}\n', "application/yaml", "status.note", "NUL"),
    (podgroup() + "status: {ratio: .nan}\n", "application/yaml", "status.ratio", "NaN is not a number"),
    (podgroup() + "status: {limits: [1, -.inf]}\n", "application/yaml", "status.limits[1]", "-Infinity"),
    ("\udcff", "application/yaml", "body", "not UTF-8"),
    ("kind: [unclosed\n", "text/yaml", "body", "not valid YAML"),
    (podgroup(spec="{minMember: !!int x}"), "application/yaml", "body", "cannot read 'x' as !!int"),
    ("null", "application/json", "body", "holds no objects"),
    ("# nothing\n---\n---\n", "application/yaml", "body", "holds no objects"),
    (podgroup(name="训练"), "application/yaml", "metadata.name", "RFC 1123"),
    (podgroup(namespace="équipe"), "application/yaml", "metadata.namespace", "RFC 1123"),
    (podgroup(spec="{minMember: 1000000000000}"), "application/yaml", "spec.minMember", "out of range"),
    (podgroup(spec="{minMember: 1e400}"), "application/yaml", "spec.minMember", ""),
    (pod("{cpu: '-1'}"), "application/yaml", "spec.containers[0].resources.requests.cpu", "negative"),
    (pod("{memory: -1Gi}"), "application/yaml", "spec.containers[0].resources.requests.memory", "negative"),
    (podgroup(spec="{minMember: 1, minMember: 9}"), "application/yaml", "spec.minMember", "appears twice"),
    ('{"apiVersion": "v1", "kind": "Pod", "kind": "Node"}', "application/json", "kind", "appears twice"),
    (
        podgroup().replace("v1alpha1", "v9"),
        "application/yaml",
        "apiVersion",
        "use scheduling.x-k8s.io/v1alpha1",
    ),
    (podgroup().replace("x-k8s.io/v1alpha1", "example.com/v1"), "application/yaml", "apiVersion", "use "),
    (
        pod("{cpu: '1'}").replace("apiVersion: v1", "apiVersion: v2"),
        "application/yaml",
        "apiVersion",
        "use v1",
    ),
    (
        pod("{cpu: '1'}")
        + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        + "[{matchExpressions: [{key: gen, operator: Gt, values: ['9223372036854775808']}]}]}}}\n",
        "application/yaml",
        "nodeSelectorTerms[0].matchExpressions[0].values[0]",
        "int64",
    ),
    (
        pod("{cpu: '1'}")
        + "  tolerations: [{key: k, effect: NoExecute, tolerationSeconds: 9223372036854775808}]\n",
        "application/yaml",
        "spec.tolerations[0].tolerationSeconds",
        "out of range",
    ),
]


@pytest.mark.parametrize(
    ("text", "content_type", "field", "words"),
    BAD_MANIFESTS,
    ids=[f"{i}:{row[3] or row[2]}" for i, row in enumerate(BAD_MANIFESTS)],
)
def test_a_hostile_manifest_is_a_400_naming_the_problem(
    as_alice, nothing_created, text, content_type, field, words
):
    body = text.encode("utf-8", "surrogateescape")
    response = as_alice.post(MANIFESTS, body, content_type=content_type)

    assert response.status_code == 400, response.content[:300]
    [(got_field, reason)] = errors(response)
    assert got_field.endswith(field) and words in reason, (got_field, reason)


def test_a_manifest_over_the_size_limit_is_a_413_before_it_is_parsed(as_alice, nothing_created, settings):
    settings.GANGSCHED_MAX_MANIFEST_BYTES = 1000
    response = as_alice.post(MANIFESTS, BILLION_LAUGHS + "#" * 1000, content_type="application/yaml")
    assert response.status_code == 413
    assert errors(response) == [("body", "the manifest is over the limit of 1000 bytes")]


def deep(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


# (raw JSON body of a gang job, field, words in the reason)
BAD_JOBS = [
    ("[" * 100_000 + "]" * 100_000, "body", "nested more than"),
    (deep(100_000), "body", "nested more than"),
    (json.dumps(job(pods=[{"name": "p", "labels": json.loads(deep(900))}])), "body", "nested more than"),
    (json.dumps(job(pods=[{"name": "p", "labels": {"a": "\x00"}}], minMember=1)), "body", "NUL"),
    (json.dumps(job(name="训练")), "name", "RFC 1123"),
    (json.dumps(job(namespace="ml-\u00e9")), "namespace", "RFC 1123"),
    (json.dumps(job(namespace="ml\u200b")), "namespace", "RFC 1123"),
    (json.dumps(job(minMember=10**30, totalNumber=10**30)), "minMember", "at most"),
    (json.dumps(job(minMember=2**63)), "minMember", "at most"),
    (
        json.dumps(job(minMember=1, pods=[{"name": "p", "requests": {"memory": "-4Gi"}}])),
        "pods[0].requests.memory",
        "negative",
    ),
    (json.dumps(job(minResources={"nvidia.com/gpu": -1})), "minResources.nvidia.com/gpu", "negative"),
    # A key given twice, at any depth: refused naming it (json would keep the last value).
    (json.dumps(job(name="dup1"))[:-1] + ', "name": "dup2"}', "name", "'name' appears twice"),
    (
        json.dumps(job(minMember=1, pods=[{"name": "p", "requests": {"cpu": "1"}}])).replace(
            '"cpu": "1"', '"cpu": "1", "cpu": "64"'
        ),
        "pods[0].requests.cpu",
        "'cpu' appears twice in one object",
    ),
]


@pytest.mark.parametrize(
    ("body", "field", "words"), BAD_JOBS, ids=[f"{i}:{r[2]}" for i, r in enumerate(BAD_JOBS)]
)
def test_a_hostile_gang_job_is_a_400_naming_the_problem(as_alice, nothing_created, body, field, words):
    response = as_alice.post(GANGS, body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert any(f == field and words in reason for f, reason in errors(response)), errors(response)


@pytest.mark.parametrize(
    ("url", "body", "key"),
    [
        ("/api/v1/queues/", '{"name": "a", "name": "b"}', "name"),
        ("/api/v1/auth/token/", '{"username": "olga", "password": "x", "password": "y"}', "password"),
        ("/api/v1/simulations/", '{"cluster": "n32g4", "cluster": "n1g1"}', "cluster"),
        ("/api/v1/manifests/", '{"apiVersion": "v1", "kind": "Pod", "kind": "Node"}', "kind"),
    ],
)
def test_every_json_endpoint_refuses_a_key_given_twice_naming_it(as_olga, url, body, key):
    response = as_olga.post(url, body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert errors(response) == [(key, f"the key {key!r} appears twice in one object: remove one")]


def test_a_body_over_djangos_upload_limit_is_a_413_in_the_error_shape(as_alice, nothing_created, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = as_alice.post(GANGS, json.dumps(job(padding="x" * 20_000)), content_type="application/json")
    assert response.status_code == 413
    assert errors(response) == [("body", "the request body is over the limit of 10000 bytes")]


@pytest.mark.parametrize(
    "url",
    ["/api/v1/gangs/ml%00/train/", "/api/v1/gangs/ml/train%00/events/", "/gangs/ml%00/train/"],
)
def test_a_nul_in_a_gang_path_is_a_404_not_a_500(as_alice, client, alice, url):
    client.force_login(alice)
    caller = client if not url.startswith("/api/") else as_alice
    assert caller.get(url).status_code == 404


def test_a_nul_in_a_posted_gang_key_is_not_found(client, olga):
    client.force_login(olga)
    response = client.post(
        "/gangs/act/", {"action": "kill", "gang": "ml\x00/x", "confirm": "yes"}, follow=True
    )
    assert response.status_code == 200
    assert "ml\x00/x: not found" in [str(m) for m in response.context["messages"]]


def test_a_nul_in_a_login_is_refused_not_a_500(anonymous):
    response = anonymous.post(
        "/api/v1/auth/token/", '{"username": "\\u0000", "password": "x"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert not User.objects.exists()


# A sweep of thousands of posts: beside a CPU-bound load it outlasts the suite's 120 s safety
# net, which is there to catch a hang, not to time it.
@pytest.mark.timeout(900)
def test_no_refusal_through_the_api_has_a_null_field_or_python_words(as_olga, settings):
    """An example of every kind, one value made wrong at a time (the values of BAD in turn),
    posted one after the other without clearing what earlier posts created, so that conflicts
    found while writing (a pod already in another gang) are swept as well as parse errors."""
    settings.GANGSCHED_SUBMIT_RATE = "1000000/minute"
    mutations = [(path, document) for _, document in samples() for path in paths(document)]
    statuses, unclear = Counter(), []
    for index, (path, document) in enumerate(mutations):
        text = yaml.safe_dump(replaced(document, path, BAD[index % len(BAD)]))
        response = as_olga.post(MANIFESTS, text, content_type="application/yaml")
        statuses[response.status_code] += 1
        if response.status_code != 201:
            unclear += [(path, f, r) for f, r in errors(response) if not f or PYTHON.search(r)]

    assert set(statuses) == {201, 400} and statuses[400] > len(mutations) / 2, statuses
    assert not unclear, unclear[:10]


def test_a_conflict_with_a_lone_document_names_its_field(as_alice):
    """Found while writing, after every field parsed: the pod's own name is what conflicts."""
    assert as_alice.post(MANIFESTS, pod("{cpu: '1'}"), content_type="application/yaml").status_code == 201
    response = as_alice.post(MANIFESTS, pod("{cpu: '1'}", gang="other"), content_type="application/yaml")

    assert response.status_code == 400
    [(field, reason)] = errors(response)
    assert field == "metadata.name" and "already exists with gang ns/pg" in reason
