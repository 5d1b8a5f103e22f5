"""Who sees and acts on which gang.

- Anonymous users get 401 everywhere but the token endpoint (settings: IsAuthenticated, with
  token authentication first so the answer carries ``WWW-Authenticate``).
- Every authenticated user may submit; a submitter sees only the gangs they submitted, and other
  people's gangs are 404 to them (not 403: a name alone must not reveal that a gang exists).
- Users with ``scheduler_core.view_gang`` (the ``operators`` group, created by
  dashboard/migrations/0001, and superusers) see every gang.
- Queues: whoever sees every gang, or may view or change queues, reads the whole tree; a
  submitter reads the queues they may submit to and their ancestors (``queues_visible``).
- Retry and kill are permissions of their own, checked per action: allowed on a gang the user
  submitted, or with ``scheduler_core.retry_gang`` / ``kill_gang`` on any gang they can see.
  DjangoModelPermissions is not used: it would map the POST of an action to ``add_gang``.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from rest_framework.permissions import BasePermission

from scheduler_core.models import Gang
from scheduler_core.reads.queue_figures import QueueFigures, own_pod_counts, queue_figures
from scheduler_core.reads.redaction import Viewer
from scheduler_core.services.queue_access import queues_visible
from scheduler_core.services.tenancy import CHANGE_ALL, VIEW_ALL, Actor

OPERATORS_GROUP = "operators"
VIEW_ALL_GANGS = "scheduler_core.view_gang"
#: Any of these reads every queue (operators, viewers, queue administrators).
SEES_ALL_QUEUES = (CHANGE_ALL, VIEW_ALL, "scheduler_core.change_queue", "scheduler_core.view_queue")
# ModelBackend with the sign-in limits (dashboard/signin.py); its permissions are ModelBackend's.
MODEL_BACKEND = "dashboard.signin.SignInBackend"


def sees_all_gangs(user) -> bool:
    """``user.has_perm(VIEW_ALL_GANGS)``, asked in one query instead of two.

    Every gang list, event feed and socket asks this, and ModelBackend loads all of a user's
    permissions and then all of their groups' to answer it. With ModelBackend the only backend
    the answer is the same (active superusers have every permission, inactive users none);
    another backend, or permissions already loaded for this request, go through ``has_perm``.
    """
    known = getattr(user, "_gangsched_sees_all", None)  # asked already in this request
    if known is None:
        known = user._gangsched_sees_all = VIEW_ALL_GANGS in holds(user, (VIEW_ALL_GANGS,))
    return known


def viewer_of(user) -> Viewer:
    """What ``user`` may read of explanations and history that name other work
    (``scheduler_core/reads/redaction.py``): everything with ``view_gang``, else their own."""
    if user is None or not user.is_authenticated:
        return Viewer("", sees_all=False)
    return Viewer(user.get_username(), sees_all=sees_all_gangs(user))


def queue_figures_visible(user) -> dict[str, QueueFigures]:
    """The queue tree's live figures as ``user`` may read them (``queues_visible``). The
    resource amounts are the queue's, the same for everyone; the counts of pods (pending,
    stalled) are of the pods the user may see: a submitter's own."""
    figures = queues_visible(
        queue_figures(), username=user.get_username(), sees_all=bool(holds(user, SEES_ALL_QUEUES))
    )
    if figures and not sees_all_gangs(user):
        own = own_pod_counts(figures, user.get_username())
        for name, entry in figures.items():
            entry.pending_pods, entry.stalled_pods = own.get(name, (0, 0))
    return figures


def holds(user, perms: tuple[str, ...]) -> set[str]:
    """Which of ``perms`` the user has, as ``has_perm`` answers, in one query (see above)."""
    if list(settings.AUTHENTICATION_BACKENDS) != [MODEL_BACKEND] or hasattr(user, "_perm_cache"):
        return {perm for perm in perms if user.has_perm(perm)}
    if not user.is_active or user.is_anonymous:
        return set()
    if user.is_superuser:
        return set(perms)
    # The answers the token cache keeps for this user (dashboard/api/authentication.py), if any.
    known = getattr(user, "_gangsched_perms", None)
    if known is not None and all(perm in known for perm in perms):
        return {perm for perm in perms if known[perm]}
    params = {"user": user.pk}
    for index, perm in enumerate(perms):
        params[f"app_label{index}"], params[f"codename{index}"] = perm.split(".")
    with connection.cursor() as cursor:
        cursor.execute(_granted_sql(len(perms)), params)
        answers = dict(zip(perms, cursor.fetchone(), strict=True))
    if known is not None:
        known.update(answers)
    return {perm for perm, held in answers.items() if held}


def api_actor(user) -> Actor:
    """``Actor.of(user)`` without loading every permission of the user and their groups."""
    held = holds(user, (CHANGE_ALL, VIEW_ALL))
    changes_all = CHANGE_ALL in held
    return Actor(user.get_username(), changes_all, changes_all or VIEW_ALL in held)


@functools.cache
def _granted_sql(count: int) -> str:
    """Whether a user holds each of ``count`` permissions directly or through a group:
    ModelBackend's question, in SQL written once (the ORM compiled the same four joins again on
    every request); one column per permission."""
    user_meta, group_meta = get_user_model()._meta, Group._meta
    direct = user_meta.get_field("user_permissions")
    groups = user_meta.get_field("groups")
    group_permissions = group_meta.get_field("permissions")
    permission, content_type = Permission._meta.db_table, ContentType._meta.db_table

    def wanted(link, i: int) -> str:  # joins from a link table x to the wanted permission
        return (
            f"JOIN {permission} p ON p.id = x.{link.m2m_reverse_name()} "
            f"JOIN {content_type} ct ON ct.id = p.content_type_id "
            f"WHERE ct.app_label = %(app_label{i})s AND p.codename = %(codename{i})s"
        )

    def granted(i: int) -> str:
        return (
            f"EXISTS (SELECT 1 FROM {direct.m2m_db_table()} x {wanted(direct, i)} "
            f"AND x.{direct.m2m_column_name()} = %(user)s) "
            f"OR EXISTS (SELECT 1 FROM {groups.m2m_db_table()} ug "
            f"JOIN {group_permissions.m2m_db_table()} x "
            f"ON x.{group_permissions.m2m_column_name()} = ug.{groups.m2m_reverse_name()} "
            f"{wanted(group_permissions, i)} AND ug.{groups.m2m_column_name()} = %(user)s)"
        )

    return "SELECT " + ", ".join(f"({granted(i)})" for i in range(count))


class _GangActionPermission(BasePermission):
    permission: str = ""

    def has_object_permission(self, request, view, obj: Gang) -> bool:
        user = request.user
        own = bool(obj.submitter) and obj.submitter == user.get_username()
        return own or user.has_perm(self.permission)


class CanRetryGang(_GangActionPermission):
    message = "You may retry only your own gangs unless you have the retry_gang permission."
    permission = "scheduler_core.retry_gang"


class CanKillGang(_GangActionPermission):
    message = "You may kill only your own gangs unless you have the kill_gang permission."
    permission = "scheduler_core.kill_gang"
