"""The overview chart's hour, rebuilt backwards from now."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from dashboard.pages.charts import chart_data, chart_now, usage_changes_by_minute
from dashboard.pages.selectors import cluster_totals
from scheduler_core.models import GangEvent, Member, SchedulingCycle, UsageMinute
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 23, 12, 0, 30, tzinfo=UTC)


def test_it_rebuilds_utilisation_and_gang_counts_backwards(olga):
    """The pods' binding is recorded in its minute (moved ten minutes back here): the chart holds
    their use from that minute on, and none before it."""
    at = timezone.now()
    gang = make_gang("ml", "train", pods=2)
    Member.objects.filter(gang=gang).update(node="n1", phase="Running", requests={"cpu": 4000})
    assert UsageMinute.objects.update(minute=F("minute") - timedelta(minutes=10)) == 2  # cpu, pods
    GangEvent.objects.create(gang=gang, kind="bound", created=at - timedelta(minutes=10))
    GangEvent.objects.filter(gang=gang, kind="created").update(created=at - timedelta(minutes=20))
    SchedulingCycle.objects.create(started_at=at - timedelta(minutes=5), duration_s=0.25)

    now = chart_now(at)
    capacity, used = cluster_totals()

    data = chart_data(
        submitter=None, counts={"Running": 1}, capacity=capacity + Counter(cpu=16000),
        used=used, changes=usage_changes_by_minute(now=now), now=now,
    )  # fmt: skip

    points = data["points"]
    assert len(points) == 60 and data["resources"] == ["cpu"]
    assert points[-1]["util"] == {"cpu": 50.0} and points[-1]["running"] == 1
    assert points[-12]["util"] == {"cpu": 0.0}  # the minute before the pods were bound
    assert points[-12]["running"] == 0 and points[-12]["pending"] == 1
    assert points[-11]["util"] == {"cpu": 50.0}  # the minute they were bound in ends with them
    assert points[-30]["pending"] == 0  # before it was created
    assert sum(p["cycles"] for p in points) == 1
    assert max(p["cycle_ms"] for p in points) == 250.0


def test_finished_pods_held_their_room_before_they_finished(olga):
    at = timezone.now()
    gang = make_gang("ml", "train", pods=2)
    Member.objects.filter(gang=gang).update(node="n1", phase="Running", requests={"cpu": 4000})
    UsageMinute.objects.update(minute=F("minute") - timedelta(minutes=30))
    Member.objects.filter(gang=gang, name__endswith="-0").update(phase="Succeeded")
    UsageMinute.objects.filter(minute__gt=at - timedelta(minutes=2)).update(
        minute=F("minute") - timedelta(minutes=5)
    )
    now = chart_now(at)
    capacity, used = cluster_totals()

    data = chart_data(
        submitter=None, counts={}, capacity=capacity + Counter(cpu=16000), used=used,
        changes=usage_changes_by_minute(now=now), now=now,
    )  # fmt: skip

    util = [p["util"]["cpu"] for p in data["points"]]
    assert util[-1] == 25.0 and util[-6] == 25.0  # one pod left, from the minute it finished in
    assert util[-7] == 50.0 and util[-31] == 50.0  # both, from their bind to the finish
    assert util[-32] == 0.0


def test_pending_demand_is_the_last_cycle_of_each_minute_carried_forward(olga):
    """Before the hour's first cycle the chart starts from the last cycle before the hour; a
    minute without a cycle keeps the previous value; demand above capacity reads above 100%."""
    SchedulingCycle.objects.create(started_at=NOW - timedelta(minutes=90), pending_demand={"cpu": 8000})
    SchedulingCycle.objects.create(started_at=NOW - timedelta(minutes=95), pending_demand={"cpu": 1})
    SchedulingCycle.objects.create(
        started_at=NOW - timedelta(minutes=30, seconds=20), pending_demand={"cpu": 16000}
    )
    SchedulingCycle.objects.create(
        started_at=NOW - timedelta(minutes=30), pending_demand={"cpu": 24000, "nvidia.com/gpu": 4}
    )
    SchedulingCycle.objects.create(started_at=NOW - timedelta(minutes=5), pending_demand={})

    now = chart_now(NOW)
    data = chart_data(
        submitter=None, counts={}, capacity=Counter({"cpu": 16000, "nvidia.com/gpu": 8}),
        used=Counter(), changes=usage_changes_by_minute(now=now), now=now,
    )  # fmt: skip

    points = data["points"]
    assert data["resources"] == ["cpu", "nvidia.com/gpu"]
    assert points[0]["demand"] == {"cpu": 50.0, "nvidia.com/gpu": 0.0}  # the cycle 90 min ago
    assert points[0]["demand_amounts"] == {"cpu": 8000, "nvidia.com/gpu": 0}
    assert points[-32]["demand"] == points[0]["demand"]
    # 30 min ago: two cycles in that minute, the later one counts.
    assert points[-31]["demand"] == {"cpu": 150.0, "nvidia.com/gpu": 50.0}
    assert points[-31]["demand_amounts"] == {"cpu": 24000, "nvidia.com/gpu": 4}
    assert points[-7]["demand"] == points[-31]["demand"]  # carried over minutes without a cycle
    assert points[-6]["demand"] == {"cpu": 0.0, "nvidia.com/gpu": 0.0}  # 5 min ago: nothing left
    assert points[-1]["demand_amounts"] == {"cpu": 0, "nvidia.com/gpu": 0}
    assert sum(p["cycles"] for p in points) == 3  # the cycles before the hour are not counted


def test_no_cycle_at_all_is_no_demand(olga):
    now = chart_now(NOW)
    data = chart_data(
        submitter=None, counts={}, capacity=Counter({"cpu": 16000}), used=Counter(),
        changes=usage_changes_by_minute(now=now), now=now,
    )  # fmt: skip

    assert {p["demand"]["cpu"] for p in data["points"]} == {0.0}
