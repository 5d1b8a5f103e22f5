"""Where a gang stands against its scheduling timeout: the one rule the engine follows
(``engine/actions/timeout.py``), said in the words the pages, the API and ``describe gang`` use.

The clock starts at the first cycle that could place one of the gang's members (its
``wait_started``): a NonStrict gang's first reservation, a Strict gang's first trial that placed
a member. This is when the peers start theirs (coscheduling's and Koordinator's Permit wait,
YuniKorn's first placeholder): a gang that holds nothing has nothing to give back, so a gang
none of whose members can be placed waits, without a timeout, for room (its explanation says
why). Once started, the gang times out ``wait_seconds`` later unless satisfied by then; a
retry, or losing its reservations to preemption or reclaim, stops the clock until a member can
be placed again. Checked by each cycle and by the timeout sweep (every few seconds), so a gang
times out at its deadline or up to one sweep after it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.utils import timezone

from scheduler_core.engine.model import INACTIVE_PHASES, GangPhase, TimeoutStyle
from scheduler_core.models import Gang

_INACTIVE = {phase.value for phase in INACTIVE_PHASES}


@dataclass(frozen=True)
class TimeoutState:
    """``state`` is one of:

    - ``none``: no timeout declared (it waits forever);
    - ``not_started``: declared, but no member could be placed yet: no clock;
    - ``counting``: the clock runs, ``deadline`` is when it times out;
    - ``overdue``: past the deadline, the next cycle or sweep times it out;
    - ``met``: satisfied: the timeout no longer applies;
    - ``fell_back``: a Soft gang that timed out and is scheduled pod by pod;
    - ``timed_out``: it timed out (Hard), ``waited`` says how long it had waited;
    - ``ended``: finished, failed or killed.
    """

    state: str
    wait_seconds: float | None
    style: str
    started: datetime | None = None
    deadline: datetime | None = None

    def remaining(self, now: datetime) -> float | None:
        return None if self.deadline is None else (self.deadline - now).total_seconds()

    def text(self, now: datetime) -> str:
        """One line, as ``describe gang`` prints it and the page shows it before its script runs."""
        after = f"{self.style} after {self.wait_seconds:g} s" if self.wait_seconds is not None else ""
        if self.state == "none":
            return "none: it waits for room as long as it takes"
        if self.state == "not_started":
            return f"{after}, counted from when a member can first be placed: no clock yet"
        if self.state == "counting":
            left = max(self.remaining(now) or 0, 0)
            return f"{after}: times out in {left:.0f} s (at {_clock(self.deadline)})"
        if self.state == "overdue":
            return f"{after}: due at {_clock(self.deadline)}, times out at the next cycle"
        if self.state == "met":
            return f"{after}: no longer applies (satisfied)"
        if self.state == "fell_back":
            return f"{after}: timed out, its pods are scheduled one by one"
        if self.state == "timed_out":
            return f"timed out ({after}); retry it to schedule it again"
        return f"{after or 'none'}: the gang has ended"


def _clock(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else "-"


def gang_timeout(gang: Gang, now: datetime) -> TimeoutState:
    """Where ``gang`` stands against its timeout at ``now`` (a database row: no query)."""
    wait, style = gang.wait_seconds, gang.style
    if gang.phase == GangPhase.TIMED_OUT.value:
        return TimeoutState("timed_out", wait, style, gang.wait_started)
    if gang.phase in _INACTIVE:
        return TimeoutState("ended", wait, style)
    if wait is None:
        return TimeoutState("none", wait, style)
    if gang.satisfied:
        return TimeoutState("met", wait, style, gang.wait_started)
    if gang.fallen_back and style == TimeoutStyle.SOFT.value:
        return TimeoutState("fell_back", wait, style, gang.wait_started)
    if gang.wait_started is None:
        return TimeoutState("not_started", wait, style)
    deadline = gang.wait_started + timedelta(seconds=wait)
    return TimeoutState("counting" if deadline > now else "overdue", wait, style, gang.wait_started, deadline)


def gang_timeout_api(gang: Gang) -> TimeoutState:
    """``gang_timeout`` for answers that may be cached until the gang changes: ``overdue`` is
    said as ``counting`` (the deadline says the rest), since it changes with the clock alone."""
    state = gang_timeout(gang, timezone.now())
    return replace(state, state="counting") if state.state == "overdue" else state
