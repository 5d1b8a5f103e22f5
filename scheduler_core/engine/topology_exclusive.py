"""Exclusive domains: a gang alone in its required domain among the gangs exclusive at that level.

JobSet's and LeaderWorkerSet's ``exclusive-topology`` give the pods of one child Job (one group)
an affinity to each other and an anti-affinity to the pods of any other at the level's label key
(``pkg/webhooks/pod_mutating_webhook.go`` in kubernetes-sigs/jobset, ``pkg/webhooks/pod_webhook.go``
in kubernetes-sigs/lws), so each lands in a domain no other holds. kube-scheduler checks that pod
by pod; gangsched places a gang whole, so it is one mask: the domains of the required level that
hold a pod of another gang exclusive at the same level key are left out of the gang's nodes
before its domain is chosen. A pod holds its domain while it is bound (terminating included, as
its node still runs it), bound earlier in the cycle, holding a reservation, or placed in the
trial under way: a JobSet's Jobs are one gang group, tried in one trial, and each must see where
the others went.

Pods of gangs that are not exclusive neither hold a domain nor are kept out of one: upstream's
anti-affinity selects only the pods that carry its label. Gangs exclusive at another level key do
not meet either (each keeps to its own level's domains).

The what-ifs of backfilling and preemption (pods ended, an empty cluster, terminating pods gone)
name the pods they take away (``Session.vanished``): those hold no domain in them either, or an
exclusive gang waiting for a domain would look as if it could never run.

Nothing here runs unless an exclusive gang is placed; where the exclusive gangs' bound pods are
is gathered once a cycle, on the first such placement, per level key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Gang, Pod
from .session import Session, Trial
from .topology_index import Level, domains


@dataclass(frozen=True, slots=True)
class Holders:
    """The gangs exclusive at one level key, and where their pods were when the cycle began."""

    keys: tuple[str, ...]
    position: dict[str, int]
    nodes: np.ndarray  # node index of each bound pod
    owners: np.ndarray  # its gang's position in ``keys``
    bound: tuple[Pod, ...]  # each bound pod, for evictions and what-ifs in the cycle
    pending: tuple[tuple[Pod, int], ...]  # pending pods (and owner): bound or reserved later


def held(session: Session, trial: Trial | None, gang: Gang, level: Level) -> dict[int, str]:
    """The domains of ``level`` that hold a pod of another gang exclusive at the gang's required
    level key, each with the first such gang (explanations name it)."""
    holders = _holders(session, gang.topology.required)
    own = holders.position.get(gang.key, -1)
    keep = holders.owners != own
    vanished = session.vanished
    if (session.evicted or vanished is not None) and holders.bound:
        stays = (_stays(session, pod) for pod in holders.bound)
        keep &= np.fromiter(stays, bool, len(holders.bound))
    nodes, owners = [holders.nodes[keep]], [holders.owners[keep]]
    index = session.state.node_index
    later: list[tuple[int, int]] = []
    for pod, owner in holders.pending:
        if owner == own or not _stays(session, pod):
            continue
        where = session.bound_at.get(pod.key)
        if where is None:
            where = index.get(session.reserved_node(pod), -1)
        if where >= 0:
            later.append((where, owner))
    for placed in trial.placed if trial is not None else ():
        owner = holders.position.get(placed.pods[0].gang, own)
        if owner != own:
            later.extend((int(where), owner) for where in placed.where)
    if later:
        nodes.append(np.array([where for where, _ in later], dtype=np.int64))
        owners.append(np.array([owner for _, owner in later], dtype=np.int64))
    found = level.ids[np.concatenate(nodes)]
    who = np.concatenate(owners)[found >= 0]
    found = found[found >= 0]
    taken, first = np.unique(found, return_index=True)
    return {int(domain): holders.keys[int(who[at])] for domain, at in zip(taken, first, strict=True)}


def _stays(session: Session, pod: Pod) -> bool:
    """Whether the pod still holds its domain: not evicted in the cycle, nor taken away by the
    what-if under way."""
    return pod.key not in session.evicted and (session.vanished is None or not session.vanished(pod))


def _holders(session: Session, key: str) -> Holders:
    cache = domains(session).exclusive
    cached = cache.get(key)
    if cached is None:
        cached = cache[key] = _gather(session, key)
    return cached


def _gather(session: Session, key: str) -> Holders:
    keys = tuple(
        gang.key
        for gang in session.gangs.values()
        if gang.topology is not None and gang.topology.exclusive and gang.topology.required == key
    )
    position = {gang_key: i for i, gang_key in enumerate(keys)}
    index = session.state.node_index
    nodes, owners, bound, pending = [], [], [], []
    for owner, gang_key in enumerate(keys):
        for pod in session.members.get(gang_key, ()):
            if pod.node is None:
                if pod.pending:
                    pending.append((pod, owner))
            elif pod.node in index:
                nodes.append(index[pod.node])
                owners.append(owner)
                bound.append(pod)
    return Holders(
        keys,
        position,
        np.array(nodes, dtype=np.int64),
        np.array(owners, dtype=np.int64),
        tuple(bound),
        tuple(pending),
    )
