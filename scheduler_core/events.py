"""Live updates: GangEvent rows are the outbox, the channel layer is the wire.

Services insert events in the same transaction as the change they describe; ``events_publish``
sends the unpublished ones, oldest first, to the ``gangs`` group (every dashboard page) and to
``gang.<id>`` (a socket subscribed to that gang), then stamps ``published_at``. An event is
sent at least once; pages treat events as "something changed, here is what", never as counters.

Each event carries its gang's database id (``gang_id``) besides its key: a key names whichever
gang holds it now, and a gang deleted and created again under the same key by someone else is
another gang with another id (PostgreSQL hands an id out once, as Kubernetes a UID). The
consumer (``dashboard/consumers.py``) decides visibility and subscriptions per id, and what a
user reads of an event's text: each carries the submitters of the gangs and pods its text names
(``named``, one lookup per batch), so that a text naming another's work is redacted per user
(``reads/redaction.py``) with no query.

A deleted gang's history goes with it, so its deletion cannot travel through the outbox: once
the deletion commits, ``gang.deleted`` (its id and key) is sent to ``gangs`` (every socket),
whatever deleted it (services, the admin, the Kubernetes mirror, a queryset: ``post_delete``),
so sockets drop their subscription to it and their cached answer about it, and tell their page
when its user could see that gang (the notice carries its submitter for that: the row is gone).
Best effort: a notice lost (Redis away) leaves a subscription no event will reach, an answer
about an id no event will carry again, and a row on a page until its next refresh.

A forecast run (``tasks.forecast_gangs``) is announced the same way, once stored:
``forecast.updated`` to ``gangs``, with the gangs whose forecast changed (``forecasts_announce``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.db.models.signals import post_delete
from django.utils import timezone

from scheduler_core.db.dry_run import dry_run_active
from scheduler_core.models import Gang, GangEvent
from scheduler_core.reads.redaction import named_keys, owners_of

logger = logging.getLogger(__name__)

ALL_GANGS = "gangs"
#: The channel-layer type (and the consumer's handler, ``forecast_updated``) of a forecast run.
FORECAST_UPDATED = "forecast.updated"


def gang_group_name(gang_id: int) -> str:
    """The channel-layer group of one gang, by id: a gang re-created under the same key has
    another group, so a subscription to the old one never carries the new one's events."""
    return f"gang.{gang_id}"


def event_payload(event: GangEvent, owners: dict[str, str] | None = None) -> dict:
    """``named``: the submitter of each gang or pod its text names (``owners_of``), for the
    consumer to redact the text per user (``reads/redaction.py``) without a query; the consumer
    never sends it on."""
    gang = event.gang
    owners = owners_of(named_keys(event.reason)) if owners is None else owners
    return {
        "type": "gang.event",
        "id": event.pk,
        "gang": gang.key,
        "gang_id": gang.pk,
        "kind": event.kind,
        "reason": event.reason,
        "created": event.created.isoformat(),
        "phase": gang.phase,
        "satisfied": gang.satisfied,
        "named": {key: owners[key] for key in named_keys(event.reason) if key in owners},
    }


def events_publish(*, limit: int = 500) -> int:
    """Send up to ``limit`` unpublished events; returns how many were sent."""
    layer = get_channel_layer()
    with transaction.atomic():
        events = list(
            GangEvent.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(published_at__isnull=True)
            .select_related("gang")
            .order_by("created", "id")[:limit]
        )
        if not events:
            return 0
        if layer is not None:
            messages = []
            owners = owners_of(key for event in events for key in named_keys(event.reason))
            for event in events:
                payload = event_payload(event, owners)
                messages.append((ALL_GANGS, payload))
                messages.append((gang_group_name(event.gang_id), payload))
            # One event loop for the whole batch: async_to_sync per send started a loop (and the
            # channel layer a Redis connection) for every message, some 6 ms each.
            async_to_sync(_send_all)(layer, messages)
        GangEvent.objects.filter(pk__in=[e.pk for e in events]).update(published_at=timezone.now())
    return len(events)


async def _send_all(layer, messages: list[tuple[str, dict]]) -> None:
    """Send in order, one ``group_send`` after the other, as the loop above used to."""
    for group, payload in messages:
        await layer.group_send(group, payload)


def deleted_payload(gang: Gang) -> dict:
    """``submitter`` lets the consumer apply the API's visibility rule to a row no longer there."""
    return {"type": "gang.deleted", "gang_id": gang.pk, "gang": gang.key, "submitter": gang.submitter}


class _DeletionBatch:
    """The deletion notices of one transaction (or savepoint), sent in one event loop once it
    commits: a queryset or namespace delete of thousands of gangs costs one loop, not one per
    gang (some 6 ms each). Registered with ``on_commit`` under the savepoints open when the first
    gang was deleted, so a savepoint rolled back drops its notices with it."""

    def __init__(self) -> None:
        self.payloads: list[dict] = []

    def __call__(self) -> None:
        deleted_send(self.payloads)


def _gang_deleted(sender, instance: Gang, using: str, **kwargs) -> None:
    payload = deleted_payload(instance)  # now: the instance loses its pk once deleted
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        deleted_send([payload])
        return
    savepoints = set(connection.savepoint_ids)
    for registered_under, callback, _robust in reversed(connection.run_on_commit):
        if isinstance(callback, _DeletionBatch) and registered_under == savepoints:
            callback.payloads.append(payload)
            return
    batch = _DeletionBatch()
    batch.payloads.append(payload)
    transaction.on_commit(batch, using=using)


def deleted_send(payloads: list[dict]) -> None:
    """Send deletion notices; a failure is logged, never raised into the deleting caller (its
    transaction has committed). Nothing in a dry run: nothing was deleted."""
    layer = get_channel_layer()
    if layer is None or not payloads or dry_run_active():
        return
    try:
        async_to_sync(_send_all)(layer, [(ALL_GANGS, payload) for payload in payloads])
    except Exception:
        logger.warning(
            "deletion of %d gang(s) not sent to the sockets (first: %s)",
            len(payloads),
            payloads[0]["gang"],
            exc_info=True,
        )


def forecasts_announce(made_at: float, changed: list[tuple[int, str, str]]) -> None:
    """Tell every socket that a forecast run was stored (``services/forecasts.py``): when it was
    made and the gangs whose forecast changed, each with its id and submitter for the consumer
    to apply the API's visibility rule (it forwards a user only the keys of gangs they may see).
    Best effort, as deletion notices: a notice lost leaves a page showing the last forecast, with
    its age, until the next run."""
    layer = get_channel_layer()
    if layer is None:
        return
    payload = {
        "type": FORECAST_UPDATED,
        "made_at": datetime.fromtimestamp(made_at, tz=UTC).isoformat(),
        "gangs": [[gang_id, key, submitter] for gang_id, key, submitter in changed],
    }
    try:
        async_to_sync(_send_all)(layer, [(ALL_GANGS, payload)])
    except Exception:
        logger.warning("forecast notice not sent to the sockets", exc_info=True)


def connect_signals() -> None:
    """Called from the scheduler_core app's ``ready()``: every deletion of a gang, a queryset's
    and a cascade's too, sends its notice (Django's fast delete is skipped for Gang then; a
    gang's members and events already made it collect the rows)."""
    post_delete.connect(_gang_deleted, sender=Gang, dispatch_uid="gang-deleted-notice")
