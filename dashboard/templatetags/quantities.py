"""Template filters that show canonical resource amounts as Kubernetes writes them.

The database and the API keep canonical integers (milli-CPU, bytes); people read ``cpu 16,
memory 128Gi``. Formatting lives in the engine (``format_quantity``), exact, so what a page
shows can be copied back into a manifest.

    {% load quantities %}
    {{ member.requests|resource_list }}      cpu 16, memory 128Gi, nvidia.com/gpu 8
    {{ amount|quantity:"memory" }}           128Gi
"""

from __future__ import annotations

from django import template

from scheduler_core.engine.quantity import format_quantity

register = template.Library()


@register.filter
def quantity(amount, resource: str) -> str:
    """One canonical amount of ``resource``; anything not an integer is shown as it is."""
    try:
        return format_quantity(resource, int(amount))
    except (TypeError, ValueError):
        return str(amount)


@register.filter
def resource_list(resources) -> str:
    """A resource list (``{"cpu": 16000, ...}``) as ``cpu 16, memory 128Gi``, sorted by name."""
    return ", ".join(f"{name} {quantity(amount, name)}" for name, amount in sorted((resources or {}).items()))
