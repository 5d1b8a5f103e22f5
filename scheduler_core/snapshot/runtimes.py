"""What the engine believes a pod runs for (``engine.Pod.duration``).

A pod's own declared ``duration_seconds`` is taken as it is: it is the submitter's statement,
and on the simulated cluster the pod's true runtime (the kubelet ends it then), so the plan of
a gang that declares its runtime is what it always was. A pod without one gets its gang's
estimate (``Gang.runtime_estimate_s``), and once it has run longer than that, the overrun rule's
larger estimate (``engine/runtimes.overrun``): backfilling stops counting on its room at the old
end. A pod of no gang, or of a gang without an estimate, has no duration (it never ends, as far
as backfilling knows).
"""

from __future__ import annotations

from scheduler_core.engine.runtimes import Estimate, overrun


def pod_duration(
    declared: float | None,
    started: float | None,
    estimate_s: float | None,
    source: str,
    limit: float | None,
    now: float,
) -> float | None:
    if declared is not None:
        return declared
    if estimate_s is None or not source:
        return None
    estimate = Estimate(estimate_s, source)
    if started is not None:
        estimate = overrun(estimate, now - started, limit)
    return estimate.seconds
