"""What the scheduler needs from a cluster, and nothing more.

The scheduling loop decides from the database (``scheduler_core/snapshot/build.py``) and acts through
a backend: the simulated cluster (the database *is* its cluster) or a real Kubernetes cluster
(the database mirrors it through watches). A backend only translates; it never decides.

Every call is idempotent, because the loop retries after crashes from the bind journal:
binding a pod already bound to the same node succeeds, deleting a pod already gone succeeds.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class BindOutcome(str, enum.Enum):
    BOUND = "bound"  # bound now, or already bound to this very node
    CONFLICT = "conflict"  # already bound elsewhere (409): someone else placed it
    GONE = "gone"  # the pod no longer exists (404)
    FAILED = "failed"  # the node refused it or the call failed; may be retried


@dataclass(frozen=True)
class BindRequest:
    namespace: str
    name: str
    node: str


@dataclass(frozen=True)
class BindResult:
    request: BindRequest
    outcome: BindOutcome
    error: str = ""


class ClusterBackend(Protocol):
    """The cluster gangsched schedules, as the loop and the services see it."""

    name: str

    def sync(self) -> bool:
        """Bring the database in step with the cluster; True once it has been fully read.

        Nothing is scheduled until this has returned True once after a start (like
        kube-scheduler waiting for its informers' caches), so capacity is never counted from
        a half-read cluster.
        """

    def bind(self, requests: Sequence[BindRequest]) -> list[BindResult]:
        """Bind pods to nodes; one result per request, in order."""

    def delete_pod(self, namespace: str, name: str, reason: str) -> bool:
        """Delete (evict, kill) a pod; False when it was already gone."""

    def annotate_pod(self, namespace: str, name: str, annotations: dict[str, str]) -> None:
        """Merge annotations into a pod (e.g. Koordinator's timeout mark)."""

    def hold(self, requests: Sequence[BindRequest]) -> None:
        """Make reservations visible to the cluster's other schedulers (placeholder pods).

        The simulated cluster has no other scheduler: its reservations live in the database.
        """

    def unhold(self, requests: Sequence[BindRequest]) -> None:
        """Remove the placeholders of reservations that were released or turned into binds."""
