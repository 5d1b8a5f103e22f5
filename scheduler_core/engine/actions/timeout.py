"""Timeouts: a gang not satisfied within its wait time gives back everything it holds.

1. Only gangs whose clock has started (a member could be placed: YuniKorn's first placeholder,
   Koordinator's first member at Permit) and that are still unsatisfied and active.
2. Their reservations are released, so the capacity goes back to the queue this very cycle.
3. Hard: the gang becomes TimedOut and is skipped until an operator retries it.
   Soft: it falls back to pod-at-a-time scheduling.
"""

from __future__ import annotations

import dataclasses

from ..decisions import Explanation, Reason, Transition, TransitionKind
from ..gang_map import may_time_out
from ..model import GangPhase, TimeoutStyle
from ..session import Session
from .release import release_held


def sweep(session: Session) -> None:
    if not session.config.timeouts:
        return
    # The gangs due, then in key order: most gangs of a large cluster run (sorting them all
    # cost a tenth of a second a cycle at 65,000 nodes). With a carry only those that may time
    # out are looked at (``gang_map.py``); nothing changes the gangs before this sweep.
    if session.may_time_out is not None:
        due = [key for key in session.may_time_out if _due(session.gangs[key], session.now)]
    else:
        due = [key for key, gang in session.gangs.items() if _due(gang, session.now)]
    for key in sorted(due):
        gang = session.gangs[key]
        waited = session.now - gang.wait_started
        reason = f"not satisfied within {gang.wait_seconds:g}s (waited {waited:g}s)"
        release_held(session, key, f"timeout: {reason}")
        if gang.style == TimeoutStyle.HARD:
            session.gangs[key] = dataclasses.replace(gang, phase=GangPhase.TIMED_OUT)
            session.result.transitions.append(Transition(key, TransitionKind.TIMED_OUT, reason))
            session.result.explanations[key] = Explanation(
                key,
                Reason.TIMED_OUT,
                f"timed out: {reason}; retry it to schedule again",
                {"waited_s": waited},
            )
        else:
            session.gangs[key] = dataclasses.replace(gang, fallen_back=True)
            session.result.transitions.append(
                Transition(key, TransitionKind.FELL_BACK, f"{reason}; scheduling its pods one by one")
            )


def _due(gang, now: float) -> bool:
    """May time out (``gang_map.may_time_out``) and is past its wait time."""
    return may_time_out(gang) and now - gang.wait_started >= gang.wait_seconds
