"""A gang's expected runtime as the commands, the API and the pages say it."""

from __future__ import annotations

from scheduler_core.engine.quantity import display_duration
from scheduler_core.engine.runtimes import DECLARED, DEFAULT, LEARNED, LIMIT, OVERRUN
from scheduler_core.models import Gang

#: Why the figure is what it is, one phrase per source.
SOURCE_TEXT = {
    DECLARED: "declared (gangsched.io/duration-seconds)",
    LEARNED: "learned: the mean of its submitter's last two runs of this job",
    LIMIT: "its limit (activeDeadlineSeconds)",
    DEFAULT: "its queue's default",
    OVERRUN: "doubled: it ran past its estimate",
}


def gang_runtime(gang: Gang) -> dict:
    """The estimate the scheduler works with now (``Gang.runtime_estimate``), its source, the
    limit, and one line of text."""
    believed = gang.runtime_estimate
    limit = gang.runtime_limit_s
    if believed is None:
        text = "<unknown> (nothing declared, learned, limited or defaulted: it never ends, to backfilling)"
    else:
        text = f"{display_duration(believed.seconds)}, {SOURCE_TEXT[believed.source]}"
    if limit is not None and (believed is None or believed.source != LIMIT):
        text += f"; limit {display_duration(limit)}"
    return {
        "seconds": None if believed is None else believed.seconds,
        "source": None if believed is None else believed.source,
        "limit_seconds": limit,
        "text": text,
    }
