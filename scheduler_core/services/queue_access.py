"""Who may submit to which queue (the rules are services/queues.py's docstring's), asked in one
query; and so which queues a submitter reads (``queues_visible``).

Every submission asks: which queue a gang naming ``declared`` in its namespace is charged to
(a Kueue LocalQueue resolves to its ClusterQueue), whether that queue exists, whether any queue
exists, whether it has access rows and whether one of them lists the submitter or one of their
groups, and whether it is a cohort or has children (work runs in leaves). Through the ORM that
was three to six queries and most of a submission's query-building time; here the facts come
in one statement written once, and the rules are applied to them in Python, in one place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q

from scheduler_core.engine.model import DEFAULT_QUEUE
from scheduler_core.models import LocalQueue, Queue, QueueAccess
from scheduler_core.reads.queue_figures import QueueFigures
from scheduler_core.specs.errors import DeclarationError

from .tenancy import CHANGE_ALL, Actor


@dataclass(frozen=True)
class QueueFacts:
    name: str  # the queue work is charged to: the declared name, or its LocalQueue's ClusterQueue
    found: bool  # a Queue row of that name exists
    any_queue: bool  # any Queue row exists (with none, queues are not in use)
    restricted: bool  # the queue has QueueAccess rows
    granted: bool  # one of them lists the user or one of the user's groups
    inner: bool  # the queue is a cohort or has children

    @property
    def allows(self) -> bool:
        if not self.found:
            return self.name == DEFAULT_QUEUE or not self.any_queue
        return not self.restricted or self.granted


def queue_facts(*, username: str, queue: str, namespace: str | None = None) -> QueueFacts:
    """The facts about ``queue`` for ``username``; with ``namespace``, ``queue`` is the name a
    gang of that namespace declares and is resolved through its LocalQueue first."""
    with connection.cursor() as cursor:
        cursor.execute(_facts_sql(), {"namespace": namespace, "queue": queue, "username": username})
        return QueueFacts(*cursor.fetchone())


def queue_allows(user, queue_name: str) -> bool:
    """Whether ``user`` (a User, or a tenancy ``Actor``) may submit work to ``queue_name``
    (already resolved: ``queue_for_gang``)."""
    if user.changes_all if isinstance(user, Actor) else user.has_perm(CHANGE_ALL):
        return True
    username = user.username if isinstance(user, Actor) else user.get_username()
    return queue_facts(username=username, queue=queue_name).allows


def queue_require(actor: Actor, namespace: str, declared_name: str, field: str) -> None:
    """Refuse work ``actor`` may not put in the queue it names, exactly as a missing queue; and
    work a submitter puts in a cohort or a queue with children (work runs in leaf queues)."""
    if actor.changes_all:
        return
    facts = queue_facts(username=actor.username, queue=declared_name, namespace=namespace)
    if not facts.allows:
        raise DeclarationError(field, f"queue {declared_name} not found")
    if facts.found and facts.inner:  # told only to whoever may use it
        raise DeclarationError(
            field,
            f"queue {declared_name} is not a leaf queue: name one of its children (work runs in leaves)",
        )


def queues_usable(username: str) -> set[str]:
    """The queues ``username`` may submit to by their access rows: those with none (open to every
    submitter) and those whose rows list the user or one of their groups. One query."""
    granted = Q(access__user__username=username) | Q(access__group__user__username=username)
    usable = Queue.objects.filter(Q(access__isnull=True) | granted)
    return set(usable.values_list("name", flat=True).distinct())


def queues_visible(
    figures: dict[str, QueueFigures], *, username: str, sees_all: bool
) -> dict[str, QueueFigures]:
    """The part of the tree a user reads, in the same order: everything for whoever sees all
    (operators, viewers); for a submitter the queues they may submit to and the ancestors of
    those, each listing only the children the submitter reads. The ancestors stay because a
    usable queue's ``path`` and ``parent`` name them anyway, and their max and usage are what
    may hold the submitter's work back (``QueueAtMax`` names them too); any other queue reads
    exactly as one that does not exist."""
    if sees_all:
        return figures
    seen: set[str] = set()
    for name in queues_usable(username):
        while name in figures and name not in seen:
            seen.add(name)
            name = figures[name].parent
    return {
        name: replace(entry, children=[child for child in entry.children if child in seen])
        for name, entry in figures.items()
        if name in seen
    }


@functools.cache
def _facts_sql() -> str:
    """``QueueFacts``' columns in one SELECT, names taken from the models."""
    user_model = get_user_model()
    groups = user_model._meta.get_field("groups")
    queue, local, access = Queue._meta.db_table, LocalQueue._meta.db_table, QueueAccess._meta.db_table
    users = user_model._meta.db_table
    username = user_model._meta.get_field(user_model.USERNAME_FIELD).column
    cluster_queue = LocalQueue._meta.get_field("cluster_queue").column
    parent = Queue._meta.get_field("parent").column
    user_groups = groups.m2m_db_table()
    return f"""
        WITH target AS (
            SELECT COALESCE(
                (SELECT cq.name FROM {local} lq JOIN {queue} cq ON cq.id = lq.{cluster_queue}
                 WHERE %(namespace)s::text IS NOT NULL
                   AND lq.namespace = %(namespace)s AND lq.name = %(queue)s LIMIT 1),
                %(queue)s
            ) AS name
        ),
        q AS (SELECT queue.id, queue.cohort FROM {queue} queue JOIN target ON queue.name = target.name),
        who AS (SELECT u.id FROM {users} u WHERE u.{username} = %(username)s)
        SELECT
            target.name,
            EXISTS (SELECT 1 FROM q),
            EXISTS (SELECT 1 FROM {queue}),
            EXISTS (SELECT 1 FROM {access} a JOIN q ON a.queue_id = q.id),
            EXISTS (
                SELECT 1 FROM {access} a JOIN q ON a.queue_id = q.id JOIN who ON TRUE
                WHERE a.user_id = who.id
                   OR a.group_id IN (
                       SELECT ug.{groups.m2m_reverse_name()} FROM {user_groups} ug
                       WHERE ug.{groups.m2m_column_name()} = who.id
                   )
            ),
            COALESCE((SELECT cohort FROM q), FALSE)
                OR EXISTS (SELECT 1 FROM {queue} child JOIN q ON child.{parent} = q.id)
        FROM target
    """
