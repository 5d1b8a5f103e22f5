"""``bench/pages.py``'s forecasts: every pending gang gets one, as the forecast run leaves them
(the Gangs list's Starts column, the gang page's card and the Queues lanes' next start read them)."""

from __future__ import annotations

import datetime as dt


def forecasts_insert(pending: list, now: dt.datetime) -> None:
    """One expected start per gang of ``pending`` (saved Gang rows), a few seconds apart."""
    from scheduler_core.models import GangForecast

    rows = []
    for position, gang in enumerate(pending):
        start = now + dt.timedelta(seconds=60 + 7 * position)
        rows.append(
            GangForecast(
                gang=gang, made_at=now - dt.timedelta(seconds=10), status="expected",
                start_p10=start - dt.timedelta(seconds=30), start_p50=start,
                start_p90=start + dt.timedelta(seconds=120), queue=gang.queue,
                position_in_queue=position // 3, position_in_local_queue=position // 3,
                position_in_cluster=position, own_in_queue=position // 60, own_in_local_queue=position // 60,
                own_in_cluster=position // 20, waiting_reason="InsufficientResources",
                waiting_message=gang.message, waiting_message_own=gang.message,
            )
        )  # fmt: skip
    GangForecast.objects.bulk_create(rows, batch_size=2000)
