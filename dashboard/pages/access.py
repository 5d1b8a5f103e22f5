"""Who sees and acts on which gang, for the pages: the API's rules (dashboard/api/permissions.py),
so a user sees on a page exactly what the API would show them."""

from __future__ import annotations

from django.http import Http404

from dashboard.api.selectors import gang_find
from scheduler_core.models import Gang

RETRY = "retry"
KILL = "kill"
ACTION_PERMISSIONS = {RETRY: "scheduler_core.retry_gang", KILL: "scheduler_core.kill_gang"}


def _get_gang_for_user(user, namespace: str, name: str) -> Gang:
    """The gang, or 404 when it does not exist or the user may not see it (the same answer)."""
    gang = gang_find(user=user, namespace=namespace, name=name)
    if gang is None:
        raise Http404(f"gang {namespace}/{name} not found")
    return gang


def can_act(user, gang: Gang, action: str) -> bool:
    """Retry and kill: on the user's own gang, or with the action's permission."""
    own = bool(gang.submitter) and gang.submitter == user.get_username()
    return own or user.has_perm(ACTION_PERMISSIONS[action])


def may_act_on_any(user, action: str) -> bool:
    """Whether to offer the action's buttons on lists without looking at each gang."""
    return user.has_perm(ACTION_PERMISSIONS[action])
