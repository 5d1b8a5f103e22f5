"""gangsched's own switches."""

import os

from scheduler_core.engine.config import (
    DEFAULT_OVERTAKE_LIMIT_S,
    DEFAULT_PREEMPT_DEPTH,
    DEFAULT_RECLAIM_DELAY_S,
    DEFAULT_REQUEUE_BACKOFF_MAX_S,
)

from .env import parse_cluster_backend, parse_count, parse_scheduler_aliases, parse_seconds

# Which cluster the scheduler binds pods on: "simulated" (in-process, the default) or "kubernetes".
CLUSTER_BACKEND = parse_cluster_backend(os.environ.get("CLUSTER_BACKEND"))
# The schedulerName pods set to be scheduled by gangsched on a real cluster.
GANGSCHED_SCHEDULER_NAME = os.environ.get("GANGSCHED_SCHEDULER_NAME", "gangsched")
# Other schedulerNames whose pods gangsched takes as its own, in place of that scheduler (which
# must not run): e.g. "volcano" where KubeRay or LeaderWorkerSet write it into the pods they make.
GANGSCHED_SCHEDULER_ALIASES = parse_scheduler_aliases(
    "GANGSCHED_SCHEDULER_ALIASES", os.environ.get("GANGSCHED_SCHEDULER_ALIASES"), GANGSCHED_SCHEDULER_NAME
)

# The Kubernetes backend (scheduler_core/cluster/kube/). The API server is found from KUBECONFIG
# (or ~/.kube/config), else the pod's service account. Client rate limits as kube-scheduler's
# defaults (--kube-api-qps 50, --kube-api-burst 100).
GANGSCHED_KUBE_QPS = float(os.environ.get("GANGSCHED_KUBE_QPS", "50"))
GANGSCHED_KUBE_BURST = int(os.environ.get("GANGSCHED_KUBE_BURST", "100"))
# The namespace of gangsched's leader-election Lease; empty: the pod's own namespace (read from
# the service account), else "default".
GANGSCHED_KUBE_NAMESPACE = os.environ.get("GANGSCHED_KUBE_NAMESPACE", "")
# This process's identity in the Lease; empty: the host name (the pod name in a cluster).
GANGSCHED_LEADER_ID = os.environ.get("GANGSCHED_LEADER_ID", "")
# The Lease: taken over when not renewed for this long; renewed by the watcher every period.
GANGSCHED_LEASE_DURATION_S = float(os.environ.get("GANGSCHED_LEASE_DURATION_S", "15"))
GANGSCHED_LEASE_RENEW_S = float(os.environ.get("GANGSCHED_LEASE_RENEW_S", "2"))
# The image of placeholder pods, which hold reserved capacity against other schedulers.
GANGSCHED_PLACEHOLDER_IMAGE = os.environ.get("GANGSCHED_PLACEHOLDER_IMAGE", "registry.k8s.io/pause:3.10")

# Queue order within a priority (scheduler_core/engine/queue.py): least work (GPU- or
# core-seconds of the declared durations) first, but no gang is ever passed by one created more
# than this many seconds after it. 0: plain FIFO (creation order).
GANGSCHED_OVERTAKE_LIMIT_S = parse_seconds(
    "GANGSCHED_OVERTAKE_LIMIT_S", os.environ.get("GANGSCHED_OVERTAKE_LIMIT_S"), DEFAULT_OVERTAKE_LIMIT_S
)

# Reclaim beyond a queue's guarantee (up to its fair share) waits until the gang has waited this
# many seconds (scheduler_core/engine/actions/reclaim.py); reclaim up to the guarantee never
# waits. 0: at once.
GANGSCHED_RECLAIM_DELAY_S = parse_seconds(
    "GANGSCHED_RECLAIM_DELAY_S", os.environ.get("GANGSCHED_RECLAIM_DELAY_S"), DEFAULT_RECLAIM_DELAY_S
)

# The expected runtime of a gang with no declared, learned or limit figure whose queue names no
# default (services/runtimes.py); unset: such a gang has no estimate (backfilling: it never ends).
_DEFAULT_RUNTIME = os.environ.get("GANGSCHED_DEFAULT_RUNTIME_S") or ""
GANGSCHED_DEFAULT_RUNTIME_S = (
    parse_seconds("GANGSCHED_DEFAULT_RUNTIME_S", _DEFAULT_RUNTIME, 0.0) if _DEFAULT_RUNTIME.strip() else None
)

# How many gangs may search for victims to preempt or reclaim in one cycle; past it, the next one
# waits at the head of the queue for a later cycle (EngineConfig.preempt_depth). 0: no bound.
GANGSCHED_PREEMPT_DEPTH = parse_count(
    "GANGSCHED_PREEMPT_DEPTH", os.environ.get("GANGSCHED_PREEMPT_DEPTH"), DEFAULT_PREEMPT_DEPTH
)

# A gang that failed behind the head of the queue is tried again when the cluster changes in a way
# that could make room for it, and at the latest after this many seconds (a backoff from 1 s,
# doubling; scheduler_core/engine/requeue.py). 0: every gang is tried in every cycle.
GANGSCHED_REQUEUE_BACKOFF_MAX_S = parse_seconds(
    "GANGSCHED_REQUEUE_BACKOFF_MAX_S",
    os.environ.get("GANGSCHED_REQUEUE_BACKOFF_MAX_S"),
    DEFAULT_REQUEUE_BACKOFF_MAX_S,
)

