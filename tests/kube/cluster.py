"""Building blocks for the Kubernetes backend's tests: objects as a user would apply them, a
watcher wired to the emulator, and waiting for the mirror to catch up."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from scheduler_core.cluster.kube.backend import KubernetesCluster
from scheduler_core.cluster.kube.client import RateLimiter
from scheduler_core.cluster.kube.watcher import Watcher

PODGROUPS = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")


def node(name: str, *, cpu: str = "4", memory: str = "16Gi", gpu: int = 0, ready: bool = True) -> dict:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpu:
        allocatable["nvidia.com/gpu"] = str(gpu)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "allocatable": allocatable,
            "capacity": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def podgroup(name: str, min_member: int, *, namespace: str = "default", timeout: int | None = None) -> dict:
    spec: dict = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def pod(
    name: str,
    *,
    group: str | None = None,
    cpu: str = "1",
    scheduler: str = "gangsched",
    node: str | None = None,
    phase: str = "Pending",
    namespace: str = "default",
) -> dict:
    labels = {"scheduling.x-k8s.io/pod-group": group} if group else {}
    spec: dict = {
        "schedulerName": scheduler,
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
        "status": {"phase": phase},
    }


def bound_nodes(kube_api, names, namespace: str = "default") -> dict[str, str | None]:
    """Each named pod's ``spec.nodeName`` in the emulated cluster (None: unbound)."""
    pods = {p["metadata"]["name"]: p for p in kube_api.objects("v1/pods", namespace)}
    return {name: (pods[name].get("spec") or {}).get("nodeName") for name in names}


def wait_until(condition: Callable[[], object], *, timeout: float = 90.0, what: str = "condition") -> object:
    """Poll until ``condition()`` is truthy; fail the test (not time it) if it never is."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Harness:
    """A watcher (leading, synced) and a backend on one emulated cluster."""

    def __init__(
        self, kube_api, *, identity: str = "gangsched-a", duration_s: float = 15, renew_s: float = 1
    ):
        self.kube = kube_api
        self.api = kube_api.api_client()
        limiter = RateLimiter(1000, 1000)
        self.watcher = Watcher(
            self.api,
            identity_=identity,
            namespace="gangsched",
            limiter=limiter,
            duration_s=duration_s,
            renew_s=renew_s,
            watch_timeout_s=30,
        )
        self.backend = KubernetesCluster(self.api, limiter=limiter)
        self.watcher.backend = self.backend

    def start(self) -> Harness:
        wait_until(self.watcher.step, what="the watcher to lead and list everything")
        return self

    def cycle(self):
        """One scheduling cycle, as a worker runs it; the watcher renews first, as it would have
        every renew period meanwhile (its readiness flag expires otherwise)."""
        from scheduler_core.services.cycle import cycle_run

        assert self.watcher.step(), "the watcher no longer leads"
        return cycle_run(holder="test", backend=self.backend)

    def stop(self) -> None:
        self.watcher.halt()
        self.watcher.elector.release()

    def reflector(self, kind: str):
        return next(r for r in self.watcher.reflectors if r.kind == kind)


class Background:
    """Run the watcher's loop on a thread (status write-back, placeholders) until stopped."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop_event.is_set():
            self.harness.watcher.step()
            self.stop_event.wait(0.2)

    def __enter__(self) -> Background:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.thread.join(timeout=5)
