"""How far start-time forecasts were from the starts that came: the figures of ``--forecasts``.

A record is one forecast of one job: when it was made, its start's 10th, 50th and 90th
percentile (a point forecast gives the same three), and whether it was the job's first (made
at its submission, or at the first forecast after it: ``forecast_book.py``). Against the job's
actual start:

* the *wait* a forecast is judged on: from the submission for the first forecast, from the
  time it was made for a later one (what was still ahead); only waits over ``MIN_WAIT_S``
  count (a start seconds away says little either way);
* ``median_abs_error``: the median of |p50 - start| / wait (a forecast with no p50, a gang
  forecast to start later than the horizon or never, counts as infinitely wrong);
* ``median_signed_error``: the median of (p50 - start) / wait: below 0, forecasts are early;
* ``coverage``: the share of starts inside [p10, p90] (a p90 that is missing, "later than the
  horizon", is no upper bound);
* ``started_by_p50``: the share of starts at or before p50 (a point forecast made as an upper
  bound, such as Slurm's with users' limits, is judged by it);
* ``no_forecast``: records whose p50 was missing.

Per job size (``SIZES``: what all its workers ask of the main resource, GPUs if the cluster has
any, else cores): 1, 2-8, 9-32, 33 and more. The split differs from ``metrics.SIZES`` (9-64,
65+) because the traces measured have few gangs over 32 GPUs that wait: 33+ keeps them apart
from the 16- and 32-GPU ones, which are most of the big gangs that wait.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

#: Only waits longer than this (seconds) are judged.
MIN_WAIT_S = 300.0
#: (label, demand >, demand <=).
SIZES = (("1", 0.0, 1.0), ("2-8", 1.0, 8.0), ("9-32", 8.0, 32.0), ("33+", 32.0, math.inf))


@dataclass(frozen=True, slots=True)
class Record:
    job: int  # its index in the trace
    made_at: float
    p10: float | None
    p50: float | None
    p90: float | None
    first: bool  # the job's first forecast (at its submission)


def accuracy(
    records: Iterable[Record],
    submit: Sequence[float],
    start: Sequence[float],
    demand: Sequence[float],
    min_wait: float = MIN_WAIT_S,
) -> dict:
    """``at_submission`` (the first forecast of each job) and ``all`` (every forecast), each over
    all sizes and ``by_size``."""
    rows: dict[str, list[tuple]] = {"at_submission": [], "all": []}
    for record in records:
        began = float(start[record.job])
        if math.isnan(began):
            continue  # never started: nothing to judge it by
        since = float(submit[record.job]) if record.first else record.made_at
        wait = began - since
        if wait <= min_wait:
            continue
        row = (_error(record.p50, began, wait), _covered(record, began), record, wait, demand[record.job])
        rows["all"].append(row)
        if record.first:
            rows["at_submission"].append(row)
    return {"min_wait_s": min_wait, **{name: _by_size(found) for name, found in rows.items()}}


def _error(p50: float | None, began: float, wait: float) -> float:
    return math.inf if p50 is None else (p50 - began) / wait


def _covered(record: Record, began: float) -> bool:
    if record.p10 is None or record.p10 > began:
        return False
    return record.p90 is None or began <= record.p90


def _by_size(rows: list[tuple]) -> dict:
    out = _figures(rows)
    out["by_size"] = {
        label: _figures([row for row in rows if low < row[4] <= high]) for label, low, high in SIZES
    }
    return out


def _figures(rows: list[tuple]) -> dict:
    if not rows:
        return {"count": 0}
    errors = np.array([row[0] for row in rows])
    return {
        "count": len(rows),
        "median_abs_error": _round(float(np.median(np.abs(errors)))),
        "median_signed_error": _round(float(np.median(errors))),
        "coverage": round(sum(1 for row in rows if row[1]) / len(rows), 4),
        "started_by_p50": round(sum(1 for row in rows if _by_p50(row)) / len(rows), 4),
        "no_forecast": sum(1 for row in rows if row[2].p50 is None),
        "median_wait_s": round(float(np.median([row[3] for row in rows])), 1),
    }


def _by_p50(row: tuple) -> bool:
    return row[2].p50 is not None and row[0] >= 0


def _round(value: float) -> float | None:
    return None if not math.isfinite(value) else round(value, 4)
