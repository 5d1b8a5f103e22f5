"""Failing a unit behind the head by counting, without a trial, on a small cluster.

Behind the head of the queue most units fail: the room the head leaves is short. For the
commonest unit (``fit_bound.Bound.exact``: one gang of one shape of member, no topology, no
``minResources``, no queue headroom) a trial places exactly ``min(members, copies the nodes
can take)``, so counting the copies on the capacity the trial would use says whether it fails
and how many members it would have placed, with nothing placed and undone. The failure is the
trial's: the same members placed (for the wait clock), and the same explanation, worked out on
the same capacity when somebody reads it (``gang.Deferred``).

Only below ``state.NARROW_FROM`` nodes: there the count, a pass over every node, costs less
than a trial; on a larger cluster a trial looks at the few nodes that can matter
(``ClusterState.candidates``) and is the cheaper of the two.
"""

from __future__ import annotations

import numpy as np

from ..gang import Attempt, Deferred, precondition, unit_gangs
from ..placement import fit_and_limit
from ..queue import Unit
from ..session import Session, Trial
from ..state import NARROW_FROM
from .fit_bound import Bound


def counted_failure(session: Session, unit: Unit, limit: np.ndarray | None) -> Attempt | None:
    """The failed attempt of ``unit`` within ``limit`` when counting settles it; None: it may
    fit, or the count is not the answer for it (``attempt`` decides)."""
    if not unit.is_gang or len(session.state.alloc) >= NARROW_FROM:
        return None
    if precondition(session, unit) is not None:
        return None
    bound = Bound(session, unit)
    if not bound.exact:
        return None
    trial = Trial(session.state, limit)
    available = trial.available()
    counted = fit_and_limit(available, bound.requests[0], bound.masks[0])
    copies = min(int(counted[0].sum()), bound.copies[0])
    need = bound.needs[0][1]
    if copies >= need:
        return None
    gang = next(gang for gang in unit_gangs(session, unit) if not gang.settled)
    shortfall = Deferred(session, gang, need, session.waiting(gang.key), available, counted)
    return Attempt(
        trial, satisfied=False, shortfalls={gang.key: shortfall}, placed={gang.key: copies}, bound=bound
    )
