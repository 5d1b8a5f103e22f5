"""Per-pod flags of a snapshot as bool arrays, built once and carried (``carry.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .model import Pod


def reserved_of(pods: Sequence[Pod]) -> np.ndarray:
    """Per pod, whether it holds a reservation (``Pod.reserved_node`` set), as a bool array."""
    return np.fromiter((pod.reserved_node is not None for pod in pods), bool, len(pods))


def pending_of(pods: Sequence[Pod]) -> np.ndarray:
    """Per pod, ``Pod.pending`` (not bound, not terminating), as a bool array."""
    return np.fromiter((pod.node is None and not pod.terminating for pod in pods), bool, len(pods))


def ends_of(pods: Sequence[Pod]) -> np.ndarray:
    """Per pod, when it is expected to end (``started + duration``; NaN when either is
    unknown), as a float array: backfilling's known ends, read without a pass over the pods.
    The state keeps it (and ``terminating_of``) for the pods on a node only: the others' are
    NaN (and False), and a pod that is bound later is a new object, looked at then."""
    return np.fromiter(
        (
            pod.started + pod.duration if pod.started is not None and pod.duration is not None else np.nan
            for pod in pods
        ),
        float,
        len(pods),
    )


def terminating_of(pods: Sequence[Pod]) -> np.ndarray:
    """Per pod, ``Pod.terminating``, as a bool array."""
    return np.fromiter((pod.terminating for pod in pods), bool, len(pods))
