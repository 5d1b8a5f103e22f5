"""A cheap test that a unit cannot fit, for preemption's searches (``preempt.py``).

Preemption asks "would the unit fit with these victims gone?" dozens of times per preemptor,
and each answer is a whole trial placement. Most answers can be had from counting alone: a gang
fits only if, shape by shape, the nodes could take at least its minimum of copies,
each shape counted on its own, as if no other shape wanted the same room. That count can only
overstate what placement achieves (shapes compete, topology and exclusive domains narrow it
further), so when the count falls short the unit certainly does not fit, and no trial is needed.

``Bound.shortest`` gives, for a list of victims, the fewest taken in order whose freed room lets
the count reach the minimum: no prefix shorter than that can fit, so the search for the
shortest prefix that does fit starts there. ``Bound.losses`` and ``Bound.holds`` answer, for
each victim, whether the count still holds with it given back, kept current as victims are
given back one by one.

For the commonest unit, the count is not a bound but the answer (``Bound.exact``): one gang (or
a lone pod) whose waiting members are all one shape, with no topology constraint and no
``minResources``, placed on the nodes alone (no queue headroom). Placement then takes
``min(members, copies the nodes can take)`` of them, whatever nodes it picks, so the unit fits
exactly when the count reaches its need; the searches trust the count and try nothing.
"""

from __future__ import annotations

import numpy as np

from ..gang import fits, unit_gangs
from ..placement import fit_counts
from ..queue import Unit
from ..session import Session, shapes
from ..topology_index import plan_of

#: Victims counted first by ``Bound.shortest``; the window grows 4 times at each step.
FIRST_WINDOW = 64


