"""The overview chart's hour, rebuilt backwards from now."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.api.selectors import gang_visible
from dashboard.pages.selectors import bound_pods_by_minute, chart_data, chart_now, cluster_totals
from scheduler_core.models import GangEvent, Member, SchedulingCycle
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 23, 12, 0, 30, tzinfo=UTC)


def test_it_rebuilds_utilisation_and_gang_counts_backwards(olga):
    gang = make_gang("ml", "train", pods=2)
    Member.objects.filter(gang=gang).update(
        node="n1", phase="Running", started_at=NOW - timedelta(minutes=10), requests={"cpu": 4000}
    )
    GangEvent.objects.create(gang=gang, kind="bound", created=NOW - timedelta(minutes=10))
    GangEvent.objects.filter(gang=gang, kind="created").update(created=NOW - timedelta(minutes=20))
    SchedulingCycle.objects.create(started_at=NOW - timedelta(minutes=5), duration_s=0.25)

    now = chart_now(NOW)
    rows = bound_pods_by_minute(now=now)
    capacity, used = cluster_totals(rows)

    data = chart_data(
        gangs=gang_visible(user=olga), counts={"Running": 1}, capacity=capacity + Counter(cpu=16000),
        used=used, bound_rows=rows, now=now,
    )  # fmt: skip

    points = data["points"]
    assert len(points) == 60 and data["resources"] == ["cpu"]
    assert points[-1]["util"] == {"cpu": 50.0} and points[-1]["running"] == 1
    assert points[-12]["util"] == {"cpu": 0.0}  # the minute before the pods started
    assert points[-12]["running"] == 0 and points[-12]["pending"] == 1
    assert points[-11]["util"] == {"cpu": 50.0}  # the minute they started in ends with them
    assert points[-30]["pending"] == 0  # before it was created
    assert sum(p["cycles"] for p in points) == 1
    assert max(p["cycle_ms"] for p in points) == 250.0
