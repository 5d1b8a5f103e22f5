"""Queues in trace replay: the queue tree of ``--queues`` and which tenant a job is.

The tree is a compact spec, one leaf per comma, each a path from the top with its guarantee as a
share of the cluster (of every resource it has), and optional ``:weight=W`` (over-quota weight,
default 1) and ``:max=P%`` (default: unlimited)::

    lab/nlp=40%,lab/vision=30%,ops/batch=20%,ops/dev=10%:weight=2:max=50%

Inner queues (``lab``, ``ops``) are made from the paths: guaranteed the sum of their children's
guarantees, weight 1, no max. Leaf names are what jobs name, so they are unique.

The public multi-tenant traces (Philly's virtual clusters) are not in the repository, and the
shared traces name no tenant, so a job whose ``queue`` is empty or ``default`` is given one by a
fixed rule (``assign``), the same in every process: ``u`` = the first 8 bytes of
SHA-256(job_id) / 2**64 (uniform, unlike crc32 on sequential ids); a job
submitted in the first third of the trace's submission span goes to the *last* leaf of the tree
(the flooding tenant) if ``u < 3/4``, else to one of the others in proportion to their
guarantees (``u`` rescaled); a later job goes to any leaf in proportion to the guarantees. So one
tenant floods the cluster for a while, far beyond its guarantee, then everybody submits: the case
queues exist for. A job that names a leaf keeps it; one that names another queue is an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass

from scheduler_core.engine.model import DEFAULT_QUEUE, Queue

from .traces import Trace, TraceError

#: The benchmark traces' tree: four teams guaranteed 40/30/20/10% of the cluster, under two
#: parents; ``dev``, the smallest, floods first (``assign``).
DEFAULT_QUEUES = "lab/nlp=40%,lab/vision=30%,ops/batch=20%,ops/dev=10%"
FLOOD_SHARE = 0.75  # of the jobs submitted in the first third of the span
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


class QueueSpecError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Leaf:
    path: tuple[str, ...]
    guarantee: float  # share of the cluster, 0..1
    weight: float = 1.0
    max: float | None = None  # share of the cluster; None: unlimited

    @property
    def name(self) -> str:
        return self.path[-1]


@dataclass(frozen=True, slots=True)
class QueueTree:
    spec: str
    leaves: tuple[Leaf, ...]

    @property
    def leaf_names(self) -> tuple[str, ...]:
        return tuple(leaf.name for leaf in self.leaves)

    def queues(self, capacity: dict[str, int]) -> tuple[Queue, ...]:
        """The engine's queues, amounts taken from the cluster's capacity, parents first."""

        def share(fraction: float) -> dict[str, int]:
            return {r: int(amount * fraction + 1e-9) for r, amount in capacity.items() if r != "pods"}

        inner: dict[str, tuple[str | None, float]] = {}
        for leaf in self.leaves:
            for depth, name in enumerate(leaf.path[:-1]):
                parent = leaf.path[depth - 1] if depth else None
                inner[name] = (parent, inner.get(name, (parent, 0.0))[1] + leaf.guarantee)
        out = [Queue(name, parent, share(total)) for name, (parent, total) in inner.items()]
        for leaf in self.leaves:
            out.append(
                Queue(
                    leaf.name,
                    leaf.path[-2] if len(leaf.path) > 1 else None,
                    share(leaf.guarantee),
                    share(leaf.max) if leaf.max is not None else {},
                    weight=leaf.weight,
                )
            )
        return tuple(out)


def parse_queues(spec: str) -> QueueTree:
    """Read a ``--queues`` spec (module docstring); ``QueueSpecError`` names the bad part."""
    leaves: list[Leaf] = []
    for part in (p.strip() for p in spec.split(",")):
        if "=" not in part:
            raise QueueSpecError(f"--queues: {part!r} must be PATH=GUARANTEE% (e.g. lab/nlp=40%)")
        path_text, _, rest = part.partition("=")
        path = tuple(name.strip() for name in path_text.split("/"))
        for name in path:
            if not _NAME.match(name) or name == DEFAULT_QUEUE:
                raise QueueSpecError(
                    f"--queues: queue name {name!r} must be lowercase letters, digits and '-', not 'default'"
                )
        guarantee_text, *options = rest.split(":")
        leaf = Leaf(path, _percent(guarantee_text, path_text))
        for option in options:
            key, _, value = option.partition("=")
            if key == "weight":
                leaf = dataclasses.replace(leaf, weight=_weight(value, path_text))
            elif key == "max":
                leaf = dataclasses.replace(leaf, max=_percent(value, path_text))
            else:
                raise QueueSpecError(f"--queues: {path_text}: unknown option {key!r} (weight, max)")
        if leaf.max is not None and leaf.max < leaf.guarantee:
            raise QueueSpecError(f"--queues: {path_text}: max below its guarantee")
        leaves.append(leaf)
    _check_tree(leaves)
    return QueueTree(spec, tuple(leaves))


def _percent(text: str, where: str) -> float:
    text = text.strip()
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        raise QueueSpecError(f"--queues: {where}: {text!r} must be a percentage like 40%") from None
    if not text.endswith("%") or not 0 <= value <= 100:
        raise QueueSpecError(f"--queues: {where}: {text!r} must be a percentage from 0% to 100%")
    return value / 100


def _weight(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise QueueSpecError(f"--queues: {where}: weight must be a positive number, not {text!r}")
    return value


def _check_tree(leaves: list[Leaf]) -> None:
    names = [leaf.name for leaf in leaves]
    inner = {name for leaf in leaves for name in leaf.path[:-1]}
    parents: dict[str, str | None] = {}
    for leaf in leaves:
        for depth, name in enumerate(leaf.path):
            parent = leaf.path[depth - 1] if depth else None
            if parents.setdefault(name, parent) != parent:
                raise QueueSpecError(f"--queues: queue {name!r} has two parents")
    twice = sorted({name for name in names if names.count(name) > 1} | (inner & set(names)))
    if twice:
        raise QueueSpecError(f"--queues: {', '.join(twice)}: a leaf is named once and has no children")
    if sum(leaf.guarantee for leaf in leaves) > 1 + 1e-9:
        raise QueueSpecError("--queues: the guarantees add up to more than 100%")


def assign(trace: Trace, tree: QueueTree) -> Trace:
    """The trace with every job in a leaf queue: its own, or the tenant rule's (module docstring)."""
    names = tree.leaf_names
    bad = [
        (i + 2, f"queue {job.queue!r} is not a leaf of --queues ({', '.join(names)})")
        for i, job in enumerate(trace.jobs)
        if job.queue not in (DEFAULT_QUEUE, "", *names)
    ]
    if bad:
        raise TraceError(trace.name, bad)
    if not trace.jobs:
        return trace
    first = min(job.submit for job in trace.jobs)
    flood_until = first + (max(job.submit for job in trace.jobs) - first) / 3
    weights = [leaf.guarantee for leaf in tree.leaves]
    jobs = []
    for job in trace.jobs:
        queue = job.queue
        if queue in (DEFAULT_QUEUE, ""):
            u = tenant_draw(job.id)
            if job.submit < flood_until and len(names) > 1:
                if u < FLOOD_SHARE:
                    queue = names[-1]
                else:
                    queue = _pick(names[:-1], weights[:-1], (u - FLOOD_SHARE) / (1 - FLOOD_SHARE))
            else:
                queue = _pick(names, weights, u)
        jobs.append(dataclasses.replace(job, queue=queue))
    return dataclasses.replace(trace, jobs=tuple(jobs))


def tenant_draw(job_id: str) -> float:
    """The job's fixed draw in [0, 1) (module docstring)."""
    return int.from_bytes(hashlib.sha256(job_id.encode()).digest()[:8], "big") / 2**64


def _pick(names: tuple[str, ...], weights: list[float], u: float) -> str:
    """The name whose slice of [0, 1), in proportion to ``weights`` (equal if all 0), holds u."""
    total = sum(weights)
    if total <= 0:
        weights, total = [1.0] * len(names), float(len(names))
    edge = 0.0
    for name, weight in zip(names, weights, strict=True):
        edge += weight / total
        if u < edge:
            return name
    return names[-1]
