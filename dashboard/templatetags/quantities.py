"""Template filters that show canonical resource amounts (milli-CPU, bytes, counts).

The database and the API keep canonical integers; people read ``cpu 16.5, memory 244Gi``
(``display_quantity``: bytes in the largest binary unit, CPU in cores, three significant
digits), with the exact Kubernetes form (``format_quantity``, copyable into a manifest) on hover
wherever the two differ. Formatting lives in the engine; static/js/units.js writes the same.

    {% load quantities %}
    {{ amount|qty:"memory" }}                <span class="qty" title="250000Mi">244Gi</span>
    {{ member.requests|resources }}          cpu 16.5, memory 244Gi, nvidia.com/gpu 8 (with hovers)
    {{ amount|shown:"memory" }}              244Gi (plain text, for attributes)
    {{ amount|quantity:"memory" }}           250000Mi (exact)
    {{ member.requests|resource_list }}      cpu 16500m, memory 250000Mi (exact, plain text)
"""

from __future__ import annotations

import json

from django import template
from django.utils.html import format_html, format_html_join

from scheduler_core.engine.quantity import display_quantity, format_quantity

register = template.Library()


@register.filter
def quantity(amount, resource: str) -> str:
    """One canonical amount of ``resource``, exact; anything not an integer is shown as it is."""
    try:
        return format_quantity(resource, int(amount))
    except (TypeError, ValueError):
        return str(amount)


@register.filter
def shown(amount, resource: str) -> str:
    """One canonical amount of ``resource`` as displayed (rounded), plain text."""
    try:
        return display_quantity(resource, int(amount))
    except (TypeError, ValueError):
        return str(amount)


@register.filter
def qty(amount, resource: str):
    """One amount as displayed; where the exact form reads differently, in a ``<span class="qty">``
    whose ``title`` it is (``250000Mi`` behind ``244Gi``, ``16500m`` behind ``16.5``)."""
    text, exact = shown(amount, resource), quantity(amount, resource)
    if text == exact:
        return format_html("{}", text)
    return format_html('<span class="qty" title="{}">{}</span>', exact, text)


@register.filter
def resources(mapping):
    """A resource list (``{"cpu": 16500, ...}``) as ``cpu 16.5, memory 244Gi``, sorted by name,
    each amount with its exact form on hover (``qty``)."""
    items = sorted((mapping or {}).items())
    return format_html_join(", ", "{} {}", ((name, qty(amount, name)) for name, amount in items))


@register.filter
def resource_list(mapping) -> str:
    """A resource list as Kubernetes writes it, exact: ``cpu 16, memory 128Gi``, sorted by name."""
    return ", ".join(f"{name} {quantity(amount, name)}" for name, amount in sorted((mapping or {}).items()))


def _readable(value, key: str | None = None):
    """``value`` (decoded JSON) with each integer under a CPU or byte resource's key as displayed,
    its exact form in brackets where the display rounds: ``"memory": "244Gi (250000Mi)"``."""
    if isinstance(value, dict):
        return {k: _readable(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v, key) for v in value]
    if key is not None and isinstance(value, int) and not isinstance(value, bool):
        text = display_quantity(key, value)
        if text != str(value):  # cpu and bytes; counts read the same
            exact = format_quantity(key, value)
            return text if text == exact else f"{text} ({exact})"
    return value


@register.filter
def readable_json(value) -> str:
    """Stored JSON (an explanation's details) indented, its CPU and byte amounts displayed
    (``_readable``); the API keeps the canonical integers."""
    return json.dumps(_readable(value), indent=2, sort_keys=True) if value else ""
