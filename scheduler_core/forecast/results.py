"""What a forecast says, as plain frozen data the service can store and the pages can show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: ``GangForecast.status``: it starts within the horizon in the median run ...
EXPECTED = "expected"
#: ... it does not start before the horizon (or the cycle cap) there ...
LATER = "later"
#: ... or nothing in the forecast lets it start: it waits for pods without a runtime estimate
#: (they never end in a forecast), or it times out first.
NONE = "none"


@dataclass(frozen=True, slots=True)
class WaitingFor:
    """The engine's explanation of the gang at the forecast's first cycle (``Explanation``)."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class GangForecast:
    """One pending gang's forecast. Times are absolute, on the snapshot's timeline.

    ``start_p50`` is the start in the run at the median runtimes; ``start_p10`` and
    ``start_p90`` the earliest and latest start over the runs (None: not within the horizon, or
    never, in that run). ``note`` says why when ``status`` is not ``expected``."""

    gang: str
    status: str
    start_p10: float | None
    start_p50: float | None
    start_p90: float | None
    queue: str
    position_in_queue: int
    position_in_local_queue: int
    position_in_cluster: int
    waiting_for: WaitingFor | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One forward run: at which runtime quantile, why it stopped, when, after how many cycles."""

    quantile: float
    stopped_by: str
    end: float
    cycles: int


@dataclass(frozen=True, slots=True)
class Forecasts:
    made_at: float
    horizon: float  # absolute: nothing is forecast later than this
    gangs: Mapping[str, GangForecast] = field(default_factory=dict)
    runs: tuple[RunSummary, ...] = ()

    def __getitem__(self, gang: str) -> GangForecast:
        return self.gangs[gang]
