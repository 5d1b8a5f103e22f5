"""rows_insert stores exactly what bulk_create stores (gang_submit's members go through it)."""

import datetime as dt

import pytest
from django.db import DataError, transaction
from django.forms.models import model_to_dict

from scheduler_core.db.rows import rows_insert
from scheduler_core.models import Gang, Member, MemberPhase

pytestmark = pytest.mark.django_db

CREATED = dt.datetime(2026, 11, 25, 23, 0, 0, 123456, tzinfo=dt.UTC)


def members(prefix, gang):
    return [
        Member(namespace="ml", name=f"{prefix}-0", gang=gang, requests={"cpu": 500, "nvidia.com/gpu": 1}),
        Member(
            namespace="ml",
            name=f"{prefix}-1",
            gang=gang,
            submitter="alice",
            owner="gang/train",
            priority=-3,
            preemptible=False,
            duration_seconds=12.5,
            node_selector={"pool": "gpu", "quote": 'it\'s "x"'},
            tolerations=[{"key": "k", "operator": "Exists"}],
            affinity=[{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}],
            labels={"role": "ünïcode"},
            annotations={"note": "line\nbreak"},
            created=CREATED,
            started_at=CREATED,
            phase=MemberPhase.RUNNING,
            node="node-1",
            uid="u-1",
            queue="team-a",
        ),
        Member(namespace="ml", name=f"{prefix}-2", duration_seconds=float("inf")),
    ]


def stored(member):
    row = model_to_dict(Member.objects.get(pk=member.pk), exclude=["id", "name", "updated", "created"])
    return row


def test_rows_insert_stores_what_bulk_create_stores_and_sets_the_keys_in_order():
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1)
    ours, django = members("a", gang), members("b", gang)
    rows_insert(Member, ours)
    Member.objects.bulk_create(django)

    assert [m.pk for m in ours] == sorted(m.pk for m in ours)
    assert [Member.objects.get(pk=m.pk).name for m in ours] == ["a-0", "a-1", "a-2"]
    assert all(not m._state.adding for m in ours)
    for mine, theirs in zip(ours, django, strict=True):
        assert stored(mine) == stored(theirs)
    assert Member.objects.get(pk=ours[1].pk).created == CREATED
    assert Member.objects.get(pk=ours[2].pk).duration_seconds == float("inf")


def test_rows_insert_refuses_a_too_long_value_as_bulk_create_does():
    with pytest.raises(DataError), transaction.atomic():
        rows_insert(Member, [Member(namespace="n" * 64, name="x")])
    with pytest.raises(DataError), transaction.atomic():
        Member.objects.bulk_create([Member(namespace="n" * 64, name="x")])


def test_rows_insert_of_nothing_does_nothing():
    rows_insert(Member, [])
    assert not Member.objects.exists()
