"""Words for explanations: what a gang needs and what stops it, as an operator reads it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from . import diagnosis
from .quantity import format_amount


def resources_text(amounts: Mapping[str, int]) -> str:
    return _resources_text(tuple(sorted(amounts.items())))


@lru_cache(maxsize=4096)
def _resources_text(items: tuple[tuple[str, int], ...]) -> str:
    """Remembered: a busy cycle explains hundreds of failures, mostly in a few hundred shapes."""
    return "{" + ", ".join(f"{name} {format_amount(name, amount)}" for name, amount in items) + "}"


def shapes_text(parts: list[tuple[int, Mapping[str, int]]]) -> str:
    return " + ".join(f"{count} x {resources_text(requests)}" for count, requests in parts)


def nodes_text(
    shapes: list[Mapping], which: list[int], needs: list[tuple[int, Mapping[str, int]]] | None = None
) -> str:
    """kube-scheduler's '0/16 nodes are available: 4 node(s) had untolerated taint {...}, 12
    Insufficient nvidia.com/gpu' for the shapes ``which`` (each named by its requests when the
    gang has several), then, given ``needs``, what the gang needs."""
    several = len(shapes) > 1
    texts = [
        (f"{resources_text(shapes[i]['requests'])}: " if several else "") + diagnosis.shape_text(shapes[i])
        for i in which
    ]
    if needs is not None:
        texts.append(f"needs {shapes_text(needs)}")
    return "; ".join(texts)


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


#: How many pod names a message lists before it says how many more there are.
NAMES_SHOWN = 5


def names_text(keys: list[str]) -> str:
    """'ns/a-0, ns/a-1 and 3 more': the list cut after ``NAMES_SHOWN`` names."""
    more = f" and {len(keys) - NAMES_SHOWN} more" if len(keys) > NAMES_SHOWN else ""
    return ", ".join(keys[:NAMES_SHOWN]) + more


def members_text(keys: list[str]) -> str:
    """'3 members: ns/a-0, ns/a-1, ns/a-2'."""
    return f"{len(keys)} member{'s' if len(keys) != 1 else ''}: {names_text(keys)}"


def victim_text(victim, pods: list[str]) -> str:
    """Preemption victims (``actions/victims.py``) as the preemptor's explanation names them, and
    why they were taken: ``pods``, the members taken, all elastic members of one gang or the
    members of a gang (group) taken whole, or a lone pod."""
    if victim.elastic_of is not None:
        gang = victim.elastic_of
        plural = "s" if len(pods) != 1 else ""
        return (
            f"{names_text(pods)} (elastic member{plural} above minMember {gang.min_member} of gang "
            f"{gang.key}, priority {victim.priority})"
        )
    if not victim.gangs:
        return f"{victim.key} (lone pod, priority {victim.priority})"
    kind = "whole gang" if victim.gangs == (victim.key,) else "whole gang group"
    return f"{victim.key} ({kind}, priority {victim.priority}, {members_text(pods)})"


def victim_details(victim, pods: list[str]) -> dict:
    """The same, as fields a page can render."""
    kind = "elastic" if victim.elastic_of is not None else ("whole" if victim.gangs else "lone")
    return {
        "kind": kind,
        "gang": victim.elastic_of.key
        if victim.elastic_of is not None
        else (victim.key if victim.gangs else None),
        "priority": victim.priority,
        "pods": pods,
    }
