"""Trace replay: the engine run in virtual time on recorded workloads, policy by policy.

Plain Python + numpy like the engine (no Django: a test checks it); of scheduler_core it imports
the engine only. So the CLI, the Celery task and the benchmark share it::

    trace = load_trace("jobs.csv")                  # traces.py: gangsched CSV, Tiresias
    cluster = load_cluster("1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}")   # clusters.py
    comparison = compare(trace, cluster, get_policies(["pod", "gangsched"]))  # compare.py
    results, plots = write_outputs(comparison, Path("out"))
"""

from .clusters import Cluster, ClusterSpecError, load_cluster
from .compare import Comparison, compare, write_outputs
from .policies import (
    DEFAULT_POLICIES,
    POLICIES,
    QUEUE_POLICIES,
    TOPOLOGY_POLICIES,
    Policy,
    UnknownPolicy,
    get_policies,
)
from .replay import ReplayOptions, replay
from .runtime_view import MODES as RUNTIME_MODES
from .runtime_view import RuntimeModeError, check_runtimes
from .tenants import DEFAULT_QUEUES, QueueSpecError, QueueTree, parse_queues
from .topology_rule import MODES as TOPOLOGY_MODES
from .topology_rule import TopologyModeError, check_mode
from .traces import Job, Trace, TraceError, load_trace, parse_trace

__all__ = [
    "DEFAULT_POLICIES",
    "DEFAULT_QUEUES",
    "POLICIES",
    "QUEUE_POLICIES",
    "TOPOLOGY_MODES",
    "TOPOLOGY_POLICIES",
    "Cluster",
    "ClusterSpecError",
    "Comparison",
    "Job",
    "Policy",
    "QueueSpecError",
    "QueueTree",
    "RUNTIME_MODES",
    "ReplayOptions",
    "RuntimeModeError",
    "Trace",
    "TopologyModeError",
    "TraceError",
    "UnknownPolicy",
    "check_mode",
    "check_runtimes",
    "compare",
    "get_policies",
    "load_cluster",
    "load_trace",
    "parse_queues",
    "parse_trace",
    "replay",
    "write_outputs",
]
