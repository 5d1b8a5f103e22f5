"""The history of a declaration's changes to gangs that already existed: who changed what.

Every change of an existing gang, by anyone, is a ``configured`` GangEvent naming the actor and
the change (settings from/to, pods that joined or changed), so that a gang's owner and the
operators can see on the gang's page who altered it, as ``kubectl``'s managedFields would tell.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler_core.models import Gang, GangEventKind
from scheduler_core.services.history import event_record
from scheduler_core.services.tenancy import Actor


def configured_record(gang: Gang, actor: Actor, via: str, before: dict[str, Any]) -> None:
    """``before``: the changed fields' old values; the gang holds the new ones. The stored
    manifest (``declaration``) is named, not copied: the gang's page shows it whole."""
    changed = {
        name: {"from": _plain(old), "to": _plain(getattr(gang, name))}
        for name, old in before.items()
        if name != "declaration"
    }
    summary = ", ".join(f"{name} {_short(c['from'])} -> {_short(c['to'])}" for name, c in changed.items())
    if "declaration" in before:
        summary = ", ".join(filter(None, [summary, "its manifest"]))
    event_record(
        gang=gang,
        kind=GangEventKind.CONFIGURED,
        reason=f"configured by {actor.who} ({via}): {summary}",
        details={"by": actor.who, "via": via, "changed": changed, "manifest": "declaration" in before},
    )


def pods_record(gang: Gang, actor: Actor, joined: list[str], changed: list[str]) -> None:
    """Pods applied into a gang that existed before this apply."""
    parts = [
        f"{label} {', '.join(names)}" for label, names in (("joined", joined), ("changed", changed)) if names
    ]
    event_record(
        gang=gang,
        kind=GangEventKind.CONFIGURED,
        reason=f"pods {'; '.join(parts)} (by {actor.who})",
        details={"by": actor.who, "podsJoined": joined, "podsChanged": changed},
    )


def _plain(value: Any) -> Any:
    """A JSON value for the event's details: a gang group by its key, anything else as text."""
    key = getattr(value, "key", None)
    if key is not None:
        return key
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."
