"""PNG plots of a comparison, every policy on the same axes (matplotlib, Agg: no display needed).

* ``utilization.png``: share of the main resource (GPUs if the cluster has any) held by running
  jobs, over virtual time.
* ``queue.png``: jobs submitted and not running yet, over virtual time.
* ``jct.png``: the distribution (CDF) of job completion times of finished jobs.
* ``comparison.png``: the three side by side, for docs/trace-replay.md and the run's page.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .outcome import Replay, main_resource

PLOTS = ("comparison.png", "utilization.png", "queue.png", "jct.png")
MAX_POINTS = 2000


def _pyplot():
    """matplotlib's pyplot on the Agg backend, imported when a plot is drawn: about a second,
    which whatever imports this module for ``PLOTS`` (the web server's URLs) does not pay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_plots(replays: list[Replay], out: Path, title: str) -> list[Path]:
    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    panels = (_utilization, _queue, _jct)
    written = []
    for name, panel in zip(PLOTS[1:], panels, strict=True):
        figure, axes = plt.subplots(figsize=(7, 4))
        panel(axes, replays)
        figure.suptitle(title, fontsize=9)
        written.append(_save(figure, out / name))
    figure, row = plt.subplots(1, 3, figsize=(18, 4.5))
    for axes, panel in zip(row, panels, strict=True):
        panel(axes, replays)
    figure.suptitle(title, fontsize=10)
    written.insert(0, _save(figure, out / PLOTS[0]))
    return written


def _save(figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    _pyplot().close(figure)
    return path


def _hours(times: list[float]) -> np.ndarray:
    return np.asarray(times, dtype=float) / 3600.0


def _thin(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(x) <= MAX_POINTS:
        return x, y
    keep = np.linspace(0, len(x) - 1, MAX_POINTS).astype(int)
    return x[keep], y[keep]


def _utilization(axes, replays: list[Replay]) -> None:
    resource = main_resource(replays[0].resources)
    column = replays[0].resources.index(resource)
    for replay in replays:
        line = replay.timeline
        if not line.times:
            continue
        share = np.array([row[column] for row in line.useful]) / replay.capacity[column]
        axes.step(*_thin(_hours(line.times), share), where="post", label=replay.policy, linewidth=1)
    axes.set(title=f"{resource} held by running jobs", xlabel="virtual time (h)", ylabel="share")
    axes.set_ylim(0, 1.05)
    axes.legend(fontsize=8)


def _queue(axes, replays: list[Replay]) -> None:
    for replay in replays:
        line = replay.timeline
        axes.step(
            *_thin(_hours(line.times), np.asarray(line.queued)),
            where="post",
            label=replay.policy,
            linewidth=1,
        )
    axes.set(title="jobs waiting (submitted, not running)", xlabel="virtual time (h)", ylabel="jobs")
    axes.legend(fontsize=8)


def _jct(axes, replays: list[Replay]) -> None:
    for replay in replays:
        finished = ~np.isnan(replay.finish)
        jct = np.sort(replay.finish[finished] - replay.submit[finished])
        if jct.size:
            axes.step(jct / 60.0, np.arange(1, jct.size + 1) / jct.size, where="post", label=replay.policy)
    axes.set(title="job completion time (finished jobs)", xlabel="JCT (min, log)", ylabel="CDF")
    axes.set_xscale("log")
    axes.legend(fontsize=8)
