"""Failing a lone pod behind the head without a trial, when one tried before it proves it fails.

Behind the head of the queue a lone pod (of no gang, or an extra member of a settled gang)
places on one node whose free room, capped by the head's spare capacity when it is limited to
it, holds its request; on a busy cluster most such pods fail, each after a pass over the nodes.
Once the head is set, a cycle's room only shrinks: the units behind it bind or backfill, none
preempts, reclaims or releases, and the head's spare capacity is only consumed. So a lone pod
that failed proves that every later one with the same filters (the same nodes), tried on the
same capacity (the free room, or the head's spare), whose request is at least as large in every
resource, fails too.

A lone pod's failed attempt places nothing and carries nothing of its own (no shortfall, no
count), so the failure returned is the attempt's: what follows it (the explanation, parking)
is the same. Not used for a pod whose gang has a topology constraint (it is placed within a
domain of its gang's) or with queues (a queue's headroom cuts a trial, and it differs per queue).
"""

from __future__ import annotations

import numpy as np

from ..filters import constraint_key
from ..gang import Attempt
from ..queue import Unit
from ..session import Session, Trial
from ..topology_index import plan_of


class LoneFailures:
    """The requests of the lone pods that failed behind this cycle's head, per filters and
    capacity; only those no earlier failure already covered (the smallest seen)."""

    def __init__(self) -> None:
        self._failed: dict[tuple, list[np.ndarray]] = {}
        self._stacked: dict[tuple, np.ndarray] = {}

    def settled(self, session: Session, unit: Unit, limit: np.ndarray | None) -> Attempt | None:
        """``unit``'s failed attempt within ``limit`` when an earlier failure proves it; None:
        a trial decides."""
        key = _key(session, unit, limit)
        if key is None or key not in self._failed:
            return None
        stacked = self._stacked.get(key)
        if stacked is None:
            stacked = self._stacked[key] = np.stack(self._failed[key])
        request = session.state.vector(unit.pods[0])
        if not bool((request >= stacked).all(axis=1).any()):
            return None
        return Attempt(Trial(session.state, limit), satisfied=False)

    def failed(self, session: Session, unit: Unit, limit: np.ndarray | None) -> None:
        """``unit`` failed a trial behind the head within ``limit``: remember its request (one
        that ``settled`` failed is covered already)."""
        key = _key(session, unit, limit)
        if key is None:
            return
        self._failed.setdefault(key, []).append(session.state.vector(unit.pods[0]))
        self._stacked.pop(key, None)


def _key(session: Session, unit: Unit, limit: np.ndarray | None) -> tuple | None:
    """(filters, limited?) of a lone pod this applies to; None: a gang, a pod placed within its
    gang's topology domain, or queues."""
    if unit.is_gang or session.queues is not None:
        return None
    pod = unit.pods[0]
    gang = session.gangs.get(pod.gang) if pod.gang is not None else None
    if plan_of(session, gang) is not None:
        return None
    return constraint_key(pod), limit is None
