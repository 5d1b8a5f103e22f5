"""Giving back a gang's reservations, shared by timeouts and deadlock breaking."""

from __future__ import annotations

from ..decisions import Release
from ..session import Session


def release_held(session: Session, gang_key: str, reason: str) -> int:
    """Release every reservation the gang holds now; returns how many."""
    held = session.held(gang_key)
    for pod in held:
        node = session.reserved_node(pod)
        index = session.state.node_index.get(node)
        if index is not None:
            session.state.used[index] -= session.state.vector(pod)
        session.reserve(pod, None)
        if session.queues is not None and index is not None:
            session.queues.charge_pods([pod], -1)
        session.result.releases.append(Release(pod.key, node, gang_key, reason))
    return len(held)
