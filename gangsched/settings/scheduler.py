"""gangsched's own switches."""

import os

from .env import parse_cluster_backend

# Which cluster the scheduler binds pods on: "simulated" (in-process, the default) or "kubernetes".
CLUSTER_BACKEND = parse_cluster_backend(os.environ.get("CLUSTER_BACKEND"))
# The schedulerName pods set to be scheduled by gangsched on a real cluster.
GANGSCHED_SCHEDULER_NAME = os.environ.get("GANGSCHED_SCHEDULER_NAME", "gangsched")
