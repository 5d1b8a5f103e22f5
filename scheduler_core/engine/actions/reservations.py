"""Reservations carried over from earlier cycles are checked before anything is placed.

A reservation is only a promise the engine made to itself; the cluster may have moved since
(a node removed, not ready or shrunk, another scheduler's pod bound onto the same room, evicted
pods still terminating). A reservation that no longer fits is released, newest node usage last,
so that no bind ever lands on an over-committed node.
"""

from __future__ import annotations

import numpy as np

from ..decisions import Release
from ..session import Session


def validate(session: Session) -> None:
    state = session.state
    holders = sorted(
        (pod for pod in session.pending if pod.reserved_node is not None),
        key=lambda pod: (-pod.priority, pod.created, pod.key),
    )
    for pod in reversed(holders):  # the lowest-ranked reservations give way first
        index = state.node_index.get(pod.reserved_node)
        if index is None:
            _release(session, pod, None, f"node {pod.reserved_node} is gone")
            continue
        node = session.snapshot.nodes[index]
        if not node.ready:
            _release(session, pod, index, f"node {node.name} is not ready")
        elif not session.filter.mask(pod)[index]:
            _release(session, pod, index, f"node {node.name} no longer passes the pod's filters")
        elif np.any(state.used[index] > state.alloc[index]):
            _release(session, pod, index, f"node {node.name} is over-committed")


def _release(session: Session, pod, index: int | None, reason: str) -> None:
    if index is not None:
        session.state.used[index] -= session.state.vector(pod)
        if session.queues is not None:
            session.queues.charge_pods([pod], -1)
    session.reserve(pod, None)
    session.result.releases.append(Release(pod.key, pod.reserved_node, pod.gang, reason))
