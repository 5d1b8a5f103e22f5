"""The deadlines of workloads whose whole run has one (``deadlines.py`` says which), given to
the pods they make."""

from __future__ import annotations

from typing import Any

from . import kubeflow, mpijob
from . import validate as v
from .deadlines import KEY, seconds, tighten
from .documents import Manifest
from .spec import Loaded

#: (apiVersion, kind) -> the path of the workload's deadline.
WORKLOAD_DEADLINES: dict[tuple[str, str], tuple[str, ...]] = {
    ("batch/v1", "Job"): ("spec", KEY),
    **{(kubeflow.API_VERSION, kind): ("spec", "runPolicy", KEY) for kind in kubeflow.KINDS},
    (mpijob.API_VERSION, "MPIJob"): ("spec", "runPolicy", KEY),
}


def workload_deadline_apply(manifest: Manifest, loaded: Loaded) -> None:
    path = WORKLOAD_DEADLINES.get((manifest.api_version, manifest.kind))
    if path is None:
        return
    node: Any = manifest.obj
    for key in path:
        if not isinstance(node, dict):
            return
        node = node.get(key)
    deadline = seconds(node, v.join(manifest.path, *path))
    for pod in loaded.pods:
        tighten(pod, deadline)
