"""``activeDeadlineSeconds``: the longest a pod may run, where each format declares it.

A pod's own ``spec.activeDeadlineSeconds`` (any pod template) is read with the pod
(``workloads.pod_spec``); a JobSet's child Job templates by ``jobset.py``. The workloads whose
whole run has a deadline are read by ``workload_deadlines.py``, once their pods are made: a ``batch/v1`` Job
(``spec.activeDeadlineSeconds``), Kubeflow's training jobs and MPIJob
(``spec.runPolicy.activeDeadlineSeconds``). A pod under both keeps the smaller. The gang's runtime
estimate takes its pods' smallest as its limit (``services/runtimes.py``).
"""

from __future__ import annotations

from typing import Any

from . import validate as v
from .spec import PodSpec

KEY = "activeDeadlineSeconds"
INT64_MAX = 2**63 - 1


def seconds(value: Any, field: str) -> float | None:
    """A deadline in whole seconds (0 and up, as the Kubeflow checks accept); None when not given."""
    if value is None:
        return None
    return float(v.integer(value, field, minimum=0, maximum=INT64_MAX))


def pod_deadline(spec: dict[str, Any], spec_field: str) -> float | None:
    return seconds(spec.get(KEY), v.join(spec_field, KEY))


def tighten(pod: PodSpec, deadline: float | None) -> None:
    """Give ``pod`` the workload's ``deadline`` unless its own is shorter."""
    if deadline is not None and (pod.deadline_seconds is None or deadline < pod.deadline_seconds):
        pod.deadline_seconds = deadline
