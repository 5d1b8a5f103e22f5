"""How far a runtime estimate may be from the truth, per source of the estimate.

A forecast needs more than the estimate the engine plans with: it needs how wrong that figure
tends to be. The model is multiplicative: the true runtime is the estimate times a log-normal
factor, ``median * exp(sigma * Z)``, ``Z`` standard normal, never above ``cap`` times the
estimate when a cap is known (a ``limit`` is one: the pod is stopped there).

The widths are ours, chosen from what Tsafrir, Etsion and Feitelson ("Backfilling using
system-generated predictions rather than user runtime estimates", IEEE TPDS 18(6), 2007) found on
production logs: user-given limits overstate runtimes several times (the median job uses a small
fraction of its limit, so a limit's median factor is 1/3 and it is capped at 1), while the mean of
the last two runs of the same job (the ``learned`` source, their predictor) is much closer, most
often within a factor of two of the truth (``sigma`` 0.55: 80% of factors between 0.49 and 2.0).
A declared figure is the submitter's own statement of this very job (0.3: 0.68-1.47); a queue's
default knows nothing of the job (1.0: 0.28-3.6); a running gang past its estimate (``overrun``)
has shown its estimate wrong once (0.7). They are to be calibrated on gangsched's own history
(finished gangs' estimates against their runtimes); ``forecast(spreads=...)`` takes others.

A running pod has already run ``elapsed`` seconds, so its runtime is drawn from the factor's
distribution *given* that it is longer than ``elapsed`` (``Spread.runtime``): a pod half-way
through its estimate does not end "10% sooner than planned" in the past.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

from scheduler_core.engine.runtimes import DECLARED, DEFAULT, LEARNED, LIMIT, OVERRUN

_NORMAL = NormalDist()
#: Quantiles are kept inside (0, 1): the normal's inverse is infinite at the ends.
_EDGE = 1e-9


@dataclass(frozen=True, slots=True)
class Spread:
    """The factor true runtime / estimate: log-normal with this median and ``sigma``, at most
    ``cap`` (None: no cap)."""

    median: float = 1.0
    sigma: float = 0.0
    cap: float | None = None

    def __post_init__(self) -> None:
        if not self.median > 0 or not self.sigma >= 0 or (self.cap is not None and not self.cap > 0):
            raise ValueError(f"a spread needs median > 0, sigma >= 0 and cap > 0: {self!r}")

    def factor(self, quantile: float) -> float:
        """The factor at ``quantile`` (0.5: the median) of a pod that has not started."""
        z = _NORMAL.inv_cdf(min(max(quantile, _EDGE), 1 - _EDGE)) if self.sigma else 0.0
        value = self.median * math.exp(self.sigma * z)
        return min(value, self.cap) if self.cap is not None else value

    def runtime(self, estimate: float, quantile: float, elapsed: float = 0.0) -> float:
        """The runtime at ``quantile`` of a pod estimated at ``estimate`` seconds that has run
        ``elapsed`` seconds already: the quantile of the runtime's distribution given that it
        exceeds ``elapsed``. Never less than ``elapsed`` (a pod past its cap ends now)."""
        if estimate <= 0:
            return max(elapsed, 0.0)
        if elapsed <= 0 or not self.sigma:
            return max(estimate * self.factor(quantile), elapsed)
        below = _NORMAL.cdf((math.log(elapsed / estimate) - math.log(self.median)) / self.sigma)
        conditional = below + min(max(quantile, 0.0), 1.0) * (1.0 - below)
        z = _NORMAL.inv_cdf(min(max(conditional, _EDGE), 1 - _EDGE))
        value = estimate * self.median * math.exp(self.sigma * z)
        if self.cap is not None:
            value = min(value, estimate * self.cap)
        return max(value, elapsed)


DEFAULT_SPREADS: Mapping[str, Spread] = {
    DECLARED: Spread(median=1.0, sigma=0.3),
    LEARNED: Spread(median=1.0, sigma=0.55),
    LIMIT: Spread(median=1 / 3, sigma=0.9, cap=1.0),
    DEFAULT: Spread(median=1.0, sigma=1.0),
    OVERRUN: Spread(median=1.0, sigma=0.7),
}

#: The spread of a gang the caller gave no source for: as little is known as of a default.
UNKNOWN = DEFAULT
