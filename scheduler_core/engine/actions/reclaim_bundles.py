"""Victims taken together (``Bundle``) and the fewest of them that let a unit fit, for reclaim
and for preemption within a queue at its max (``reclaim.py``).

A bundle is an elastic member alone, or a whole gang with its elastic members not taken before
it, so a victim gang keeps >= min_member running or loses all of its members. The shortest
prefix of an ordered list of bundles that lets the unit fit is found by binary search
(``victims.fewest``); bundles the unit does not need are then given back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..gang import attempt, fits
from ..queue import Unit
from ..session import Session
from .victims import Victim, fewest


@dataclass(eq=False)
class Bundle:
    """Victims taken together (``_bundles``), with their pods' nodes and rows in one array."""

    victims: list[Victim]
    queue: int
    nodes: np.ndarray
    rows: np.ndarray
    amount: np.ndarray  # what its queue gets back


def bundles_of(session: Session, pool: list[Victim]) -> Iterator[Bundle]:
    """What is taken together: an elastic member alone, a whole gang with its elastic members
    (those not taken before it: a victim gang keeps >= min_member running or loses them all)."""
    spare: dict[int, list[Victim]] = {}
    for victim in pool:
        if victim.elastic_of is not None and victim.whole is not None:
            spare.setdefault(id(victim.whole), []).append(victim)
    seen: set[int] = set()
    for victim in pool:
        group = [victim] if victim.elastic_of is not None else [victim, *spare.get(id(victim), ())]
        group = [v for v in group if id(v) not in seen]
        if not group:
            continue
        seen.update(id(v) for v in group)
        rows = np.concatenate([v.rows for v in group]) if len(group) > 1 else group[0].rows
        nodes = np.concatenate([v.nodes for v in group]) if len(group) > 1 else group[0].nodes
        queue = session.queues.queue_of(group[0].pods[0])
        yield Bundle(group, queue, nodes, rows, rows.sum(axis=0).astype(float))


def lift(session: Session, bundles: list[Bundle], sign: int) -> None:
    """Take the bundles off the nodes and their queues (sign -1), or put them back (+1)."""
    if not bundles:
        return
    session.state.shift(*pods_of(bundles), sign)
    _charge(session, bundles, sign)


def pods_of(bundles: list[Bundle]) -> tuple[np.ndarray, np.ndarray]:
    """The bundles' pods: each one's node and request row."""
    return np.concatenate([b.nodes for b in bundles]), np.concatenate([b.rows for b in bundles])


def _charge(session: Session, bundles: list[Bundle], sign: int) -> None:
    by_queue: dict[int, np.ndarray] = {}
    for b in bundles:
        by_queue[b.queue] = by_queue.get(b.queue, 0.0) + b.amount
    for q, amount in by_queue.items():
        session.queues.charge(q, sign * amount)


def shortest_prefix(session: Session, unit: Unit, bundles: list[Bundle]) -> int | None:
    """The fewest bundles, in order, whose eviction lets the unit fit; None if all do not."""
    state, ledger = session.state, session.queues
    saved_ledger = ledger.save()

    def fits_after(count: int) -> bool:
        nodes, rows = pods_of(bundles[:count])
        state.shift(nodes, rows, -1)
        _charge(session, bundles[:count], -1)
        try:
            return fits(session, unit)
        finally:  # the nodes' usage back exactly (integers); the ledger as it was saved
            state.shift(nodes, rows, +1)
            ledger.restore(saved_ledger)

    return fewest(len(bundles), fits_after)


#: How many of the chosen bundles, the last taken first, are each tried for giving back.
GIVE_BACK_TRIES = 16


def minimal_of(session: Session, unit: Unit, chosen: list[Bundle]) -> list[Bundle]:
    """Give back what the unit does not need: at once the bundles with no pod on a node the
    unit would land on (if it still fits), then each of the last ``GIVE_BACK_TRIES`` taken, most
    expensive first, if the unit still fits without it."""
    lift(session, chosen, -1)
    trial = attempt(session, unit, explain=False).trial
    landing = np.zeros(session.state.alloc.shape[0], dtype=bool)
    for placed in trial.placed:
        landing[placed.nodes] = True
    trial.discard()
    idle = [b for b in chosen if not landing[b.nodes].any()]
    kept = list(chosen)
    if idle and len(idle) < len(chosen):
        lift(session, idle, +1)
        if fits(session, unit):
            kept = [b for b in chosen if landing[b.nodes].any()]
        else:
            lift(session, idle, -1)
    for bundle in list(reversed(kept))[:GIVE_BACK_TRIES]:
        if len(kept) == 1:
            break
        lift(session, [bundle], +1)
        if fits(session, unit):
            kept.remove(bundle)
        else:
            lift(session, [bundle], -1)
    lift(session, kept, +1)
    return kept


def fewest_bundles(session: Session, unit: Unit, bundles: list[Bundle], minimal: bool = True) -> list | None:
    """The shortest prefix of ``bundles`` that lets the unit fit, then those not needed given
    back (``minimal``); None when none do."""
    count = shortest_prefix(session, unit, bundles) if bundles else None
    if count is None or not minimal:
        return bundles[:count] if count is not None else None
    return minimal_of(session, unit, bundles[:count])
