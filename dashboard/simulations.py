"""Simulation runs: where traces and plots live, checking a new run's input, and running it (the
task's body); starting one (which queues the task) is ``simulation_start.py``.

The page and the API validate with the same functions (``trace_check``, ``cluster_check``), so
a bad cluster spec reads the same in a form error and in a 400.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from scheduler_core.simulation import (
    POLICIES,
    ClusterSpecError,
    ReplayOptions,
    TraceError,
    compare,
    get_policies,
    load_cluster,
    load_trace,
    parse_trace,
    write_outputs,
)
from scheduler_core.simulation.plots import PLOTS
from scheduler_core.simulation.policies import with_overtake_limit
from scheduler_core.simulation.trace_files import find_trace, trace_files

from .models import SimulationRun

MAX_UPLOAD_BYTES = 5 * 2**20
#: Progress is written at most this often (seconds): a replay reports every 100 jobs.
PROGRESS_EVERY_S = 1.0
POLICY_NAMES = tuple(POLICIES)
#: The largest queue-order limit a run accepts (about 31,700 years: no bound in practice).
MAX_OVERTAKE_LIMIT_S = 1e12


def plots_root() -> Path:
    """GANGSCHED_SIMULATIONS_DIR, else MEDIA_ROOT, else <repo>/media (the web process and the
    workers must agree, hence an environment variable that both inherit)."""
    configured = os.environ.get("GANGSCHED_SIMULATIONS_DIR") or getattr(settings, "MEDIA_ROOT", "")
    return Path(configured) if configured else settings.BASE_DIR / "media"


def plot_dir(run: SimulationRun) -> Path:
    return plots_root() / "simulations" / str(run.pk)


def shared_traces() -> list[str]:
    """The job traces of the trace directories (trace_files.py; node lists and other files are not
    offered)."""
    names = []
    for path in trace_files("*.csv"):
        try:
            load_trace(path)
        except TraceError:
            continue
        names.append(path.name)
    return names


def trace_check(*, shared: str | None, upload_name: str | None, upload_text: str | None):
    """The trace of a new run: one of the shared ones, or an uploaded CSV; ValueError says why not."""
    if bool(shared) == (upload_text is not None):
        raise ValueError("give either a shared trace or an uploaded CSV, not both or neither")
    if shared:
        if shared not in shared_traces():
            raise ValueError(f"unknown shared trace {shared!r}: choose among {', '.join(shared_traces())}")
        return load_trace(find_trace(shared))
    if len(upload_text.encode()) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the uploaded trace is larger than {MAX_UPLOAD_BYTES // 2**20} MiB")
    try:
        return parse_trace(upload_text, upload_name or "upload.csv")
    except TraceError as error:
        raise ValueError(str(error)) from error


def cluster_check(spec: str):
    """A spec, a preset, or the name of a node list in a trace directory; ValueError says why not."""
    try:
        return load_cluster(_resolve(spec))
    except ClusterSpecError as error:
        raise ValueError(str(error)) from error


def _resolve(spec: str) -> str:
    spec = spec.strip()
    if spec.endswith(".csv") and "/" not in spec:
        try:
            return str(find_trace(spec))
        except FileNotFoundError:
            present = ", ".join(path.name for path in trace_files("*.csv"))
            raise ClusterSpecError(f"no node list {spec!r} among the traces ({present})") from None
    return spec


def simulation_run_execute(run_id: int) -> SimulationRun:
    """Replay the run's trace under its policies (one process: Celery's children cannot fork)."""
    run = SimulationRun.objects.get(pk=run_id)
    if run.done:
        return run  # a redelivered task: the run already ended
    run.status, run.started, run.progress, run.error = SimulationRun.Status.RUNNING, timezone.now(), 0.0, ""
    run.save(update_fields=["status", "started", "progress", "error"])
    try:
        if run.trace_text:
            trace = parse_trace(run.trace_text, run.trace_name)
        else:
            trace = load_trace(find_trace(run.trace_name))
        cluster = load_cluster(_resolve(run.cluster_spec))
        policies = get_policies(run.policies)
        if run.overtake_limit_s is not None:
            policies = with_overtake_limit(policies, run.overtake_limit_s)
        options = ReplayOptions(runtimes=run.runtimes)
        comparison = compare(trace, cluster, policies, options, processes=1, progress=_reporter(run))
        results, plots = write_outputs(comparison, plot_dir(run))
    except Exception as error:  # a bad stored trace, a full disk: the run says so instead of hanging
        run.status, run.error, run.finished = SimulationRun.Status.FAILED, str(error), timezone.now()
        run.save(update_fields=["status", "error", "finished"])
        raise
    run.results, run.plots = results, [path.name for path in plots if path.name in PLOTS]
    run.status, run.progress, run.finished = SimulationRun.Status.SUCCEEDED, 1.0, timezone.now()
    run.save(update_fields=["results", "plots", "status", "progress", "finished"])
    return run


def _reporter(run: SimulationRun):
    last = [0.0]

    def report(fraction: float) -> None:
        now = timezone.now().timestamp()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            SimulationRun.objects.filter(pk=run.pk).update(progress=min(max(fraction, 0.0), 1.0))

    return report
