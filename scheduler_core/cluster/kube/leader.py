"""Leader election with a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection does.

Two gangsched deployments pointed at one cluster (a blue/green upgrade, a copy started by
mistake) each have their own database, so the PostgreSQL scheduler lease cannot keep them apart:
the Lease in the cluster does. Its holder renews it every ``renew_s``; another candidate takes
it over only when it has not been renewed for ``duration_s``. Every write carries the Lease's
resourceVersion, so of two candidates racing for an expired Lease the API server lets exactly
one win (the other gets 409 Conflict and stays a follower).

A leader that cannot renew for ``duration_s - renew_s`` (its API calls fail) stops leading
before anyone else may take over: it never believes it leads while another does.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from kubernetes import client
from kubernetes.client.rest import ApiException

logger = logging.getLogger(__name__)

LEASE_NAME = "gangsched-scheduler"


def _now() -> datetime:
    return datetime.now(UTC)


def _micro(moment: datetime) -> str:
    # Lease times are MicroTime: RFC 3339 with microseconds.
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(value) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class LeaseView:
    holder: str
    renewed: datetime | None
    duration_s: float
    transitions: int
    resource_version: str


class LeaderElector:
    """Acquire and renew one Lease; ``try_lead()`` once per renew period."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        namespace: str,
        identity: str,
        duration_s: float = 15.0,
        renew_s: float = 2.0,
        name: str = LEASE_NAME,
        clock=time.monotonic,
    ) -> None:
        self.coordination = client.CoordinationV1Api(api)
        self.namespace, self.identity, self.name = namespace, identity, name
        self.duration_s, self.renew_s = duration_s, renew_s
        self._clock = clock
        self._renewed_at: float | None = None  # our monotonic clock at our last successful renew

    @property
    def leading(self) -> bool:
        """True while our last renew is recent enough that nobody else can have taken over."""
        return (
            self._renewed_at is not None and self._clock() - self._renewed_at < self.duration_s - self.renew_s
        )

    def try_lead(self) -> bool:
        """Take or renew the Lease if we may; returns whether we lead now."""
        started = self._clock()
        try:
            view = self._read()
            if view is None:
                self._create()
            elif view.holder != self.identity and not self._expired(view):
                self._lost(f"held by {view.holder}")
                return False
            else:
                self._update(view)
        except ApiException as error:
            if error.status == 409:
                self._lost("another candidate won the race")
                return False
            logger.warning(
                "leader election: Lease %s/%s: %s %s", self.namespace, self.name, error.status, error.reason
            )
            return self.leading
        except Exception as error:  # a dropped connection must not kill the elector
            logger.warning("leader election: Lease %s/%s unreachable: %s", self.namespace, self.name, error)
            return self.leading
        if self._renewed_at is None:
            logger.info(
                "leader election: %s now leads (Lease %s/%s)", self.identity, self.namespace, self.name
            )
        self._renewed_at = started
        return True

    def release(self) -> None:
        """Give the Lease up on a clean shutdown, so a successor need not wait for it to expire."""
        if self._renewed_at is None:
            return
        self._renewed_at = None
        try:
            view = self._read()
            if view is not None and view.holder == self.identity:
                self.coordination.patch_namespaced_lease(
                    self.name,
                    self.namespace,
                    {
                        "metadata": {"resourceVersion": view.resource_version},
                        "spec": {"holderIdentity": None, "renewTime": None},
                    },
                )
        except Exception as error:
            logger.warning(
                "leader election: could not release Lease %s/%s: %s", self.namespace, self.name, error
            )

    # ------------------------------------------------------------ the API

    def _read(self) -> LeaseView | None:
        try:
            lease = self.coordination.read_namespaced_lease(self.name, self.namespace)
        except ApiException as error:
            if error.status == 404:
                return None
            raise
        spec = lease.spec
        return LeaseView(
            holder=(spec.holder_identity if spec else None) or "",
            renewed=_parse(spec.renew_time if spec else None),
            duration_s=float((spec.lease_duration_seconds if spec else None) or self.duration_s),
            transitions=int((spec.lease_transitions if spec else None) or 0),
            resource_version=lease.metadata.resource_version or "",
        )

    def _expired(self, view: LeaseView) -> bool:
        if not view.holder or view.renewed is None:
            return True
        return (_now() - view.renewed).total_seconds() > view.duration_s

    def _spec(self, *, acquired: bool, transitions: int) -> dict:
        now = _micro(_now())
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(round(self.duration_s)),
            "renewTime": now,
            "leaseTransitions": transitions,
        }
        if acquired:
            spec["acquireTime"] = now
        return spec

    def _create(self) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": self._spec(acquired=True, transitions=0),
        }
        self.coordination.create_namespaced_lease(self.namespace, body)

    def _update(self, view: LeaseView) -> None:
        taking_over = view.holder != self.identity
        transitions = view.transitions + 1 if taking_over else view.transitions
        if taking_over:
            logger.info("leader election: %s takes over the Lease from %r", self.identity, view.holder)
        self.coordination.patch_namespaced_lease(
            self.name,
            self.namespace,
            {
                # The precondition: if anyone wrote the Lease since we read it, this is a 409.
                "metadata": {"resourceVersion": view.resource_version},
                "spec": self._spec(acquired=taking_over, transitions=transitions),
            },
        )

    def _lost(self, why: str) -> None:
        if self._renewed_at is not None:
            logger.warning("leader election: %s lost the Lease: %s", self.identity, why)
        self._renewed_at = None
