"""Why a gang is not placed, as the API, the gang page and ``manage.py describe gang`` show it.

The engine stores its explanation on the gang row (reason, message, details); ``details["shapes"]``
holds, per shape of member, the reasons nodes were ruled out and their node counts
(``engine/diagnosis.py``). ``gang_why`` turns them into one structure for every reader:

    {"reason": "NoFeasibleNodes", "message": "0/16 nodes are available: ...",
     "shapes": [{"members": 4, "requests": {"cpu": "8", "nvidia.com/gpu": "1"}, "nodes": 16,
                 "available": 0, "reasons": [{"reason": "UntoleratedTaint", "count": 4,
                 "detail": "nvidia.com/gpu=present:NoSchedule",
                 "text": "4 node(s) had untolerated taint {nvidia.com/gpu: present}",
                 "label": "node(s) had untolerated taint {nvidia.com/gpu: present}"}, ...]}]}

``shapes`` is empty for explanations that are not about nodes (waiting for members, a gang
group, a timeout).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler_core.engine.diagnosis_text import reason_text
from scheduler_core.engine.quantity import format_quantity


def gang_why(gang) -> dict | None:
    """``gang``'s explanation with its per-shape node counts; None when nothing holds it back."""
    if not gang.reason:
        return None
    details = gang.details if isinstance(gang.details, Mapping) else {}
    return {
        "reason": gang.reason,
        "message": gang.message,
        "shapes": [_shape(item) for item in details.get("shapes") or () if "reasons" in item],
    }


def _shape(item: Mapping) -> dict:
    requests = {
        name: format_quantity(name, int(amount)) for name, amount in sorted(item.get("requests", {}).items())
    }
    return {
        "members": int(item.get("count", 0)),
        "requests": requests,
        "requests_text": ", ".join(f"{name} {amount}" for name, amount in requests.items()),
        "nodes": int(item.get("nodes", 0)),
        "available": int(item.get("available", 0)),
        "reasons": [
            {
                "reason": row["reason"],
                "count": int(row["count"]),
                "detail": row.get("detail", ""),
                "text": reason_text(row),
                "label": reason_text(row).split(" ", 1)[1],
            }
            for row in item["reasons"]
        ],
    }
