"""Expected runtimes: what a gang is believed to run for, and why.

Backfilling and least-work-first need a runtime for every gang, but no cluster knows runtimes in
advance. A gang's *estimate* comes from the first of these sources that applies:

1. ``declared``: the submitter's own figure (``gangsched.io/duration-seconds``);
2. ``learned``: the mean of the last two finished runtimes of gangs of the same submitter, queue
   and shape (EASY++'s predictor: Tsafrir, Etsion and Feitelson, "Backfilling using
   system-generated predictions rather than user runtime estimates", IEEE TPDS 18(6), 2007),
   capped at the limit: a job is killed there, so it never runs longer;
3. ``limit``: the kill limit (``activeDeadlineSeconds`` and its equivalents); a limit overstates
   runtimes several times (Tsafrir et al.; Slurm's users say the same of ``--time``), so it is
   the learned value's cap and its fallback, not its rival;
4. ``default``: the queue's default runtime, else the installation's.

None of them: no estimate, and the gang never ends as far as backfilling knows.

A running gang that outlives its estimate is not about to end: ``overrun`` gives it a larger one
(the estimate doubled until it exceeds the elapsed time, at most the limit while the limit is
still ahead), so the backfill plan stops counting on room that does not come.

The API (the service and the trace replay both use exactly this):

- ``Estimate(seconds, source)`` and the sources ``DECLARED``, ``LEARNED``, ``LIMIT``, ``DEFAULT``,
  ``OVERRUN`` (an estimate ``overrun`` enlarged by doubling);
- ``name_stem(name)``: a name without its generated suffixes; ``shape_key(submitter, queue,
  name, size, requests)``: the key runtimes are learned under;
- ``learned_runtime(runtimes)``: the mean of the last two of a sequence, oldest first;
  ``RuntimeHistory``: ``record(key, seconds)``, ``learned(key)``;
- ``estimate(declared=, limit=, learned=, default=)``: the precedence;
- ``overrun(estimate, elapsed, limit)``: the estimate of a gang ``elapsed`` seconds into its run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

DECLARED = "declared"
LEARNED = "learned"
LIMIT = "limit"
DEFAULT = "default"
OVERRUN = "overrun"
SOURCES = (DECLARED, LEARNED, LIMIT, DEFAULT, OVERRUN)

#: Finished runtimes EASY++ averages.
LEARNED_FROM = 2


@dataclass(frozen=True, slots=True)
class Estimate:
    seconds: float
    source: str

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"unknown runtime source {self.source!r}")
        if not self.seconds >= 0:  # also refuses NaN
            raise ValueError(f"a runtime estimate is a non-negative number of seconds, not {self.seconds!r}")


# ---------------------------------------------------------------- shape keys

# A trailing name segment that a controller or a script generated rather than a person chose:
# an index or a timestamp (digits), generateName's 5 characters (Kubernetes' alphabet has no
# vowels and no 0, 1, 3), a hash (hex of 6 or more with a digit); or a whole UUID.
_GENERATED = re.compile(r"\d+|[bcdfghjklmnpqrstvwxz2456789]{5}|(?=[0-9a-f]*\d)[0-9a-f]{6,}")
_UUID = re.compile(r"(.)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def name_stem(name: str) -> str:
    """``name`` without trailing generated segments: ``bert-ft-7`` and ``bert-ft-x8k2q`` are both
    ``bert-ft``; a name made only of such segments keeps its first one."""
    parts = _UUID.sub(r"\1", name).split("-")
    while len(parts) > 1 and (not parts[-1] or _GENERATED.fullmatch(parts[-1])):
        parts.pop()
    return "-".join(parts)


def shape_key(submitter: str, queue: str, name: str, size: int, requests: Iterable[Mapping[str, int]]) -> str:
    """The key runtimes are learned under: who submitted it, to which queue, its name's stem, its
    size (``minMember``) and its pods' distinct requests (canonical integers). A fixed-length
    digest, so it can be stored and indexed; equal inputs give equal keys in every process."""
    shapes = sorted({json.dumps(dict(sorted(r.items())), separators=(",", ":")) for r in requests})
    text = json.dumps([submitter, queue, name_stem(name), int(size), shapes], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- learning


def learned_runtime(runtimes: Sequence[float]) -> float | None:
    """EASY++'s prediction from finished runtimes (oldest first): the mean of the last two, the
    one if there is one, None if none."""
    last = list(runtimes)[-LEARNED_FROM:]
    return sum(last) / len(last) if last else None


class RuntimeHistory:
    """The last finished runtimes per key, in memory (the trace replay's; the service reads the
    same from finished gangs in the database)."""

    def __init__(self) -> None:
        self._runs: dict[Hashable, deque[float]] = {}

    def record(self, key: Hashable, seconds: float) -> None:
        if not seconds >= 0:
            raise ValueError(f"a runtime is a non-negative number of seconds, not {seconds!r}")
        self._runs.setdefault(key, deque(maxlen=LEARNED_FROM)).append(float(seconds))

    def learned(self, key: Hashable) -> float | None:
        runs = self._runs.get(key)
        return None if runs is None else learned_runtime(runs)


# ---------------------------------------------------------------- precedence and overrun


def estimate(
    *,
    declared: float | None = None,
    limit: float | None = None,
    learned: float | None = None,
    default: float | None = None,
) -> Estimate | None:
    """The estimate from what is known: declared > learned (capped at the limit) > limit >
    default. A declared figure is taken as it is, even above the limit: it is the submitter's
    statement, and the simulated cluster runs a pod exactly that long."""
    if declared is not None:
        return Estimate(float(declared), DECLARED)
    if learned is not None:
        if limit is not None and learned > limit:
            return Estimate(float(limit), LIMIT)
        return Estimate(float(learned), LEARNED)
    if limit is not None:
        return Estimate(float(limit), LIMIT)
    if default is not None:
        return Estimate(float(default), DEFAULT)
    return None


def overrun(estimate: Estimate, elapsed: float, limit: float | None = None) -> Estimate:
    """The estimate of a gang running for ``elapsed`` seconds: unchanged while ``elapsed`` has
    not passed it; past it, the estimate doubled as many times as needed to exceed ``elapsed``
    (a step that stays put between doublings, so the plan does not move every cycle), but never
    beyond a limit that is still ahead (the gang is killed there). Past the limit too (the
    cluster has not stopped it yet), doubling alone. An estimate of 0 doubles from 1 s."""
    if elapsed <= estimate.seconds:
        return estimate
    seconds = max(estimate.seconds, 1.0)
    while seconds <= elapsed:
        seconds *= 2
    if limit is not None and elapsed < limit < seconds:
        return Estimate(float(limit), LIMIT)
    return Estimate(seconds, OVERRUN)
