"""Pure parsers for the environment variables the settings read.

Each takes the raw value (a string or None) and returns the typed setting, or raises
ImproperlyConfigured naming the variable and the value, so a typo fails at startup with a message
instead of running with a surprise default. Tests call these directly.
"""

from __future__ import annotations

import ipaddress
import math
import re

from django.core.exceptions import ImproperlyConfigured

CLUSTER_BACKENDS = ("simulated", "kubernetes")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def parse_bool(name: str, value: str | None, default: bool = False) -> bool:
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def parse_list(value: str | None, default: str) -> list[str]:
    """A comma-separated list; blanks are dropped (``"a, b,"`` -> ``["a", "b"]``)."""
    raw = default if value is None else value
    return [item.strip() for item in raw.split(",") if item.strip()]


def parse_cluster_backend(value: str | None) -> str:
    backend = (value or "simulated").strip().lower()
    if backend not in CLUSTER_BACKENDS:
        raise ImproperlyConfigured(
            f"CLUSTER_BACKEND={value!r} is not supported; use one of: {', '.join(CLUSTER_BACKENDS)}"
        )
    return backend


def parse_seconds(name: str, value: str | None, default: float) -> float:
    """A non-negative, finite number of seconds."""
    if value is None or not value.strip():
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ImproperlyConfigured(f"{name}={value!r} must be a finite number of seconds, 0 or more")
    return seconds


def parse_count(name: str, value: str | None, default: int) -> int:
    """A whole number, 0 or more."""
    if value is None or not value.strip():
        return default
    try:
        count = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    if count < 0:
        raise ImproperlyConfigured(f"{name}={value!r} must be 0 or more")
    return count


_SCHEDULER_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def parse_scheduler_aliases(name: str, value: str | None, primary: str) -> list[str]:
    """Other schedulerNames whose pods gangsched takes, comma-separated. Each must be a name a
    pod can carry (a DNS subdomain), and not ``default-scheduler``: gangsched would then take
    every pod that names no scheduler, which kube-scheduler is there for."""
    aliases = []
    for item in parse_list(value, ""):
        if not _SCHEDULER_NAME.fullmatch(item):
            raise ImproperlyConfigured(f"{name}: {item!r} is not a scheduler name (a DNS subdomain)")
        if item == "default-scheduler":
            raise ImproperlyConfigured(
                f"{name}: 'default-scheduler' would take every pod that names no scheduler"
            )
        if item != primary and item not in aliases:
            aliases.append(item)
    return aliases


def parse_networks(name: str, value: str | None) -> list[str]:
    """A comma-separated list of IP addresses or networks (``10.0.0.0/8``), each checked."""
    networks = []
    for item in parse_list(value, ""):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address or network") from None
    return networks
