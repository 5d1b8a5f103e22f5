"""The request each cell of the matrix sends: its body per role, and the values that fill a
route's parameters. A write asks for something the role would be allowed to do if the rule let
it (its own new gang, its own credentials), so a refusal is the rule's and not bad input's."""

from __future__ import annotations

from django.test import Client

from tests.api.conftest import client_for
from tests.security.matrix_table import SECRET
from tests.security.urlmatrix import Endpoint

#: Route parameters: alice's gang, the simulation run of the fixture, made-up values elsewhere.
PARAMS = {
    "namespace": "ml",
    "name": SECRET,
    "object_id": "1",
    "id": "1",
    "content_type_id": "1",
    "app_label": "scheduler_core",
    "url": "no-such-page/",
    "uidb64": "MQ",
    "token": "made-up-token",
}
#: The queue every queue URL names (the matrix's world creates it).
QUEUE = "matrix-queue"
#: The topology every topology URL names (the matrix's world creates it).
TOPOLOGY = "matrix-topology"
PARAMS_BY_KEY = {
    "dashboard:simulation-plot": {"name": "comparison.png"},
    **{
        key: {"name": QUEUE}
        for key in ("api:queue", "api:queue-close", "api:queue-open", "dashboard:queue-action")
    },
    "api:topology": {"name": TOPOLOGY},
}

NODE = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: n-matrix}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"
)


def podgroup(name: str) -> str:
    return (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        f"metadata: {{name: {name}, namespace: ml}}\nspec: {{minMember: 1}}\n"
    )


def pod(name: str, group: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: {name}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: {group}}}}}\n"
        "spec: {containers: [{name: main, resources: {requests: {cpu: '1'}}}]}\n"
    )


def own_gang(role: str) -> str:
    return f"own-{role}"


def _yaml(text: str) -> dict:
    return {"data": text, "content_type": "application/yaml"}


def _json(body: dict) -> dict:
    return {"data": body, "format": "json"}


def _job(name: str) -> dict:
    return {"namespace": "ml", "name": name, "minMember": 1, "pods": [{"name": f"{name}-0"}]}


def _credentials(role: str) -> dict:
    if role == "anonymous":  # someone without an account
        return {"username": "nobody", "password": "nobody-pass-123"}
    return {"username": role, "password": f"{role}-pass-123"}


_SIMULATION = {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "policies": ["pod"]}
#: The same run replayed without the oracle: the same permission starts it.
_SIMULATION_LEARNED = {**_SIMULATION, "runtimes": "learned"}

#: A queue nobody made: to whoever may not use alice's queue, hers reads as this one.
NO_SUCH_QUEUE = "no-such-queue"


def in_queue(role: str, queue: str) -> dict:
    return _json({**_job(own_gang(role)), "queue": queue})


def _dry(build, option: str = "All"):
    """The request ``build`` makes, as a dry run (``?dryRun=<option>``)."""
    return lambda role: {**build(role), "QUERY_STRING": f"dryRun={option}"}


#: The submissions the matrix also sends as dry runs (case ``dry-run-<case>``, the same body).
_SUBMISSIONS = {
    ("api:gangs", "POST", "default"): lambda role: _json(_job(own_gang(role))),
    ("api:gangs", "POST", "others-key"): lambda role: _json(_job(SECRET)),
    ("api:gangs", "POST", "others-queue"): lambda role: in_queue(role, QUEUE),
    ("api:manifests", "POST", "default"): lambda role: _yaml(
        podgroup(own_gang(role)) + "---\n" + pod(f"{own_gang(role)}-0", own_gang(role))
    ),
    ("api:manifests", "POST", "node"): lambda role: _yaml(NODE),
    ("api:manifests", "POST", "others-podgroup"): lambda role: _yaml(podgroup(SECRET)),
    ("api:manifests", "POST", "others-pod"): lambda role: _yaml(pod(f"{SECRET}-extra", SECRET)),
}

