"""``forecast`` and ``forecast_with``: the forward runs put together, gang by gang."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from scheduler_core.engine.config import EngineConfig
from scheduler_core.engine.cycle import run_cycle
from scheduler_core.engine.model import Gang, Pod, Snapshot
from scheduler_core.engine.runtimes import DECLARED

from .arrivals import Arrivals, plan
from .future import CYCLES, NO_EVENT, Future, Run, Truth
from .history import History
from .positions import positions
from .results import EXPECTED, LATER, NONE, Forecasts, GangForecast, RunSummary, WaitingFor
from .room import Room
from .spreads import DEFAULT_SPREADS, UNKNOWN, Spread
from .window import Window

#: Nothing is forecast further than this after ``now`` (the trace replay's cap too).
HORIZON_S = 30 * 24 * 3600.0
#: Cycles one forward run may take at most.
MAX_CYCLES = 2000
#: Ends within this share of the time from ``now`` are handled together (a start is late by at
#: most this much of its wait): 0.1 takes the ends within 6 minutes of one an hour ahead.
RESOLUTION = 0.1
#: The runtime quantiles of the runs: every runtime at its source's 10th, 50th, 90th percentile.
QUANTILES = (0.1, 0.5, 0.9)


def forecast(
    snapshot: Snapshot,
    now: float,
    config: EngineConfig | None = None,
    *,
    sources: Mapping[str, str] | None = None,
    spreads: Mapping[str, Spread] | None = None,
    local_queues: Mapping[str, str] | None = None,
    horizon_s: float = HORIZON_S,
    max_cycles: int = MAX_CYCLES,
    quantiles: Sequence[float] = QUANTILES,
    tick: float = 1.0,
    resolution: float = RESOLUTION,
    arrivals: Arrivals | None = None,
) -> Forecasts:
    """When each pending gang of ``snapshot`` starts: if nothing new is submitted, or, with
    ``arrivals``, if the recent submissions repeat (``arrivals.py``).

    ``sources``: gang key -> the source of its runtime estimate (``engine.runtimes``: declared,
    learned, limit, default, overrun), for running and pending gangs; a gang it does not name is
    given the ``default`` source's spread, a pod of no gang the ``declared`` one. ``spreads``:
    source -> ``Spread`` (``DEFAULT_SPREADS``). ``local_queues``: gang key -> the queue name it
    declared, when that is a Kueue LocalQueue (``positions.py``)."""
    config = config or EngineConfig()
    spreads = {**DEFAULT_SPREADS, **(spreads or {})}
    where = positions(snapshot, config, local_queues)
    gangs = {gang.key: gang for gang in snapshot.gangs}
    watched = {key: gangs[key].min_member for key in where}
    first = run_cycle(snapshot, now, config)
    planned = plan(arrivals, snapshot, now, config, horizon=now + horizon_s, tick=tick, resolution=resolution)
    sources = {**(sources or {}), **planned.sources}
    window = Window(planned.snapshot(snapshot), config)
    history = History()  # cycles shared by runs whose pasts are the same (history.py)
    room = Room(snapshot.nodes, snapshot.pods)  # each run changes a copy
    futures = [
        Future(
            snapshot,
            now,
            config,
            _truth(sources, spreads, quantiles[0]),
            watched,
            quantile=quantiles[0],
            horizon=now + horizon_s,
            max_cycles=max_cycles,
            tick=tick,
            resolution=resolution,
            window=window,
            history=history,
            arrivals=planned.events,
            room=room,
        )
    ]
    # The other runs start where the first does, before it runs: copied, not built again.
    futures += [futures[0].fork(_truth(sources, spreads, q), q) for q in quantiles[1:]]
    runs = [future.run(first) for future in futures]
    median = min(range(len(runs)), key=lambda i: abs(runs[i].quantile - 0.5))
    out = {}
    for key, position in where.items():
        explanation = first.explanations.get(key)
        waiting = WaitingFor(explanation.reason.value, explanation.message) if explanation else None
        out[key] = _gang(key, runs, median, horizon_s, gangs[key]) | {
            "queue": position.queue,
            "position_in_queue": position.in_queue,
            "position_in_local_queue": position.in_local_queue,
            "position_in_cluster": position.in_cluster,
            "waiting_for": waiting,
        }
        out[key] = GangForecast(gang=key, **out[key])
    summaries = tuple(RunSummary(run.quantile, run.stopped_by, run.end, run.cycles) for run in runs)
    return Forecasts(made_at=now, horizon=now + horizon_s, gangs=out, runs=summaries)


def forecast_with(
    snapshot: Snapshot,
    now: float,
    config: EngineConfig | None = None,
    *,
    gangs: Iterable[Gang] = (),
    pods: Iterable[Pod] = (),
    **options,
) -> Forecasts:
    """``forecast`` of ``snapshot`` with ``gangs`` and their ``pods`` submitted now too: the
    answer to "when would it start if I submitted it now". ``snapshot`` itself is not changed
    (it is frozen; a new one is made). ``options`` are ``forecast``'s."""
    extra = dataclasses.replace(
        snapshot, gangs=snapshot.gangs + tuple(gangs), pods=snapshot.pods + tuple(pods)
    )
    return forecast(extra, now, config, **options)


def _gang(key: str, runs: list[Run], median: int, horizon_s: float, gang: Gang) -> dict:
    starts = [run.starts.get(key) for run in runs]
    known = [start for start in starts if start is not None]
    p50 = starts[median]
    fields = {
        "start_p10": min(known) if known else None,
        "start_p50": p50,
        "start_p90": max(known) if len(known) == len(starts) else None,
        "status": EXPECTED,
        "note": "",
    }
    if p50 is not None:
        return fields
    run = runs[median]
    if key in run.timed_out:
        fields["status"] = NONE
        fields["note"] = f"it times out first: {gang.wait_seconds:g} s after a member could be placed"
    elif run.stopped_by == NO_EVENT:
        fields["status"] = NONE
        fields["note"] = (
            "it waits for room that pods without a runtime estimate hold, and those never end in a forecast"
        )
    elif run.stopped_by == CYCLES:
        fields["status"] = LATER
        fields["note"] = f"later than the forecast's last cycle ({run.cycles} cycles, at {run.end:g})"
    else:
        fields["status"] = LATER
        fields["note"] = f"later than the horizon ({horizon_s / 86400:g} days)"
    return fields


def _truth(sources: Mapping[str, str], spreads: Mapping[str, Spread], quantile: float) -> Truth:
    """A pod's true runtime in the run at ``quantile``, given the seconds it has run."""
    memo: dict[tuple, float] = {}

    def truth(pod: Pod, elapsed: float) -> float:
        if pod.duration is None:
            return math.inf  # no estimate: it never ends, as backfilling assumes
        source = DECLARED if pod.gang is None else sources.get(pod.gang, UNKNOWN)
        spread = spreads.get(source, spreads[UNKNOWN])
        key = (pod.duration, source, elapsed)
        if key not in memo:
            memo[key] = spread.runtime(pod.duration, quantile, elapsed)
        return memo[key]

    return truth
