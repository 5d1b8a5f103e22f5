"""A gang's deletion notice (scheduler_core/events.py): sent once its deletion commits, all the
notices of one transaction together, none for a deletion that was rolled back."""

from __future__ import annotations

import pytest
from django.db import transaction

from scheduler_core import events
from scheduler_core.models import Gang

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sent(monkeypatch) -> list[list[str]]:
    """The keys of each batch of notices sent, in order."""
    batches: list[list[str]] = []
    monkeypatch.setattr(
        events, "deleted_send", lambda payloads: batches.append([p["gang"] for p in payloads])
    )
    return batches


def gangs(*names: str) -> None:
    for name in names:
        Gang.objects.create(namespace="ml", name=name, min_member=1, submitter="alice")


def test_a_queryset_delete_sends_its_notices_in_one_batch_after_commit(sent):
    gangs("a", "b", "c")
    with transaction.atomic():
        Gang.objects.filter(namespace="ml").delete()
        assert sent == []  # not before the commit: the gangs may still come back
    assert sorted(sent[0]) == ["ml/a", "ml/b", "ml/c"]
    assert len(sent) == 1


def test_a_rolled_back_savepoint_sends_nothing_for_its_deletions(sent):
    gangs("kept", "gone")
    with transaction.atomic():
        Gang.objects.filter(name="gone").delete()
        try:
            with transaction.atomic():
                Gang.objects.filter(name="kept").delete()
                raise RuntimeError("roll the savepoint back")
        except RuntimeError:
            pass
    assert sent == [["ml/gone"]]
    assert Gang.objects.filter(name="kept").exists()


def test_a_rolled_back_transaction_sends_nothing(sent):
    gangs("kept")
    with pytest.raises(RuntimeError), transaction.atomic():
        Gang.objects.filter(name="kept").delete()
        raise RuntimeError("roll back")
    assert sent == []
