"""Who may change which gang and pod: the one rule every write path asks.

A submitter creates objects and changes only the gangs and pods they submitted; an operator
(``scheduler_core.change_gang``, which the ``operators`` group holds) changes anything. Whatever
a submitter may not change answers exactly as an object that does not exist (``NotFound``: the
API's 404 ``Not found.``, the same body as for a missing gang), and nothing is written. So a
name alone never tells one tenant what another holds, nor lets them alter it.

What stays visible, as in one Kubernetes namespace shared by two tenants, is that a key is taken:
creating ``ml/train`` when someone else holds it is refused (as not found) where a free key is
created. Nothing of the other object (its settings, members, owner) is ever shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from django.core.exceptions import PermissionDenied
from django.http import Http404

#: The permission that lets a user change every tenant's gangs and pods (operators).
CHANGE_ALL = "scheduler_core.change_gang"
#: The permission that lets a user see every tenant's gangs (operators, viewers).
VIEW_ALL = "scheduler_core.view_gang"


class NotFound(Http404):
    """Refused because the object is not the caller's: to the caller it does not exist."""


@dataclass(frozen=True)
class Actor:
    """Who asks for a change. ``changes_all``: an operator, or the server-side CLI;
    ``sees_all``: may be told that another's object exists (a viewer sees every gang)."""

    username: str
    changes_all: bool = False
    sees_all: bool = False

    @classmethod
    def of(cls, user) -> Actor:
        changes_all = user.has_perm(CHANGE_ALL)
        return cls(user.get_username(), changes_all, changes_all or user.has_perm(VIEW_ALL))

    @property
    def who(self) -> str:
        """The name history records: the user, or ``cli`` for the server-side commands."""
        return self.username or "cli"

    def may_change(self, submitter: str) -> bool:
        return self.changes_all or (bool(submitter) and submitter == self.username)

    def require(self, submitter: str, key: str) -> None:
        """Refuse a change of another's object: as not found, or, to a viewer who sees every
        gang anyway, as forbidden (the API's 403, as for a viewer's retry or kill)."""
        if self.may_change(submitter):
            return
        if self.sees_all:
            raise PermissionDenied(f"you may not change {key}")
        raise NotFound(f"{key} not found")

    def refuse_taken(self, submitter: str, key: str) -> NoReturn:
        """Refuse creating ``key``, which exists: "already exists" to whoever may see it, and
        to anyone else the same as for an object they may not change."""
        if not (self.sees_all or self.may_change(submitter)):
            raise NotFound(f"{key} not found")
        raise ValueError(f"{key} already exists")


#: The server-side commands (``manage.py apply``): whoever runs them runs the cluster.
CLI = Actor("", changes_all=True, sees_all=True)
