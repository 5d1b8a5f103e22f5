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
    if miss.best >= 0:
        best = level.names[miss.best]
        text += f" (best: {level.name} {best}, {format_amount(resource, miss.best_amount)} free)"
    else:
        text += f" (no {level.name} has any)"
    shapes = resources.details.get("shapes")
    if shapes:
        parts = [(shape["count"], shape["requests"]) for shape in shapes]
        text = f"needs {shapes_text(parts)} in one {level.name}; " + text
    needed = resources.details.get("needed", miss.best_members)
    details = {
        **resources.details,
        "shapes": diagnosis.reassign(shapes or [], diagnosis.TOPOLOGY, level.name),
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
    filtered = [i for i, shape in enumerate(details["shapes"]) if diagnosis.filtered(shape)]
    if filtered:
        text += "; " + nodes_text(details["shapes"], filtered)
    return Explanation(gang.key, Reason.NO_DOMAIN_FITS, text, details)
