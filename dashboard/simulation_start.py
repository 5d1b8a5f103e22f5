"""Starting a simulation run: validate its input, store it, and queue its Celery task.

Kept apart from ``simulations.py`` (paths, checks and the task's body) because the task module
imports that one: the views call this module, which calls both, and nothing imports it back.
"""

from __future__ import annotations

from django.db import transaction

from scheduler_core.simulation import DEFAULT_POLICIES, check_runtimes, get_policies
from scheduler_core.simulation.policies import with_overtake_limit

from .models import SimulationRun
from .simulations import cluster_check, trace_check
from .tasks import run_simulation


def simulation_run_create(
    *,
    user,
    shared: str | None,
    upload_name: str | None,
    upload_text: str | None,
    cluster: str,
    policies,
    overtake_limit_s: float | None = None,
    runtimes: str = "oracle",
) -> SimulationRun:
    """Validate, store the run, and queue its task once the row is committed.

    ``overtake_limit_s`` sets gangsched's queue order for this run (None: the engine's default),
    so an operator can see what another ``GANGSCHED_OVERTAKE_LIMIT_S`` would do before setting it.
    ``runtimes`` is what the engine is told of runtimes (``manage.py simulate --runtimes``), so
    the policies that read them can be judged on what a real cluster knows, not on the trace's truth.
    """
    trace = trace_check(shared=shared, upload_name=upload_name, upload_text=upload_text)
    cluster_check(cluster)
    check_runtimes(runtimes)  # a RuntimeModeError (a ValueError) names the modes
    chosen = get_policies(list(policies) or list(DEFAULT_POLICIES))
    if overtake_limit_s is not None:
        with_overtake_limit(chosen, overtake_limit_s)  # raises on a negative or infinite limit
    run = SimulationRun.objects.create(
        requested_by=user,
        trace_name=trace.name,
        trace_text="" if shared else upload_text,
        cluster_spec=cluster.strip(),
        policies=[policy.name for policy in chosen],
        overtake_limit_s=overtake_limit_s,
        runtimes=runtimes,
    )
    transaction.on_commit(lambda: run_simulation.delay(run.pk))
    return run
