"""The install manifests in deploy/kubernetes/: they parse, kubectl accepts them, and they say what
gangsched needs (settings it reads, the processes it runs, the RBAC it calls the API with).

kubectl's client-side dry run still maps each kind to a resource through the API server's
discovery, so it cannot run against nothing: ``api_server`` is a small local HTTP server that
answers discovery for the group/versions a Kubernetes >= 1.24 API server serves for the kinds
shipped here (plus the PodGroup CRD, read from the shipped file) and 404 for every object. A
manifest naming an API that no longer exists (``rbac.authorization.k8s.io/v1beta1``, removed in
1.22) fails as it would on a real cluster. Works with Debian's kubectl 1.20 and kubectl 1.32;
``GANGSCHED_KUBECTL`` picks another binary. Without kubectl the kubectl tests skip, unless ``CI`` is
set (CI installs it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"
FILES = sorted(DEPLOY.rglob("*.yaml"))
CRD = DEPLOY / "scheduling.x-k8s.io_podgroups.yaml"
# kubernetes-sigs/scheduler-plugins, manifests/crds/scheduling.x-k8s.io_podgroups.yaml (a symlink
# to manifests/coscheduling/crd.yaml) at 903da7df82cb8794dda8f2d510ba1156111662dd; shipped unchanged.
CRD_SHA256 = "acf75c3eef75e1273f0d1ed53a4b230b558d8066a92acdddc10c9bc8c91ab42c"
NAMESPACE = "gangsched"
IMAGE = "gangsched"

#: The variables the Kubernetes backend reads (added to gangsched/settings/scheduler.py with it).
BACKEND_VARIABLES = {
    "CLUSTER_BACKEND",
    "GANGSCHED_SCHEDULER_NAME",
    "GANGSCHED_KUBE_QPS",
    "GANGSCHED_KUBE_BURST",
    "GANGSCHED_KUBE_NAMESPACE",
    "GANGSCHED_LEADER_ID",
    "GANGSCHED_PLACEHOLDER_IMAGE",
}

#: What each Deployment runs: (container, command prefix).
PROCESSES = {
    "gangsched-web": (
        "web",
        ["python", "-m", "gangsched.web_server", "gangsched.asgi:application", "--host", "0.0.0.0"],
    ),
    "gangsched-worker": ("worker", ["celery", "-A", "gangsched", "worker", "-l", "info"]),
    "gangsched-beat": ("beat", ["celery", "-A", "gangsched", "beat", "-l", "info"]),
    "gangsched-watcher": ("watcher", ["python", "manage.py", "kube_watch"]),
}


# ---------------------------------------------------------------- loading


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def installed() -> list[dict[str, Any]]:
    """Every object kustomization.yaml installs, in its order."""
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    return [doc for name in kustomization["resources"] for doc in documents(DEPLOY / name)]


def only(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def deployments() -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in installed() if o["kind"] == "Deployment"}


def containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    spec = deployment["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in containers(deployment) if c["name"] == name)


# ---------------------------------------------------------------- every file


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_manifest_parses_and_names_its_objects(path):
    docs = documents(path)
    assert docs, f"{path} holds no object"
    for doc in docs:
        if path.name == "kustomization.yaml":
            assert doc["kind"] == "Kustomization"
        for key in ("apiVersion", "kind"):
            assert isinstance(doc.get(key), str) and doc[key], f"{path}: an object without {key}"
        if path.name != "kustomization.yaml":
            assert doc["metadata"]["name"], f"{path}: a {doc['kind']} without metadata.name"


def test_the_kustomization_installs_every_manifest_but_the_secret_example():
    resources = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"]
    top_level = {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert sorted(resources) == sorted(top_level)
    # Applying the example would overwrite the operator's real Secret with placeholder values.
    assert all(o["kind"] != "Secret" for o in installed())


def test_the_crd_is_the_upstream_file_unchanged():
    assert hashlib.sha256(CRD.read_bytes()).hexdigest() == CRD_SHA256
    crd = only(documents(CRD), "CustomResourceDefinition")
    assert crd["metadata"]["name"] == "podgroups.scheduling.x-k8s.io"
    assert crd["spec"]["group"] == "scheduling.x-k8s.io"
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert CRD_SHA256 in (DEPLOY / "README.md").read_text()  # its provenance is written down


# ---------------------------------------------------------------- settings


def settings_variables() -> set[str]:
    """The environment variables gangsched/settings/*.py read."""
    names = set()
    for path in (ROOT / "gangsched" / "settings").glob("*.py"):
        names |= set(re.findall(r"os\.environ(?:\.get\(|\[)\s*[\"']([A-Z][A-Z0-9_]*)[\"']", path.read_text()))
    return names


def variables_set() -> dict[str, str]:
    """Every variable the manifests give a process, with where it is set."""
    objects = installed() + documents(DEPLOY / "secret.example.yaml")
    where = {}
    for key in only(objects, "ConfigMap", "gangsched-config")["data"]:
        where[key] = "configmap.yaml"
    for key in only(objects, "Secret", "gangsched-secrets")["stringData"]:
        where[key] = "secret.example.yaml"
    for name, deployment in deployments().items():
        for c in containers(deployment):
            for env in c.get("env", []):
                where[env["name"]] = f"{name}/{c['name']}"
    return where


def test_the_settings_parser_sees_the_variables_it_must():
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG"} <= settings_variables()


#: Variables read by the programs gangsched runs rather than by its settings.
SERVER_VARIABLES = {"WEB_CONCURRENCY"}  # uvicorn's --workers default


def test_every_variable_the_manifests_set_is_one_gangsched_reads():
    known = settings_variables() | BACKEND_VARIABLES | SERVER_VARIABLES
    unknown = {name: where for name, where in variables_set().items() if name not in known}
    assert not unknown, f"variables no setting reads (a typo?): {unknown}"


def test_the_configmap_selects_the_kubernetes_backend_and_keeps_secrets_out():
    config = only(installed(), "ConfigMap", "gangsched-config")["data"]
    assert config["CLUSTER_BACKEND"] == "kubernetes"
    assert config["GANGSCHED_SCHEDULER_NAME"] == "gangsched"
    assert (config["GANGSCHED_KUBE_QPS"], config["GANGSCHED_KUBE_BURST"]) == ("50", "100")
    assert config["GANGSCHED_PLACEHOLDER_IMAGE"] == "registry.k8s.io/pause:3.10"
    assert not {"SECRET_KEY", "DATABASE_URL"} & set(config)
    secret = only(documents(DEPLOY / "secret.example.yaml"), "Secret", "gangsched-secrets")
    assert set(secret["stringData"]) == {"SECRET_KEY", "DATABASE_URL"}


def test_every_gangsched_container_reads_the_configmap_then_the_secret():
    for name, deployment in deployments().items():
        for c in containers(deployment):
            sources = [next(iter(s.items())) for s in c["envFrom"]]
            # The Secret last: a key in both (REDIS_URL with a password) takes the Secret's value.
            assert sources == [
                ("configMapRef", {"name": "gangsched-config"}),
                ("secretRef", {"name": "gangsched-secrets"}),
            ], f"{name}/{c['name']}"


def test_the_lease_namespace_and_identity_come_from_the_downward_api():
    watcher = container(deployments()["gangsched-watcher"], "watcher")
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in watcher["env"] if "valueFrom" in e}
    assert env["GANGSCHED_KUBE_NAMESPACE"] == "metadata.namespace"
    assert env["GANGSCHED_LEADER_ID"] == "metadata.name"
    assert "KUBECONFIG" not in variables_set()  # in the cluster the service account is used


# ---------------------------------------------------------------- processes


def test_each_process_runs_its_command_from_the_gangsched_image():
    found = deployments()
    assert set(found) == set(PROCESSES)
    for name, (container_name, command) in PROCESSES.items():
        c = container(found[name], container_name)
        assert c["command"][: len(command)] == command, name
        for each in containers(found[name]):
            assert each["image"] == IMAGE, f"{name}/{each['name']} runs {each['image']}"
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert [image["name"] for image in kustomization["images"]] == [IMAGE]


def test_the_web_server_believes_forwarded_headers_from_the_trusted_proxies_only():
    """Through gangsched/web_server.py, as `make run`: plain uvicorn would believe any client's
    X-Forwarded-For on 127.0.0.1, where `kubectl port-forward` connects from."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    (cmd,) = [json.loads(line[len("CMD ") :]) for line in dockerfile.splitlines() if line.startswith("CMD ")]
    command = container(deployments()["gangsched-web"], "web")["command"]
    for line in (cmd, command):
        assert line[:4] == ["python", "-m", "gangsched.web_server", "gangsched.asgi:application"]
        assert not {"--proxy-headers", "--forwarded-allow-ips"} & {arg.partition("=")[0] for arg in line}


def test_the_web_pod_migrates_the_database_first():
    (init,) = deployments()["gangsched-web"]["spec"]["template"]["spec"]["initContainers"]
    assert init["command"][:3] == ["python", "manage.py", "migrate"]


def test_beat_runs_exactly_once():
    beat = deployments()["gangsched-beat"]["spec"]
    assert beat["replicas"] == 1
    assert beat["strategy"]["type"] == "Recreate"  # never two during a rollout either
    # The schedule file must be on the writable emptyDir, not the read-only image.
    command = container(deployments()["gangsched-beat"], "beat")["command"]
    schedule = command[command.index("--schedule") + 1]
    mounts = [m["mountPath"] for m in container(deployments()["gangsched-beat"], "beat")["volumeMounts"]]
    assert any(schedule.startswith(mount + "/") for mount in mounts)


def test_the_web_probes_use_healthz_with_an_allowed_host_and_the_service_reaches_uvicorn():
    web = deployments()["gangsched-web"]
    uvicorn = container(web, "web")
    probe = uvicorn["readinessProbe"]["httpGet"]
    assert probe["path"] == "/healthz"
    allowed = only(installed(), "ConfigMap")["data"]["ALLOWED_HOSTS"].split(",")
    hosts = [h["value"] for h in probe["httpHeaders"] if h["name"] == "Host"]
    assert hosts and hosts[0] in allowed, "Django would answer the probe 400 (DisallowedHost)"
    ports = {p["name"]: p["containerPort"] for p in uvicorn["ports"]}
    assert ports[probe["port"]] == 8000 == int(uvicorn["command"][uvicorn["command"].index("--port") + 1])
    # The same server as `make run`: uvicorn's workers from WEB_CONCURRENCY, as scripts/run.py runs it.
    env = {e["name"]: e.get("value") for e in uvicorn["env"]}
    assert int(env["WEB_CONCURRENCY"]) >= 2
    for flag in ("--lifespan", "--no-access-log", "--timeout-graceful-shutdown"):
        assert flag in uvicorn["command"]
    # The lifespan startup names the database sessions, which the read cache relies on.
    assert uvicorn["command"][uvicorn["command"].index("--lifespan") + 1] == "on"

    service = only(installed(), "Service", "gangsched")
    (port,) = service["spec"]["ports"]
    assert port["port"] == 80 and ports[port["targetPort"]] == 8000
    selector = service["spec"]["selector"].items()
    for name, deployment in deployments().items():
        labels = deployment["spec"]["template"]["metadata"]["labels"].items()
        assert (selector <= labels) == (name == "gangsched-web"), name


# ---------------------------------------------------------------- RBAC


def grants(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def rbac() -> list[dict[str, Any]]:
    return documents(DEPLOY / "rbac.yaml")


def test_every_deployment_runs_as_the_service_account_that_is_bound():
    account = only(rbac(), "ServiceAccount")
    assert account["metadata"] == {**account["metadata"], "name": "gangsched", "namespace": NAMESPACE}
    subject = {"kind": "ServiceAccount", "name": "gangsched", "namespace": NAMESPACE}
    for name, deployment in deployments().items():
        spec = deployment["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] == "gangsched", name
        assert deployment["metadata"]["namespace"] == NAMESPACE
    for binding_kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = only(rbac(), binding_kind)
        assert subject in binding["subjects"]
        role = only(rbac(), role_kind, binding["roleRef"]["name"])
        assert binding["roleRef"]["kind"] == role_kind
        assert role["metadata"].get("namespace") == binding["metadata"].get("namespace")


def test_the_cluster_role_grants_what_a_scheduler_does_and_no_more():
    rules = only(rbac(), "ClusterRole")["rules"]
    for group, resource, verb in [
        ("", "nodes", "watch"),
        ("", "pods", "watch"),
        ("", "pods", "create"),  # placeholder pods
        ("", "pods", "delete"),
        ("", "pods", "patch"),
        ("", "pods/binding", "create"),
        ("", "events", "create"),
        ("events.k8s.io", "events", "create"),
        ("scheduling.x-k8s.io", "podgroups", "watch"),
        ("scheduling.x-k8s.io", "podgroups/status", "patch"),
        ("scheduling.volcano.sh", "podgroups", "watch"),
        ("batch.volcano.sh", "jobs", "watch"),
        ("scheduling.run.ai", "podgroups", "watch"),
        ("scheduling.k8s.io", "workloads", "watch"),
        ("scheduling.k8s.io", "podgroups/status", "patch"),
        ("scheduling.k8s.io", "priorityclasses", "list"),
        ("", "namespaces", "list"),
    ]:
        assert grants(rules, group, resource, verb), f"missing {verb} {resource}.{group}"
    for group, resource, verb in [
        ("", "pods/status", "patch"),  # the kubelet's
        ("", "nodes", "patch"),
        ("", "secrets", "get"),
        ("scheduling.x-k8s.io", "podgroups", "update"),  # the spec is the user's
        ("scheduling.run.ai", "podgroups/status", "patch"),  # KAI writes its own
        ("coordination.k8s.io", "leases", "create"),  # only in its own namespace (the Role)
    ]:
        assert not grants(rules, group, resource, verb), f"grants {verb} {resource}.{group}"
    assert not any("*" in r["apiGroups"] + r["resources"] + r["verbs"] for r in rules)


def test_the_lease_is_granted_in_gangsched_namespace_only():
    role = only(rbac(), "Role")
    assert role["metadata"]["namespace"] == NAMESPACE
    for verb in ("get", "create", "update", "patch"):
        assert grants(role["rules"], "coordination.k8s.io", "leases", verb)
    assert [r["resources"] for r in role["rules"]] == [["leases"]]


# ---------------------------------------------------------------- the example gang


def test_the_example_gang_is_a_podgroup_of_three_pods_for_gangsched():
    docs = documents(DEPLOY / "examples" / "podgroup-gang.yaml")
    group = only(docs, "PodGroup")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1" and group["spec"]["minMember"] == 3
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert len(pods) == 3
    for pod in pods:
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == group["metadata"]["name"]
        assert pod["metadata"]["namespace"] == group["metadata"]["namespace"]
        assert pod["spec"]["schedulerName"] == "gangsched"
        (c,) = pod["spec"]["containers"]
        assert c["image"].startswith("registry.k8s.io/pause:") and c["resources"]["requests"]


@pytest.mark.django_db
def test_gangsched_reads_the_example_as_one_gang_of_three(monkeypatch):
    from scheduler_core.declarations.apply import manifests_apply
    from scheduler_core.declarations.documents import documents_parse
    from scheduler_core.models import Gang

    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)  # no Celery worker here
    manifests_apply(documents_parse((DEPLOY / "examples" / "podgroup-gang.yaml").read_text()))
    gang = Gang.objects.get(name="gang-demo")
    assert (gang.min_member, gang.members.count(), gang.provisional) == (3, 3, False)


# ---------------------------------------------------------------- kubectl


def kubectl_path() -> str:
    path = os.environ.get("GANGSCHED_KUBECTL") or shutil.which("kubectl")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl is not installed (.ci/run installs Debian's kubernetes-client)")
        pytest.skip("kubectl is not installed")
    return path


def discovery() -> dict[str, list[tuple[str, str, bool]]]:
    """group/version -> (resource, kind, namespaced), as a Kubernetes >= 1.24 API server lists them
    for the kinds these manifests use, plus the PodGroup once the shipped CRD is installed."""
    served = {
        "v1": [
            ("namespaces", "Namespace", False),
            ("serviceaccounts", "ServiceAccount", True),
            ("configmaps", "ConfigMap", True),
            ("secrets", "Secret", True),
            ("services", "Service", True),
            ("pods", "Pod", True),
        ],
        "apps/v1": [("deployments", "Deployment", True)],
        "batch/v1": [("jobs", "Job", True)],
        "rbac.authorization.k8s.io/v1": [
            ("clusterroles", "ClusterRole", False),
            ("clusterrolebindings", "ClusterRoleBinding", False),
            ("roles", "Role", True),
            ("rolebindings", "RoleBinding", True),
        ],
        "apiextensions.k8s.io/v1": [("customresourcedefinitions", "CustomResourceDefinition", False)],
        "networking.k8s.io/v1": [("ingresses", "Ingress", True)],
        "coordination.k8s.io/v1": [("leases", "Lease", True)],
        "scheduling.k8s.io/v1": [("priorityclasses", "PriorityClass", False)],
    }
    crd = only(documents(CRD), "CustomResourceDefinition")["spec"]
    for version in crd["versions"]:
        if version["served"]:
            resource = (crd["names"]["plural"], crd["names"]["kind"], crd["scope"] == "Namespaced")
            served.setdefault(f"{crd['group']}/{version['name']}", []).append(resource)
    return served


def _discovery_handler(served: dict[str, list[tuple[str, str, bool]]]):
    groups: dict[str, list[str]] = {}
    for gv in served:
        if "/" in gv:
            groups.setdefault(gv.split("/")[0], []).append(gv)

    def group(name: str, versions: list[str]) -> dict[str, Any]:
        listed = [{"groupVersion": gv, "version": gv.split("/")[1]} for gv in versions]
        return {"name": name, "versions": listed, "preferredVersion": listed[0]}

    def resources(gv: str) -> dict[str, Any]:
        verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
        listed = [
            {"name": n, "singularName": "", "namespaced": ns, "kind": k, "verbs": verbs}
            for n, k, ns in served[gv]
        ]
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": listed}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 (BaseHTTPRequestHandler's name)
            path = self.path.split("?")[0]
            if path == "/api":
                return self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
            if path == "/apis":
                listed = [group(name, versions) for name, versions in groups.items()]
                return self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": listed})
            gv = path.removeprefix("/api/").removeprefix("/apis/")
            if gv in served:
                return self._send(200, resources(gv))
            # Every object (and /version, /openapi) is absent: apply takes the create path.
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound"}
            return self._send(404, {**status, "code": 404, "message": f"{path} not found"})

    return Handler


@pytest.fixture(scope="module")
def api_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _discovery_handler(discovery()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def kubectl(api_server, tmp_path):
    """Runs kubectl against ``api_server`` with a throwaway kubeconfig, home and cache."""
    binary = kubectl_path()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "offline", "cluster": {"server": api_server}}],
        "users": [{"name": "offline", "user": {"token": "offline"}}],
        "contexts": [{"name": "offline", "context": {"cluster": "offline", "user": "offline"}}],
        "current-context": "offline",
    }
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)}

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [binary, f"--cache-dir={tmp_path / 'cache'}", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)

    return run


def dry_run(kubectl, *args: str) -> str:
    result = kubectl("apply", "--dry-run=client", "--validate=false", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize(
    "path",
    [p for p in FILES if p.name != "kustomization.yaml"],  # applied with -k (the next test)
    ids=lambda p: str(p.relative_to(DEPLOY)),
)
def test_kubectl_accepts_each_manifest(kubectl, path):
    out = dry_run(kubectl, "-f", str(path))
    for doc in documents(path):
        assert re.search(rf"/{re.escape(doc['metadata']['name'])} created \(dry run\)", out), out


def test_kubectl_applies_the_kustomization(kubectl):
    out = dry_run(kubectl, "-k", str(DEPLOY))
    assert out.count("created (dry run)") == len(installed()), out
    built = kubectl("kustomize", str(DEPLOY))
    assert built.returncode == 0, built.stderr
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    expected = f"{image['newName']}:{image['newTag']}"
    objects = [doc for doc in yaml.safe_load_all(built.stdout) if doc]
    used = {c["image"] for o in objects if o["kind"] == "Deployment" for c in containers(o)}
    assert used == {expected}


def test_kubectl_here_refuses_an_api_a_cluster_no_longer_serves(kubectl, tmp_path):
    """The dry run is not vacuous: the RBAC v1beta1 API (removed in Kubernetes 1.22) is refused."""
    old = yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text())
    role = next(doc for doc in old if doc["kind"] == "ClusterRole")
    role["apiVersion"] = "rbac.authorization.k8s.io/v1beta1"
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(role))
    result = kubectl("apply", "--dry-run=client", "--validate=false", "-f", str(path))
    assert result.returncode != 0 and "ClusterRole" in result.stderr, result.stderr


# ---------------------------------------------------------------- the docs


def test_the_real_cluster_page_names_what_the_manifests_create():
    section = (ROOT / "docs" / "real-cluster.md").read_text()
    for name in re.findall(r"deploy/(gangsched-[a-z]+)", section):
        assert name in deployments(), f"docs/real-cluster.md names a Deployment {name} the manifests lack"
    assert set(deployments()) <= set(re.findall(r"`(gangsched-[a-z]+)`", section))
    assert "svc/gangsched " in section and only(installed(), "Service", "gangsched")
    assert "create secret generic gangsched-secrets" in section
    for path in re.findall(r"(deploy/kubernetes/[\w./-]+\.yaml)", section):
        assert (ROOT / path).is_file(), path
    assert "kubectl apply -k deploy/kubernetes" in section
    assert "get lease" in section and "gangsched.io/placeholder=true" in section