# The scheduler lease (services/lease.py): renewed every third of this many seconds while a
# cycle runs; a holder that stops renewing loses it after this long, a dead one (its PostgreSQL
# session ended, or its process gone from the taker's machine) at once. A stale holder's writes
# are refused.
GANGSCHED_LEASE_TTL_S = float(os.environ.get("GANGSCHED_LEASE_TTL_S", "5"))
# Set by `make run`'s supervisor (scripts/run.py) for the processes it starts: the JSON file in
# which it records their restarts, which /healthz and the Overview report. Unset otherwise (a
# Deployment's restarts are Kubernetes's to report): nothing is reported.
GANGSCHED_RESTARTS_FILE = os.environ.get("GANGSCHED_RESTARTS_FILE", "")
# How often beat runs a cycle, the simulated kubelet and the timeout sweep, in seconds.
GANGSCHED_CYCLE_INTERVAL_S = float(os.environ.get("GANGSCHED_CYCLE_INTERVAL_S", "1"))

# How often beat has every pending gang's start forecast (scheduler_core/services/forecasts.py),
# in seconds; 0: never (no forecast is made or shown).
GANGSCHED_FORECAST_INTERVAL_S = parse_seconds(
    "GANGSCHED_FORECAST_INTERVAL_S", os.environ.get("GANGSCHED_FORECAST_INTERVAL_S"), 30.0
)
# The forecasts' arrival model (scheduler_core/forecast/arrivals.py): the submissions of this
# many seconds before a forecast are assumed to repeat in the next as many; 0: a forecast
# assumes nothing more is submitted.
GANGSCHED_FORECAST_ARRIVAL_WINDOW_S = parse_seconds(
    "GANGSCHED_FORECAST_ARRIVAL_WINDOW_S", os.environ.get("GANGSCHED_FORECAST_ARRIVAL_WINDOW_S"), 120.0
)

# Hours of queue history (scheduler_core/models/queue_history.py: one sample per queue and
# minute) kept for the Queues page's chart; the timeout sweep deletes older minutes.
GANGSCHED_QUEUE_HISTORY_HOURS = float(os.environ.get("GANGSCHED_QUEUE_HISTORY_HOURS", "24"))

# Celery beat: the periodic work. The cycle also runs on demand when work arrives
# (scheduler_core.tasks.cycle_trigger); extra triggers coalesce into one queued cycle.
CELERY_BEAT_SCHEDULE = {
    "scheduling-cycle": {
        "task": "scheduler_core.tasks.schedule",
        "schedule": GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 5 * GANGSCHED_CYCLE_INTERVAL_S},
    },
    "simulated-kubelet": {
        "task": "scheduler_core.tasks.kubelet",
        "schedule": GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 5 * GANGSCHED_CYCLE_INTERVAL_S},
    },
    "timeout-sweep": {
        "task": "scheduler_core.tasks.sweep_timeouts",
        "schedule": 5 * GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 10 * GANGSCHED_CYCLE_INTERVAL_S},
    },
    "promote-provisional-gangs": {
        "task": "scheduler_core.declarations.tasks.promote_provisional",
        "schedule": 5 * GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 10 * GANGSCHED_CYCLE_INTERVAL_S},
    },
    "publish-events": {
        "task": "scheduler_core.tasks.publish_events",
        "schedule": GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 5 * GANGSCHED_CYCLE_INTERVAL_S},
    },
    # Drift the cycles do not see (services/reconcile.py), repaired and recorded in the history.
    "reconcile-drift": {
        "task": "scheduler_core.tasks.reconcile_drift",
        "schedule": 30 * GANGSCHED_CYCLE_INTERVAL_S,
        "options": {"expires": 30 * GANGSCHED_CYCLE_INTERVAL_S},
    },
}
if GANGSCHED_FORECAST_INTERVAL_S > 0:
    # Skipped while the previous run is still going (tasks.forecast_gangs' Redis lock).
    CELERY_BEAT_SCHEDULE["gang-forecasts"] = {
        "task": "scheduler_core.tasks.forecast_gangs",
        "schedule": GANGSCHED_FORECAST_INTERVAL_S,
        "options": {"expires": GANGSCHED_FORECAST_INTERVAL_S},
    }

# Fault injection for the crash tests (tests/loop/test_worker.py, bench/): seconds to sleep after
# a cycle has journaled its binds and before it binds them, so a test can kill the worker there.
GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S = float(os.environ.get("GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S", "0"))

# Fault injection in the simulated cluster (the fault tests, bench/ soak runs): the share of
# bind and delete calls that fail, and the seed that makes the failures repeatable.
GANGSCHED_SIM_FAILURE_RATE = float(os.environ.get("GANGSCHED_SIM_FAILURE_RATE", "0"))
GANGSCHED_SIM_SEED = int(os.environ.get("GANGSCHED_SIM_SEED", "0"))
# The share of the simulated cluster's lists (``sync()``) that fail: the cycle skips (tests/faults/).
GANGSCHED_SIM_LIST_FAILURE_RATE = float(os.environ.get("GANGSCHED_SIM_LIST_FAILURE_RATE", "0"))

# Manifests (scheduler_core/declarations/): pods that name a PodGroup not applied yet wait this
# many seconds in a provisional gang, then are scheduled with the pods present as the quorum.
GANGSCHED_PROVISIONAL_GRACE_S = float(os.environ.get("GANGSCHED_PROVISIONAL_GRACE_S", "60"))
# The largest manifest one apply accepts, in bytes.
GANGSCHED_MAX_MANIFEST_BYTES = int(os.environ.get("GANGSCHED_MAX_MANIFEST_BYTES", str(1024 * 1024)))
# priorityClassName -> priority, until PriorityClass objects can be applied (the built-in
# system-cluster-critical and system-node-critical are always known).
GANGSCHED_PRIORITY_CLASSES = {"high": 1000, "default": 0, "low": -100}
