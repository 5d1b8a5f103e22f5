"""Words for explanations: what a gang needs and what stops it, as an operator reads it."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .placement import fit_counts
from .quantity import format_amount
from .state import ClusterState


def resources_text(amounts: Mapping[str, int]) -> str:
    inner = ", ".join(f"{name} {format_amount(name, amount)}" for name, amount in sorted(amounts.items()))
    return "{" + inner + "}"


def shapes_text(parts: list[tuple[int, Mapping[str, int]]]) -> str:
    return " + ".join(f"{count} x {resources_text(requests)}" for count, requests in parts)


def counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} excludes {count}" for name, count in counts.items())


def insufficient_text(
    parts: list[tuple[int, Mapping[str, int]]],
    nodes_fit: int,
    placeable: int,
    short: int,
    limiting: str | None,
) -> str:
    if nodes_fit == 0:
        room = "no node can take one"
    elif placeable == nodes_fit:
        room = f"{nodes_fit} node{'s' if nodes_fit != 1 else ''} can take one each"
    else:
        room = f"{nodes_fit} node{'s' if nodes_fit != 1 else ''} can take {placeable} in all"
    text = f"needs {shapes_text(parts)}; {room}; short by {short}"
    if limiting:
        text += f"; limiting resource {limiting}"
    return text


def limiting_resource(
    state: ClusterState, available: np.ndarray, request: np.ndarray, mask: np.ndarray
) -> str | None:
    """The requested resource that alone allows the fewest copies on the nodes that pass filters."""
    best: tuple[int, str] | None = None
    for column in np.flatnonzero(request > 0):
        name = state.resources[column]
        single = np.zeros_like(request)
        single[column] = request[column]
        copies = int(fit_counts(available, single, mask).sum())
        if best is None or copies < best[0]:
            best = (copies, name)
    return best[1] if best else None
