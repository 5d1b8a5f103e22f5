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


def test_existing_pods_get_the_queue_their_keys_name():
    from scheduler_core.models import Member

    Member.objects.create(namespace="ns", name="k", labels={"kueue.x-k8s.io/queue-name": "main"})
    Member.objects.create(namespace="ns", name="v", annotations={"scheduling.volcano.sh/queue-name": "ml"})
    Member.objects.create(namespace="ns", name="none")

    migration.member_queues_backfill(apps, None)

    assert dict(Member.objects.values_list("name", "queue")) == {"k": "main", "v": "ml", "none": "default"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_itself_on_a_database_of_before_queues():
    """Back to 0013 (no queue tables), a gang and a pod as they were, then forward again."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([("scheduler_core", "0013_cycle_pending_demand")])
    old = executor.loader.project_state([("scheduler_core", "0013_cycle_pending_demand")]).apps
    old.get_model("scheduler_core", "Gang").objects.create(namespace="ns", name="g", min_member=1, queue="ml")
    old.get_model("scheduler_core", "Member").objects.create(
        namespace="ns", name="p", labels={"kueue.x-k8s.io/queue-name": "team"}
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from scheduler_core.models import Member

    assert list(Queue.objects.values_list("name", "max", "parent")) == [("ml", {}, None)]
    assert Member.objects.get(name="p").queue == "team"
