"""The victims reclaim may choose from, kept once a cycle for every queue.

With 100 queues, a cycle may have twenty units reclaiming, each from most of the queues; building
their victims for each, or filtering a list of thousands victim by victim in Python, cost a
quarter of a cycle. So the victims of the queues reclaim may take from are built once a cycle
(``_collect``, in the order taken), and each reclaim reads its pool through arrays: the queue
each victim is charged to, and which are gone (evicted earlier in the cycle, found from the pod
keys evicted since the last read). A queue not covered yet is built and merged in, once.
"""

from __future__ import annotations

import numpy as np

from ..session import Session
from .victims import Victim, _collect, mark_gone


class VictimIndex:
    """Victims of the covered queues in the order taken, with per-victim arrays to select them."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.covered: set[int] = set()
        self.victims: list[Victim] = []
        self.keys: list[tuple] = []  # Victim.order() of each victim, for merging
        self.charged = np.zeros(0, np.int64)  # queue each victim is charged to
        self.dead = np.zeros(0, bool)  # taken in this cycle
        self.first_pod: dict[str, int] = {}  # a victim's first pod (it is taken whole) -> index
        self.owned: dict[str, list[int]] = {}  # gang -> victims it owns (a unit never takes its own)
        self.seen_evicted: set[str] = set()

    def pool(
        self,
        session: Session,
        queues: set[int],
        own: tuple[str, ...] = (),
        cover: frozenset[int] = frozenset(),
    ) -> list[Victim]:
        """The victims charged to ``queues`` not taken yet and not owned by ``own``, in order;
        built for ``cover`` too if not yet (the queues later calls of the cycle may ask for)."""
        self._cover(session, set(queues) | cover)
        self._mark_gone(session)
        mask = np.isin(self.charged, list(queues)) & ~self.dead
        for gang in own:
            mask[self.owned.get(gang, [])] = False
        victims = self.victims
        return [victims[i] for i in np.flatnonzero(mask)]

    def _cover(self, session: Session, queues: set[int]) -> None:
        missing = set(queues) - self.covered
        if not missing:
            return
        ledger = session.queues
        found = _collect(session, 1 << 62, ledger.pods_of(missing))
        held = {gang for victim in self.victims for gang in victim.gangs}
        if any(gang in held for victim in found for gang in victim.gangs):
            # A gang group across the two sets of queues: built again whole, as one victim.
            missing |= self.covered
            self._reset()
            found = _collect(session, 1 << 62, ledger.pods_of(missing))
        self.covered |= missing
        merged = self.victims + found
        keys = self.keys + [victim.order() for victim in found]
        charged = np.concatenate(
            [self.charged, np.fromiter((ledger.queue_of(v.pods[0]) for v in found), np.int64, len(found))]
        )
        order = sorted(range(len(merged)), key=keys.__getitem__, reverse=True)
        self.victims = [merged[i] for i in order]
        self.keys = [keys[i] for i in order]
        self.charged = charged[np.array(order, dtype=np.int64)]
        self.dead = np.zeros(len(order), bool)
        self.first_pod = {victim.pods[0].key: i for i, victim in enumerate(self.victims)}
        self.owned = {}
        for i, victim in enumerate(self.victims):
            self.dead[i] = victim.evicted
            for gang in victim.owners:
                self.owned.setdefault(gang, []).append(i)
        self.seen_evicted = set()

    def _mark_gone(self, session: Session) -> None:
        mark_gone(session, self.seen_evicted, self.first_pod, self.dead)


def of_queues(
    session: Session, queues: set[int], own: tuple[str, ...] = (), cover: frozenset[int] = frozenset()
) -> list[Victim]:
    """With queues: the victims of every priority charged to ``queues`` that are not gone and
    not owned by ``own``, in the order taken, for reclaim (``VictimIndex``)."""
    ledger = session.queues
    if ledger.victim_index is None:
        ledger.victim_index = VictimIndex()
    return ledger.victim_index.pool(session, queues, own, cover)
