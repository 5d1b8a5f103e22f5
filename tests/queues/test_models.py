"""What the database itself refuses, whoever writes: a weight of 0, a queue its own parent, an
access row naming both or neither of a user and a group, two LocalQueues of one name."""

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from scheduler_core.models import LocalQueue, Member, Queue, QueueAccess

pytestmark = pytest.mark.django_db


def test_a_weight_of_zero_is_refused_by_the_database():
    with pytest.raises(IntegrityError), transaction.atomic():
        Queue.objects.create(name="ml", weight=0)


def test_a_queue_cannot_be_its_own_parent():
    queue = Queue.objects.create(name="ml")
    queue.parent = queue
    with pytest.raises(IntegrityError), transaction.atomic():
        queue.save()


def test_a_parent_with_children_cannot_be_deleted_under_them():
    parent = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=parent)
    with pytest.raises(ProtectedError):
        parent.delete()


def test_an_access_row_names_exactly_one_of_a_user_and_a_group(alice):
    queue = Queue.objects.create(name="ml")
    group = Group.objects.create(name="team")
    with pytest.raises(IntegrityError), transaction.atomic():
        QueueAccess.objects.create(queue=queue)
    with pytest.raises(IntegrityError), transaction.atomic():
        QueueAccess.objects.create(queue=queue, user=alice, group=group)
    QueueAccess.objects.create(queue=queue, user=alice)
    QueueAccess.objects.create(queue=queue, group=group)
    assert queue.access.count() == 2


def test_a_local_queue_name_is_unique_per_namespace():
    queue = Queue.objects.create(name="cq")
    LocalQueue.objects.create(namespace="team-a", name="main", cluster_queue=queue)
    LocalQueue.objects.create(namespace="team-b", name="main", cluster_queue=queue)
    with pytest.raises(IntegrityError), transaction.atomic():
        LocalQueue.objects.create(namespace="team-a", name="main", cluster_queue=queue)


def test_a_member_is_in_the_default_queue_unless_told():
    assert Member.objects.create(namespace="ml", name="p").queue == "default"