#: (key, method, case) -> role -> the client call's keyword arguments.
REQUESTS = {
    ("api:token", "POST", "default"): lambda role: _json(_credentials(role)),
    **_SUBMISSIONS,
    **{(key, method, f"dry-run-{case}"): _dry(build) for (key, method, case), build in _SUBMISSIONS.items()},
    ("api:gangs", "POST", "dry-run-bad-option"): _dry(lambda role: _json(_job(own_gang(role))), "all"),
    ("api:manifests", "POST", "dry-run-bad-option"): _dry(lambda role: _yaml(podgroup(own_gang(role))), ""),
    ("api:manifests", "POST", "workload-priority-class"): lambda role: _yaml(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: w-matrix}\n"
        "value: 1000\n"
    ),
    ("api:manifests", "POST", "topology"): lambda role: _yaml(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t-matrix}\n"
        "spec: {levels: [{nodeLabel: example.com/rack}]}\n"
    ),
    ("api:manifests", "POST", "hypernode"): lambda role: _yaml(
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h-matrix}\n"
        "spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}\n"
    ),
    ("api:events", "GET", "gang-filter"): lambda role: {"data": {"gang": f"ml/{SECRET}"}},
    ("api:events", "GET", "actor-filter"): lambda role: {"data": {"actor": "alice"}},
    ("dashboard:history", "GET", "queue-filter"): lambda role: {"data": {"queue": "default"}},
    ("dashboard:history", "GET", "actor-filter"): lambda role: {"data": {"actor": "alice"}},
    ("api:simulations", "POST", "default"): lambda role: _json(_SIMULATION),
    ("api:simulations", "POST", "runtimes-learned"): lambda role: _json(_SIMULATION_LEARNED),
    ("api:queues", "POST", "default"): lambda role: _json(
        {"name": f"queue-{role}", "guarantee": {"cpu": "1"}}
    ),
    ("api:queue", "PATCH", "default"): lambda role: _json({"weight": 2}),
    # The schema as JSON (its default is YAML), so its refusal reads as every API refusal.
    ("api-schema", "GET", "default"): lambda role: {"HTTP_ACCEPT": "application/json"},
    ("metrics", "GET", "foreign-address"): lambda role: {"REMOTE_ADDR": "203.0.113.7"},
    ("dashboard:gang-action", "POST", "default"): lambda role: {
        "data": {"action": "kill", "gang": f"ml/{SECRET}", "confirm": "yes", "next": "/timed-out/"}
    },
    ("dashboard:gangs", "GET", "live-rows"): lambda role: {"data": {"live": "rows"}},
    ("dashboard:gang", "GET", "live-forecast"): lambda role: {"data": {"live": "forecast"}},
    ("dashboard:timed-out", "GET", "live-rows"): lambda role: {"data": {"live": "rows"}},
    ("dashboard:simulations", "POST", "default"): lambda role: {"data": _SIMULATION},
    ("dashboard:simulations", "POST", "runtimes-learned"): lambda role: {"data": _SIMULATION_LEARNED},
    ("dashboard:queue-action", "POST", "default"): lambda role: {"data": {"action": "close"}},
    ("login", "POST", "default"): lambda role: {"data": _credentials(role)},
    ("password_reset", "POST", "default"): lambda role: {"data": {"email": "nobody@example.com"}},
}


def request_kwargs(key: str, method: str, case: str, role: str) -> dict:
    build = REQUESTS.get((key, method, case))
    return build(role) if build else {}


def browser_for(user) -> Client:
    """A browser, signed in as ``user`` (None: anonymous)."""
    browser = Client()
    if user is not None:
        browser.force_login(user)
    return browser


def client(endpoint: Endpoint, user):
    """The API's token client for DRF views, a browser's session for the rest."""
    return client_for(user) if endpoint.is_api else browser_for(user)


def send(endpoint: Endpoint, method: str, browser, params: dict, kwargs: dict):
    """One request: the route filled with ``params`` (and its own, ``PARAMS_BY_KEY``)."""
    path = endpoint.path({**params, **PARAMS_BY_KEY.get(endpoint.key, {})})
    return getattr(browser, method.lower())(path, **kwargs)


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content
