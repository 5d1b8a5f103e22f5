"""``/metrics``: Prometheus text read from the database (cycles, binds, gangs, timeouts, lease),
behind a bearer token or an address allowlist (dashboard/metrics.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from scheduler_core.models import BindIntent, BindJournal, Gang, GangEvent, SchedulerLease, SchedulingCycle
from tests.cast import make_gang

pytestmark = pytest.mark.django_db


def scrape(client, **extra) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1", **extra)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def test_an_empty_installation_has_every_metric_at_zero(client):
    samples = scrape(client)
    assert samples[("gangsched_cycle_duration_seconds_count", ())] == 0
    assert samples[("gangsched_pods_bound_total", ())] == 0
    assert samples[("gangsched_gangs", (("phase", "Pending"),))] == 0
    assert samples[("gangsched_oldest_pending_gang_age_seconds", ())] == 0
    assert samples[("gangsched_scheduler_lease_held", (("holder", ""),))] == 0


def test_the_figures_come_from_the_database(client):
    now = timezone.now()
    for duration in (0.02, 0.3, 2.0):
        SchedulingCycle.objects.create(duration_s=duration, started_at=now - timedelta(seconds=10))
    waiting = make_gang("ml", "waiting", pods=2)
    Gang.objects.filter(pk=waiting.pk).update(created=now - timedelta(seconds=120))
    running = make_gang("ml", "running", pods=3)
    Gang.objects.filter(pk=running.pk).update(phase="Running")
    timed_out = make_gang("ml", "late", pods=1)
    Gang.objects.filter(pk=timed_out.pk).update(phase="TimedOut")
    GangEvent.objects.create(gang=timed_out, kind="timed_out")
    starting = make_gang("ml", "starting", pods=1)  # satisfied: bound, its pods not running yet
    Gang.objects.filter(pk=starting.pk).update(
        phase="Scheduling", satisfied=True, created=now - timedelta(hours=1)
    )
    members = list(running.members.all()) + list(waiting.members.all())
    for member, state in zip(members, ["bound", "bound", "bound", "failed", "pending"], strict=True):
        BindJournal.objects.create(member=member, gang=member.gang, node="n1", epoch=1, state=state)
    # A cycle's binds journaled per gang: the pods of a pending intent are pending binds too.
    ids = [member.pk for member in waiting.members.all()]
    BindIntent.objects.create(gang=waiting, epoch=1, member_ids=ids, nodes=["n1"] * len(ids))
    BindIntent.objects.create(gang=running, epoch=1, member_ids=[1, 2, 3], nodes=["n1"] * 3, state="settled")
    SchedulerLease.objects.update_or_create(
        name="scheduler", defaults={"holder": "w1:42", "epoch": 7, "expires_at": now + timedelta(seconds=30)}
    )

    samples = scrape(client)

    bucket = "gangsched_cycle_duration_seconds_bucket"
    assert samples[(bucket, (("le", "0.025"),))] == 1
    assert samples[(bucket, (("le", "0.5"),))] == 2
    assert samples[(bucket, (("le", "+Inf"),))] == 3
    assert samples[("gangsched_cycle_duration_seconds_sum", ())] == pytest.approx(2.32)
    assert samples[("gangsched_last_cycle_timestamp_seconds", ())] == pytest.approx(
        (now - timedelta(seconds=10)).timestamp()
    )
    assert samples[("gangsched_pods_bound_total", ())] == 3
    assert samples[("gangsched_bind_failures_total", ())] == 1
    assert samples[("gangsched_binds_pending", ())] == 1 + 2
    assert samples[("gangsched_gangs", (("phase", "Pending"),))] == 1
    assert samples[("gangsched_gangs", (("phase", "Running"),))] == 1
    assert samples[("gangsched_gangs", (("phase", "TimedOut"),))] == 1
    assert samples[("gangsched_gangs", (("phase", "Scheduling"),))] == 1
    assert samples[("gangsched_pending_gangs", ())] == 1  # not the satisfied one
    assert 120 <= samples[("gangsched_oldest_pending_gang_age_seconds", ())] < 180
    assert samples[("gangsched_gang_timeouts_total", ())] == 1
    assert samples[("gangsched_scheduler_lease_held", (("holder", "w1:42"),))] == 1
    assert samples[("gangsched_scheduler_lease_epoch", ())] == 7


def test_an_expired_lease_is_not_held(client):
    SchedulerLease.objects.update_or_create(
        name="scheduler", defaults={"holder": "w1:42", "epoch": 3, "expires_at": timezone.now()}
    )
    assert scrape(client)[("gangsched_scheduler_lease_held", (("holder", ""),))] == 0


@pytest.mark.parametrize(
    ("address", "allow", "token", "header", "status"),
    [
        ("127.0.0.1", "127.0.0.1,::1", "", None, 200),  # the default: loopback
        ("10.1.2.3", "127.0.0.1,::1", "", None, 403),
        ("10.1.2.3", "10.0.0.0/8", "", None, 200),  # a network
        ("10.1.2.3", "", "s3cret-token", "Bearer s3cret-token", 200),  # the token, from anywhere
        ("10.1.2.3", "", "s3cret-token", "Bearer wrong", 403),
        ("10.1.2.3", "", "s3cret-token", "s3cret-token", 403),  # not as a bearer token
        ("10.1.2.3", "", "", "Bearer ", 403),  # no token configured: an empty one is no key
    ],
)
def test_access_needs_the_token_or_an_allowed_address(
    client, settings, address, allow, token, header, status
):
    settings.GANGSCHED_METRICS_ALLOW = allow
    settings.GANGSCHED_METRICS_TOKEN = token
    headers = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    response = client.get("/metrics", REMOTE_ADDR=address, **headers)
    assert response.status_code == status
    if status == 403:
        assert b"gangsched_" not in response.content


def test_metrics_take_gets_only(client):
    assert client.post("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 405
