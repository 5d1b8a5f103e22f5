"""The ``--forecasts`` figures as a table (``manage.py simulate`` prints it)."""

from __future__ import annotations

from .forecast_accuracy import SIZES


def format_forecasts(policy: str, figures: dict) -> str:
    """gangsched's forecasts and the baseline's, at submission, over all sizes and per size."""
    ours, theirs = figures["gangsched"], figures["baseline"]
    lines = [
        f"forecasts of {policy}: {figures['calls']} calls, {figures['forecasts']} forecasts, "
        f"{figures['cpu_seconds']:g} CPU s; waits over {ours['min_wait_s']:g} s, first forecast of each job",
        "| jobs | count | median abs. error / wait | median signed error | p10-p90 coverage "
        "| baseline: median abs. error | baseline: started by its estimate |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [("all", ours["at_submission"], theirs["at_submission"])]
    rows += [
        (label, ours["at_submission"]["by_size"][label], theirs["at_submission"]["by_size"][label])
        for label, _low, _high in SIZES
    ]
    for label, mine, base in rows:
        lines.append(
            f"| {label} | {mine['count']} | {_share(mine, 'median_abs_error')} | "
            f"{_share(mine, 'median_signed_error')} | {_share(mine, 'coverage')} | "
            f"{_share(base, 'median_abs_error')} | {_share(base, 'started_by_p50')} |"
        )
    return "\n".join(lines)


def _share(figures: dict, name: str) -> str:
    value = figures.get(name)
    return "-" if value is None else f"{value:.0%}"
