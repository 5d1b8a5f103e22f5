"""The invariants the database itself enforces, and the append-only history."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction

from scheduler_core.engine.model import GangPhase, TimeoutStyle
from scheduler_core.models import (
    BindJournal,
    BindState,
    Gang,
    GangEvent,
    GangEventKind,
    Member,
    MemberPhase,
    Node,
    SchedulingCycle,
)

pytestmark = pytest.mark.django_db


def refused(**fields):
    """True if creating a Gang with these fields violates a database constraint."""
    try:
        with transaction.atomic():
            Gang.objects.create(**{"namespace": "ml", "name": "train", "min_member": 2, **fields})
    except IntegrityError:
        return True
    return False


def test_migrations_match_the_models():
    call_command("makemigrations", "scheduler_core", "--check", "--dry-run", verbosity=0)


def test_a_gang_is_unique_by_namespace_and_name():
    Gang.objects.create(namespace="ml", name="train", min_member=2)
    Gang.objects.create(namespace="other", name="train", min_member=2)

    assert refused()


@pytest.mark.parametrize(
    "fields",
    [
        {"min_member": 0},
        {"total_number": 1},  # below min_member
        {"wait_seconds": -1.0},
        {"phase": "Sleeping"},
        {"mode": "Lenient"},
        {"style": "Medium"},
        {"placement": "random"},
        {"restart_policy": "Always"},
        {"reason": "BecauseISaidSo"},
        {"fallen_back": True, "style": TimeoutStyle.HARD.value},
        {"running": -1},
    ],
    ids=lambda fields: ",".join(fields),
)
def test_a_gang_refuses_impossible_values(fields):
    assert refused(**fields)


def test_a_gang_accepts_every_engine_phase_and_a_soft_fallback():
    for i, phase in enumerate(GangPhase):
        Gang.objects.create(namespace="ml", name=f"g{i}", min_member=1, phase=phase.value)
    Gang.objects.create(
        namespace="ml",
        name="soft",
        min_member=1,
        style=TimeoutStyle.SOFT.value,
        fallen_back=True,
        total_number=1,
    )

    assert Gang.objects.count() == len(GangPhase) + 1


def test_a_member_is_unique_by_namespace_and_name():
    Member.objects.create(namespace="ml", name="train-0")
    with pytest.raises(IntegrityError), transaction.atomic():
        Member.objects.create(namespace="ml", name="train-0")


def test_a_bound_member_holds_no_reservation():
    with pytest.raises(IntegrityError), transaction.atomic():
        Member.objects.create(namespace="ml", name="train-0", node="gpu-a", reserved_node="gpu-b")


def test_deleting_a_gang_deletes_its_members():
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1)
    Member.objects.create(namespace="ml", name="train-0", gang=gang)

    gang.delete()

    assert not Member.objects.exists()


def test_json_fields_are_validated_on_full_clean():
    node = Node(name="gpu-a", allocatable={"cpu": "4"}, taints=[{"key": "gpu", "effect": "Sometimes"}])

    with pytest.raises(ValidationError) as error:
        node.full_clean()

    assert set(error.value.message_dict) == {"allocatable", "taints"}


def test_member_json_fields_are_validated_on_full_clean():
    member = Member(
        namespace="ml",
        name="train-0",
        requests={"nvidia.com/gpu": True},
        tolerations=[{"operator": "Like"}],
        affinity=[{"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}],
        node_selector={"zone": 1},
    )

    with pytest.raises(ValidationError) as error:
        member.full_clean()

    assert set(error.value.message_dict) == {"requests", "tolerations", "affinity", "node_selector"}


def test_history_is_append_only():
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1)
    cycle = SchedulingCycle.objects.create(pods_considered=3, pods_bound=1, epoch=7, worker="worker@a")
    event = GangEvent.objects.create(gang=gang, kind=GangEventKind.CREATED, cycle=cycle)

    with pytest.raises(TypeError, match="append-only"):
        cycle.save()
    event.reason = "rewritten"
    with pytest.raises(TypeError, match="append-only"):
        event.save()


def test_an_event_kind_must_be_known():
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        GangEvent.objects.create(gang=gang, kind="exploded")


def test_the_publisher_finds_unpublished_events_and_marks_them():
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1)
    GangEvent.objects.bulk_create(GangEvent(gang=gang, kind=kind) for kind in ("created", "reserved"))

    marked = GangEvent.objects.filter(published_at__isnull=True).update(published_at="2026-11-23T00:00:00Z")

    assert marked == 2
    assert not GangEvent.objects.filter(published_at__isnull=True).exists()


def test_a_member_has_at_most_one_pending_bind():
    member = Member.objects.create(namespace="ml", name="train-0", phase=MemberPhase.PENDING)
    first = BindJournal.objects.create(epoch=1, member=member, node="gpu-a")
    with pytest.raises(IntegrityError), transaction.atomic():
        BindJournal.objects.create(epoch=1, member=member, node="gpu-b")

    BindJournal.objects.filter(pk=first.pk, state=BindState.PENDING).update(state=BindState.FAILED)
    BindJournal.objects.create(epoch=2, member=member, node="gpu-b")

    assert list(member.binds.values_list("state", flat=True)) == [BindState.FAILED, BindState.PENDING]
