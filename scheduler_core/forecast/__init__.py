"""Start-time forecasts: when each pending gang will start, computed by running the engine
forward in virtual time. Plain Python + numpy like the engine: of scheduler_core it imports the
engine only (no Django, no database, no clock; a test checks it).

The API the service calls::

    forecasts = forecast(snapshot, now, config, sources={"ml/train": "learned", ...})
    f = forecasts["ml/train"]        # a GangForecast
    f.start_p10, f.start_p50, f.start_p90     # absolute times on the snapshot's timeline, or None
    f.status, f.note                 # "expected" | "later" (than the horizon) | "none", and why
    f.position_in_queue, f.position_in_local_queue, f.position_in_cluster   # from 0, as Kueue
    f.waiting_for                    # WaitingFor(reason, message): the engine's explanation
    forecasts.made_at, forecasts.horizon, forecasts.runs

    forecast(snapshot, now, config, sources=..., arrivals=Arrivals([Submission(...), ...], 3600))
                                     # the same, if the last hour's submissions repeat
    forecast_with(snapshot, now, config, gangs=[gang], pods=pods, sources=...)  # "if I submitted
                                     # this now": the same, with extra pending gangs (a dry run)

- ``snapshot``: the engine's ``Snapshot`` as the worker's snapshot builder gives it (running
  pods with ``started`` and ``duration`` = the estimate with the overrun rule), ``now`` its time;
- ``sources``: the source of each gang's runtime estimate; ``spreads`` (``spreads.py``): how far
  an estimate of each source may be from the truth;
- ``arrivals``: the submissions of a recent window, assumed to repeat (``arrivals.py``); without
  them a forecast assumes nothing more is submitted;
- how: ``make.py`` (the runs put together), ``future.py`` (one forward run), ``book.py`` (its
  pods and gangs), ``history.py`` (cycles runs share), ``room.py`` and
  ``window.py`` (the cycles and units a run may skip), ``positions.py`` (Kueue's positions),
  ``results.py`` (what comes out). docs/forecasts.md, "How forecasts are
  made", says what a forecast assumes.
"""

from .arrivals import Arrivals, Submission
from .make import HORIZON_S, MAX_CYCLES, QUANTILES, forecast, forecast_with
from .positions import Position, positions
from .results import EXPECTED, LATER, NONE, Forecasts, GangForecast, RunSummary, WaitingFor
from .spreads import DEFAULT_SPREADS, Spread

__all__ = [
    "DEFAULT_SPREADS",
    "Arrivals",
    "EXPECTED",
    "HORIZON_S",
    "LATER",
    "MAX_CYCLES",
    "NONE",
    "QUANTILES",
    "Forecasts",
    "GangForecast",
    "Position",
    "RunSummary",
    "Spread",
    "Submission",
    "WaitingFor",
    "forecast",
    "forecast_with",
    "positions",
]
