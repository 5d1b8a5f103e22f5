"""Fair share of a queue tree: pure functions over plain arrays.

A *tree* is the snapshot's queues (``model.Queue``) with an implicit root, the whole cluster.
Amounts are arrays of one row per queue and one column per resource, in the engine's canonical
integers (floats here, since shares are divided); a queue's usage and demand include its
subtree's.

Fair share, top-down
--------------------

The root's share is the cluster's schedulable capacity (allocatable of ready, schedulable
nodes). At each inner queue (the root included), its share ``S`` is divided among its children:

1. A child without demand gets nothing. Every other child first gets ``min(demand, guarantee)``
   (its demand is first capped at its ``max``). If these guarantees exceed ``S`` on a resource,
   they are all scaled down by the same factor on that resource (an over-promised level, e.g.
   guarantees written for a bigger cluster or a node gone: everyone loses the same fraction).
2. What is left of ``S`` is divided among the children whose demand (capped at max) is not met,
   by weighted dominant-resource progressive filling: each child's extra allocation grows along
   its unmet-demand vector ``e`` at a rate such that its *dominant share* of the extra (the
   largest ``extra_r / S_r``) grows in proportion to its weight. A child stops when its demand
   (or max) is met, or when a resource it needs runs out; the others keep growing until none
   can. With one resource every child gets ``level * weight * S`` capped at its unmet demand,
   which is plain weighted water-filling (max-min fairness with weights).
3. Each child's share is then divided among its own children the same way, recursively.

This is Kueue's and KAI-Scheduler's split (guarantee first, the over-quota part by weight) with
Volcano's/DRF's dominant-resource rule for several resources.

Weights per resource (KAI-Scheduler)
------------------------------------

KAI gives each resource of a queue its own ``overQuotaWeight`` and divides each resource on its
own (``pkg/scheduler/plugins/proportion/resource_division``: ``setResourceShare`` per resource,
``divideUpToFairShare`` by that resource's weights). Where some child of a level names weights
per resource (``Queue.weights``), step 2 does the same at that level: each resource's over-quota
part is water-filled among the children that still want it, by that resource's weights (a child
naming none uses its ``weight`` for every resource). KAI rounds each round's share down to whole
units and hands the fractions out one unit at a time; gangsched keeps the exact quotients. A
level where every child has one scalar weight divides as above.

Unlimited guarantees (KAI's ``quota: -1``)
------------------------------------------

KAI reads ``quota: -1`` as a deserved quota of the whole amount its level divides (its
``setDeservedResource``: ``deserved = totalResourceAmount``), capped by the queue's request and
limit. Here a resource in ``Queue.unlimited_guarantee`` is guaranteed all its demand (capped at
its max) of what the level has left once the children's declared guarantees are served: between
steps 1 and 2, what is left goes first to the children with an unlimited guarantee on that
resource (by weight, as in step 2, when they want more than there is), and only then to everyone
by weight. KAI instead lets each such queue deserve the whole level, the declared quotas of its
siblings included (the level is then over-promised); gangsched keeps a declared amount a promise.
The ledger then counts such a queue's guarantee as its fair share (``resolve_unlimited``), which is
what it is owed and keeps reserved.

Reservations for borrowing (``reserves``)
-----------------------------------------

A queue with demand below its guarantee keeps ``min(guarantee, demand) - usage`` reserved for
itself: others may not borrow it. A queue with a lending limit ``L`` keeps ``guarantee - usage -
L`` reserved even without demand (it lends at most ``L``). ``ledger.py`` uses these to say how
much a queue may take: what its parent may take, less what its siblings keep reserved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .model import DEFAULT_QUEUE, Queue

#: Amounts at or above this are "unlimited" (a max or lending limit that is not set).
UNLIMITED = float(1 << 60)
_EPS = 1e-9


@dataclass(frozen=True)
class Tree:
    """The queues of a snapshot, indexed: ``order`` lists them parents first."""

    queues: tuple[Queue, ...]
    index: dict[str, int]
    parent: tuple[int, ...]  # -1 for a top-level queue
    children: tuple[tuple[int, ...], ...]  # per queue; ``top`` holds the root's
    top: tuple[int, ...]
    order: tuple[int, ...]  # parents before children
    paths: tuple[tuple[int, ...], ...]  # per queue: itself, its parent, ..., its top-level queue
    names: tuple[str, ...]  # "ml/nlp": names from the top down

    @property
    def size(self) -> int:
        return len(self.queues)

    def is_leaf(self, queue: int) -> bool:
        return not self.children[queue]


def build_tree(queues: Iterable[Queue]) -> Tree:
    """Index ``queues``; ``default`` is added, top-level and unlimited, when not defined.

    A parent that is not defined (or a cycle) makes the queue top-level: the declarations
    layer refuses such trees, the engine only has to stay total.
    """
    listed = list(queues)
    if not any(queue.name == DEFAULT_QUEUE for queue in listed):
        listed.append(Queue(DEFAULT_QUEUE))
    index = {queue.name: i for i, queue in enumerate(listed)}
    parent = [index.get(queue.parent, -1) if queue.parent is not None else -1 for queue in listed]
    for i in range(len(listed)):  # break cycles: a queue that reaches itself goes top-level
        seen, walk = {i}, parent[i]
        while walk >= 0 and walk not in seen:
            seen.add(walk)
            walk = parent[walk]
        if walk >= 0:
            parent[i] = -1
    children: list[list[int]] = [[] for _ in listed]
    top: list[int] = []
    for i, p in enumerate(parent):
        (children[p] if p >= 0 else top).append(i)
    order: list[int] = []
    frontier = list(top)
    while frontier:
        order.extend(frontier)
        frontier = [child for queue in frontier for child in children[queue]]
    paths = []
    for i in range(len(listed)):
        path, walk = [], i
        while walk >= 0:
            path.append(walk)
            walk = parent[walk]
        paths.append(tuple(path))
    names = tuple("/".join(listed[q].name for q in reversed(path)) for path in paths)
    return Tree(
        tuple(listed),
        index,
        tuple(parent),
        tuple(tuple(c) for c in children),
        tuple(top),
        tuple(order),
        tuple(paths),
        names,
    )


def amounts(tree: Tree, resources: Sequence[str], field: str, missing: float) -> np.ndarray:
    """One of the queues' mappings (guarantee, max, lending_limit) as a Q x R array."""
    out = np.full((tree.size, len(resources)), missing, dtype=float)
    column = {name: i for i, name in enumerate(resources)}
    for q, queue in enumerate(tree.queues):
        for name, amount in getattr(queue, field).items():
            if name in column:
                out[q, column[name]] = min(float(amount), UNLIMITED)
    return out