class Bound:
    """For one unit: its pod shapes (request, node mask, copies wanted) and each gang's need."""

    def __init__(self, session: Session, unit: Unit) -> None:
        self.state = session.state
        self.requests: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.copies: list[int] = []
        self.needs: list[tuple[list[int], int]] = []  # (shape indices, members needed) per gang
        self.totals = np.zeros(0, np.int64)
        simple = session.vanished is None and not (session.admission and session.queues is not None)
        if not unit.is_gang:
            self._add(session, unit.pods, 1)
            pod = unit.pods[0]
            simple &= plan_of(session, session.gangs.get(pod.gang) if pod.gang is not None else None) is None
        unsettled = [gang for gang in unit_gangs(session, unit) if not gang.settled] if unit.is_gang else []
        for gang in unsettled:
            running = len(session.running(gang.key)) if gang.counts_running else 0
            need = gang.min_member - running - len(session.held(gang.key))
            simple &= need > 0 and not gang.min_resources and plan_of(session, gang) is None
            if need > 0:
                self._add(session, session.waiting(gang.key), need)
        self.totals = np.zeros(len(self.requests), np.int64)
        self.exact = bool(simple and len(self.requests) == 1 and len(self.needs) == 1 and len(unsettled) <= 1)

    def _add(self, session: Session, pods: list, need: int) -> None:
        first = len(self.requests)
        for request, members in shapes(session, pods):
            self.requests.append(request)
            self.masks.append(session.filter.mask(members[0]))
            self.copies.append(len(members))
        self.needs.append((list(range(first, len(self.requests))), need))

    def _holds(self, totals: np.ndarray) -> np.ndarray:
        """Whether every gang's need is within the counted copies (``totals``: shapes x k)."""
        ok = np.ones(totals.shape[1:], bool)
        for indices, need in self.needs:
            capped = np.minimum(totals[indices], np.array(self.copies, np.int64)[indices][:, None])
            ok &= capped.sum(axis=0) >= need
        return ok

    def shortest(self, victims: list) -> int | None:
        """The fewest of ``victims``, taken in order, with which the count reaches every need
        (``None``: not even with all of them); the state is not changed. The answer is mostly a
        few dozen victims of a thousand: counted on a window that grows until it holds one."""
        if not self.needs:
            return 1
        window = FIRST_WINDOW
        while True:
            found = self._shortest(victims[:window])
            if found is not None or window >= len(victims):
                return found
            window *= 4

    def _shortest(self, victims: list) -> int | None:
        state = self.state
        nodes = np.concatenate([victim.nodes for victim in victims])
        rows = np.concatenate([victim.rows for victim in victims])
        owner = np.repeat(np.arange(len(victims)), [len(victim.nodes) for victim in victims])
        # Each pod's node's free room once it and the pods before it on that node are gone.
        order = np.argsort(nodes, kind="stable")
        nodes, rows, owner = nodes[order], rows[order], owner[order]
        first = np.ones(len(nodes), bool)
        first[1:] = nodes[1:] != nodes[:-1]
        running = np.cumsum(rows, axis=0)
        starts = np.flatnonzero(first)
        group = np.cumsum(first) - 1
        freed = running - (running[starts] - rows[starts])[group]
        free = state.free_all()  # read only; kept current as placements change it
        before_all = free[nodes]
        after = before_all + freed
        totals = np.empty((len(self.requests), len(victims) + 1), np.int64)
        for s, (request, mask) in enumerate(zip(self.requests, self.masks, strict=True)):
            now = fit_counts(free, request, mask)
            counted = fit_counts(after, request)
            previous = np.where(first, now[nodes], np.roll(counted, 1))
            gained = np.where(mask[nodes], counted - previous, 0)
            per_victim = np.bincount(owner, weights=gained, minlength=len(victims)).astype(np.int64)
            totals[s, 0] = int(now.sum())
            totals[s, 1:] = totals[s, 0] + np.cumsum(per_victim)
        ok = self._holds(totals)
        found = np.flatnonzero(ok[1:])
        return int(found[0]) + 1 if found.size else None

    def count(self) -> None:
        """Count the copies on the state as it is (before ``holds``)."""
        free = self.state.free_all()
        for s, (request, mask) in enumerate(zip(self.requests, self.masks, strict=True)):
            self.totals[s] = int(fit_counts(free, request, mask).sum())

    def losses(self, victims: list) -> np.ndarray:
        """Shapes x victims: the copies each of ``victims`` (each gone from the state now) takes
        from the count if it alone is put back."""
        lost = np.zeros((len(self.requests), len(victims)), np.int64)
        if not self.needs or not victims:
            return lost
        state = self.state
        nodes = np.concatenate([victim.nodes for victim in victims])
        rows = np.concatenate([victim.rows for victim in victims])
        owner = np.repeat(np.arange(len(victims)), [len(victim.nodes) for victim in victims])
        # One entry per (victim, node): what putting the victim back takes from that node.
        pairs, inverse = np.unique(owner * len(state.alloc) + nodes, return_inverse=True)
        taken = np.zeros((len(pairs), rows.shape[1]), np.int64)
        np.add.at(taken, inverse, rows)
        where, who = pairs % len(state.alloc), pairs // len(state.alloc)
        free = state.free_at(where)
        for s, (request, mask) in enumerate(zip(self.requests, self.masks, strict=True)):
            drop = np.where(mask[where], fit_counts(free, request) - fit_counts(free - taken, request), 0)
            lost[s] = np.bincount(who, weights=drop, minlength=len(victims)).astype(np.int64)
        return lost

    def holds(self, lost: np.ndarray | None = None) -> np.ndarray | bool:
        """Whether the count reaches every need on the state as counted, or, given ``lost``
        (``losses``), with each of those victims alone put back."""
        if not self.needs:
            return True if lost is None else np.ones(lost.shape[1], bool)
        if lost is None:  # a few shapes: plain integers cost less than arrays here
            totals = self.totals.tolist()
            return all(
                sum(min(totals[i], self.copies[i]) for i in indices) >= need for indices, need in self.needs
            )
        return self._holds(self.totals[:, None] - lost)


def fits_counted(session: Session, unit: Unit, bound: Bound | None = None) -> bool:
    """``gang.fits`` (would ``unit`` bind now, on the nodes alone?), answered by the count when
    the count settles it: short of a need, it cannot fit; ``exact``, it fits. Only the rest is
    a trial placement. The caller rules out units with a failed precondition (a missing group
    member, too few pods), which the count does not see. ``bound``: the unit's, if the caller
    has it (its shapes and needs; the count is taken here, on the state as it is)."""
    bound = bound if bound is not None else Bound(session, unit)
    bound.count()
    if not bound.holds():
        return False
    return bound.exact or fits(session, unit)
