"""Words for topology: why a gang with a required level waits, as an operator reads it.

"no rack has 32 free nvidia.com/gpu (best: rack r7, 24 free)" says at once what would unblock
the gang (room in one rack, not room somewhere), which the cluster-wide counts of
``gang._resource_explanation`` cannot: the cluster may have 100 GPUs free and still no rack 32.
"""

from __future__ import annotations

from . import diagnosis
from .decisions import Explanation, Reason
from .explain import nodes_text, shapes_text
from .model import Gang
from .quantity import format_amount
from .topology import Miss


def unknown(gang: Gang, why: str) -> Explanation:
    """A constraint naming a level (or topology) the snapshot does not have: the gang waits."""
    constraint = gang.topology
    return Explanation(
        gang.key,
        Reason.TOPOLOGY_UNKNOWN,
        f"{gang.key} waits: {why}",
        {
            "required": constraint.required,
            "preferred": constraint.preferred,
            "topology": constraint.topology,
        },
    )


def no_domain(gang: Gang, miss: Miss, resources: Explanation) -> Explanation:
    """``resources`` (the cluster-wide shortfall) restated for the required level's domains."""
    level = miss.level
    resource = miss.resource
    demand = format_amount(resource, miss.demand)
    text = f"no {level.name} has {demand} free {resource}"
    best = None
    held = sorted(miss.held.items())
    every_held = bool(held) and len(held) >= level.count
    if every_held:
        named = _held_text(level, held)
        text = f"every {level.name} holds another exclusive gang (all {level.count}: {named})"
    elif miss.best >= 0:
        best = level.names[miss.best]
        text += f" (best: {level.name} {best}, {format_amount(resource, miss.best_amount)} free)"
    else:
        text += f" (no {level.name} has any)"
    if held and len(held) < level.count:
        count = f"{len(held)} of {level.count} {level.name}s"
        text += f"; other exclusive gangs hold {count} ({_held_text(level, held)})"
    shapes = resources.details.get("shapes")
    if shapes:
        parts = [(shape["count"], shape["requests"]) for shape in shapes]
        own = " of its own" if gang.topology is not None and gang.topology.exclusive else ""
        text = f"needs {shapes_text(parts)} in one {level.name}{own}; " + text
    needed = resources.details.get("needed", miss.best_members)
    details = {
        **resources.details,
        "shapes": diagnosis.reassign(
            shapes or [], diagnosis.EXCLUSIVE if every_held else diagnosis.TOPOLOGY, level.name
        ),
        "placeable": miss.best_members,
        "short_by": max(needed - miss.best_members, 1),
        "level": level.key,
        "level_name": level.name,
        "resource": resource,
        "demand": miss.demand,
        "best_domain": best,
        "best_free": miss.best_amount if best is not None else 0,
        "best_members": miss.best_members,
    }
    if gang.topology is not None and gang.topology.exclusive:
        details["exclusive"] = {
            "domains": level.count,
            "held": len(held),
            "held_by": [{"domain": level.names[domain], "gang": holder} for domain, holder in held],
        }
    filtered = [i for i, shape in enumerate(details["shapes"]) if diagnosis.filtered(shape)]
    if filtered:
        text += "; " + nodes_text(details["shapes"], filtered)
    return Explanation(gang.key, Reason.NO_DOMAIN_FITS, text, details)


#: Held domains a message names.
_NAMED = 4


def _held_text(level, held: list[tuple[int, str]]) -> str:
    """'r0 by ml/a, r1 by ml/b': the first few held domains, by whom (the details list them all)."""
    named = [f"{level.names[domain]} by {holder}" for domain, holder in held]
    more = f", {len(named) - _NAMED} more" if len(named) > _NAMED else ""
    return ", ".join(named[:_NAMED]) + more