def declared_guarantees(tree: Tree, resources: Sequence[str]) -> np.ndarray:
    """The queues' guarantees as a Q x R array, ``UNLIMITED`` where a queue is guaranteed all it
    asks (``Queue.unlimited_guarantee``, KAI's ``quota: -1``)."""
    out = amounts(tree, resources, "guarantee", 0.0)
    for q, queue in enumerate(tree.queues):
        for r, name in enumerate(resources):
            if name in queue.unlimited_guarantee:
                out[q, r] = UNLIMITED
    return out


def resolve_unlimited(guarantee: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Guarantees with each unlimited one replaced by the queue's fair share: what a queue with
    KAI's ``quota: -1`` is owed once the level is divided (module docstring)."""
    return np.where(guarantee >= UNLIMITED, share, guarantee)


def weight_table(tree: Tree, resources: Sequence[str]) -> np.ndarray | None:
    """Each queue's over-quota weight per resource (Q x R), or None when no queue names weights
    per resource (every level then divides by the scalar ``weight``)."""
    if not any(queue.weights for queue in tree.queues):
        return None
    return np.array(
        [[max(queue.weights.get(name, queue.weight), _EPS) for name in resources] for queue in tree.queues],
        dtype=float,
    ).reshape(tree.size, len(resources))


def guarantees(tree: Tree, declared: np.ndarray) -> np.ndarray:
    """Each queue's guarantee as the tree keeps it: an inner queue is guaranteed at least what
    its children are, together (``max(declared, sum of the children's)``, bottom-up).

    A promise to a child is a promise to its parent at the level above: without this, two
    Kueue cohorts that only group guaranteed ClusterQueues (a cohort declares no quota of its
    own) would split the cluster by weight, and a cohort whose ClusterQueues are guaranteed 20
    GPUs could get 15 (kueue #7015, #3948). A Kueue cohort's own quota is a pool on top of its
    ClusterQueues': ``snapshot/queues.py`` adds them before the engine sees it.
    """
    out = declared.astype(float, copy=True)
    below = np.zeros_like(out)
    for q in reversed(tree.order):
        if tree.children[q]:
            out[q] = np.maximum(out[q], below[q])
        if tree.parent[q] >= 0:
            # An unlimited guarantee is a claim on the parent's share, not a promise the parent
            # must hold: it does not raise the parent's guarantee.
            below[tree.parent[q]] += np.where(out[q] >= UNLIMITED, 0.0, out[q])
    return np.minimum(out, UNLIMITED)


def roll_up(tree: Tree, leaf_amounts: np.ndarray) -> np.ndarray:
    """Amounts charged to queues, summed up the tree (each queue: its own plus its subtree's)."""
    total = leaf_amounts.astype(float, copy=True)
    for q in reversed(tree.order):
        if tree.parent[q] >= 0:
            total[tree.parent[q]] += total[q]
    return total


def fair_shares(
    tree: Tree,
    capacity: np.ndarray,
    demand: np.ndarray,
    guarantee: np.ndarray,
    maximum: np.ndarray,
    resources: Sequence[str] = (),
) -> np.ndarray:
    """Each queue's fair share (Q x R), top-down from ``capacity`` (see the module docstring).

    ``resources`` names the columns; without them per-resource weights are not read."""
    weights = np.array([max(queue.weight, _EPS) for queue in tree.queues], dtype=float)
    table = weight_table(tree, resources) if resources else None
    share = np.zeros((tree.size, capacity.shape[0]), dtype=float)
    wanted = np.minimum(demand, maximum)
    pending = [(capacity.astype(float), tree.top)]
    while pending:
        pool, kids = pending.pop()
        kids = tuple(k for k in kids if wanted[k].max() > _EPS)
        if not kids:
            continue
        ids = np.array(kids)
        per_resource = table is not None and any(tree.queues[k].weights for k in kids)
        level_weights = table[ids] if per_resource else weights[ids]
        share[ids] = divide(pool, wanted[ids], guarantee[ids], level_weights)
        pending.extend((share[k], tree.children[k]) for k in kids if tree.children[k])
    return share


def divide(pool: np.ndarray, wanted: np.ndarray, guarantee: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One level: declared guarantees first (scaled down if over-promised), then the unlimited
    ones, then the rest by weight: weighted DRF filling with one weight per child (``weights``
    of shape C), each resource on its own with a weight per child and resource (C x R)."""
    unlimited = guarantee >= UNLIMITED
    base = np.minimum(wanted, np.where(unlimited, 0.0, guarantee))
    promised = base.sum(axis=0)
    over = promised > pool + _EPS
    if over.any():
        factor = np.where(over, pool / np.maximum(promised, _EPS), 1.0)
        base = base * factor
    left = np.maximum(pool - base.sum(axis=0), 0.0)
    unmet = np.maximum(wanted - base, 0.0)
    if unlimited.any():
        first = _fill(left, np.where(unlimited, unmet, 0.0), weights, pool)
        base = base + first
        left = np.maximum(left - first.sum(axis=0), 0.0)
        unmet = np.maximum(unmet - first, 0.0)
    return base + _fill(left, unmet, weights, pool)


def _fill(left: np.ndarray, unmet: np.ndarray, weights: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``progressive_fill`` with one weight per child; with a weight per child and resource,
    each resource water-filled on its own by its column of weights (KAI's division)."""
    if weights.ndim == 1:
        return progressive_fill(left, unmet, weights, scale)
    out = np.zeros_like(unmet)
    for r in range(unmet.shape[1]):
        column = slice(r, r + 1)
        out[:, column] = progressive_fill(left[column], unmet[:, column], weights[:, r], scale[column])
    return out


def progressive_fill(
    left: np.ndarray, unmet: np.ndarray, weights: np.ndarray, scale: np.ndarray
) -> np.ndarray:
    """Weighted dominant-resource progressive filling of ``left`` among rows of ``unmet``.

    Child ``c`` gets ``t_c * unmet_c`` with ``t_c = min(1, level * w_c / dom_c)``, where
    ``dom_c`` is its unmet vector's dominant share of ``scale`` (the pool being divided): its
    dominant share then grows as ``level * w_c``. The level rises until every child is frozen,
    by its demand met (t = 1) or by a resource it needs running out.
    """
    count = unmet.shape[0]
    t = np.zeros(count)
    needs = unmet > _EPS
    dom = (unmet / np.maximum(scale, 1.0)).max(axis=1)
    rate = np.where(dom > 0, weights / np.maximum(dom, _EPS * _EPS), 0.0)
    active = (dom > 0) & needs.any(axis=1)
    level = 0.0
    for _ in range(count + unmet.shape[1] + 1):
        if not active.any():
            break
        frozen_use = (t[~active, None] * unmet[~active]).sum(axis=0)
        speed = (rate[active, None] * unmet[active]).sum(axis=0)  # resource use per unit of level
        room = np.maximum(left - frozen_use, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            by_resource = np.where(speed > _EPS, room / speed, np.inf)
        by_demand = 1.0 / rate[active]
        step = min(float(by_resource.min()), float(by_demand.min()))
        level = max(level, step)
        t[active] = np.minimum(1.0, level * rate[active])
        exhausted = by_resource <= level * (1 + 1e-12)
        done = t >= 1.0 - 1e-12
        blocked = needs[:, exhausted].any(axis=1) if exhausted.any() else np.zeros(count, bool)
        active &= ~(done | blocked)
    return t[:, None] * unmet


def reserves(guarantee: np.ndarray, usage: np.ndarray, demand: np.ndarray, lending: np.ndarray) -> np.ndarray:
    """What each queue keeps for itself, that no other queue may borrow (module docstring)."""
    wanted = np.minimum(guarantee, demand) - usage
    kept = guarantee - usage - lending
    return np.maximum(np.maximum(wanted, kept), 0.0)


def measured(tree, resources: tuple[str, ...]) -> np.ndarray:
    """Which resources a share ratio counts: those some queue names (a guarantee, unlimited or
    not, a max or a lending limit), as Kueue, KAI and YuniKorn account only the resources their queues list;
    with none named, every resource but ``pods``, a per-node slot count that no peer charges to
    a queue unless a queue names it."""
    named = {
        r
        for q in tree.queues
        for amounts in (q.guarantee, q.max, q.lending_limit, q.unlimited_guarantee)
        for r in amounts
    }
    mask = np.array([r in named for r in resources], dtype=bool)
    return mask if mask.any() else np.array([r != "pods" for r in resources], dtype=bool)


def ratios(usage: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Dominant usage over fair share, per queue: 0 with no usage, inf with usage and no share."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(usage > _EPS, np.where(share > _EPS, usage / np.maximum(share, _EPS), np.inf), 0.0)
    return per.max(axis=1) if per.shape[1] else np.zeros(per.shape[0])
