"""The data migration: every queue name gangs already use becomes an unlimited queue, so an
installation keeps working once queues are enforced."""

import importlib

import pytest
from django.apps import apps

from scheduler_core.models import Gang, Queue

pytestmark = pytest.mark.django_db

migration = importlib.import_module("scheduler_core.migrations.0014_queues")


def test_each_queue_name_in_use_becomes_an_unlimited_top_level_queue():
    for name, queue in [("a", "ml"), ("b", "ml"), ("c", "default"), ("d", "research")]:
        Gang.objects.create(namespace="ns", name=name, min_member=1, queue=queue)
    Queue.objects.create(name="research", weight=2)  # already there: left as it is

    migration.existing_queues_create(apps, None)

    rows = {q.name: q for q in Queue.objects.all()}
    assert set(rows) == {"ml", "research"}  # "default" stays implicit
    assert (rows["ml"].parent, rows["ml"].guarantee, rows["ml"].max, rows["ml"].weight) == (None, {}, {}, 1.0)
    assert rows["research"].weight == 2
