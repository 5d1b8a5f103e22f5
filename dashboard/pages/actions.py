"""Retry and kill from the pages, one gang or many: each gang goes through the operator service
on its own, so one refusal (wrong phase, no permission, gone) never blocks the others, and the
operator gets one line per gang saying what happened."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.api.selectors import gang_find
from scheduler_core.services.operator import GangActionError, gang_kill, gang_retry

from .access import KILL, RETRY, can_act

PAST = {RETRY: "retried", KILL: "killed"}
NOT_FOUND = "{key}: not found"
FORBIDDEN = "{key}: you may {action} only your own gangs without the {action}_gang permission"


@dataclass(frozen=True)
class ActionResult:
    key: str
    ok: bool
    message: str


def gangs_act(*, user, action: str, keys: list[str]) -> list[ActionResult]:
    """Apply ``action`` to each ``namespace/name`` key the user can see, in the order given."""
    service = gang_retry if action == RETRY else gang_kill
    by = user.get_username()
    results = []
    for key in dict.fromkeys(keys):  # a key posted twice is acted on once
        namespace, _, name = key.partition("/")
        gang = gang_find(user=user, namespace=namespace, name=name)
        if gang is None:
            results.append(ActionResult(key, False, NOT_FOUND.format(key=key)))
        elif not can_act(user, gang, action):
            results.append(ActionResult(key, False, FORBIDDEN.format(key=key, action=action)))
        else:
            try:
                service(gang=gang, by=by)
            except GangActionError as error:
                # Pressed twice, or the scheduler moved it first: say so, change nothing.
                results.append(ActionResult(key, False, str(error)))
            else:
                results.append(ActionResult(key, True, f"{key}: {PAST[action]}"))
    return results
