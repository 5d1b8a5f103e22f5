"""A small demo workload for the seeded cluster (``seed_cluster``), chosen to show each feature
on the dashboard within a couple of minutes:

- ``etl``, ``analytics``: CPU gangs of 8 and 16 pods that run 30-90 s;
- ``llm-train``: two 8-GPU pods, all or nothing, high priority, 120 s;
- ``sweep``: a NonStrict gang (6 pods, 4 needed) that accumulates GPUs across cycles;
- ``notebook``: a Soft gang with a 15 s timeout that cannot fit beside the others at first, so
  it falls back to pod-at-a-time scheduling;
- ``too-big``: 8 pods of 8 GPUs, more than the cluster has: it never starts, and says why.

Names end with a run suffix (``etl-r1``, then ``etl-r2``...), so the command can be run again
while an earlier run is still on the cluster; ``--run`` picks the suffix explicitly.
"""

import re

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from scheduler_core.models import Gang
from scheduler_core.services.submit import gang_submit

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
GPU_POOL = {"node-pool": "gpu"}


def _pods(prefix: str, count: int, requests: dict, durations, gpu: bool = False, priority: int = 0):
    extra = {"tolerations": [GPU_TOLERATION], "node_selector": GPU_POOL} if gpu else {}
    return [
        {
            "name": f"{prefix}-{i}",
            "requests": requests,
            "duration_seconds": durations(i),
            "priority": priority,
            "labels": {"app": prefix.rsplit("-r", 1)[0]},
            **extra,
        }
        for i in range(count)
    ]


def workload(run: int) -> list[dict]:
    """gang_submit's keyword arguments (minus the namespace) for one run of the demo."""
    r = f"r{run}"
    gpu8 = {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "8"}
    gpu2 = {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "2"}
    gpu4 = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"}
    return [
        {
            "name": f"etl-{r}",
            "min_member": 8,
            "pods": _pods(f"etl-{r}", 8, {"cpu": "4", "memory": "16Gi"}, lambda i: 30 + 5 * i),
        },
        {
            "name": f"analytics-{r}",
            "min_member": 16,
            "priority": 10,
            "pods": _pods(f"analytics-{r}", 16, {"cpu": "8", "memory": "32Gi"}, lambda i: 90, priority=10),
        },
        {
            "name": f"llm-train-{r}",
            "min_member": 2,
            "priority": 100,
            "pods": _pods(f"llm-train-{r}", 2, gpu8, lambda i: 120, gpu=True, priority=100),
        },
        {
            "name": f"sweep-{r}",
            "min_member": 4,
            "mode": "NonStrict",
            "pods": _pods(f"sweep-{r}", 6, gpu2, lambda i: 60, gpu=True),
        },
        {
            "name": f"notebook-{r}",
            "min_member": 3,
            "style": "Soft",
            "wait_seconds": 15,
            "pods": _pods(f"notebook-{r}", 3, gpu4, lambda i: 45, gpu=True),
        },
        {
            "name": f"too-big-{r}",
            "min_member": 8,
            "pods": _pods(f"too-big-{r}", 8, gpu8, lambda i: 60, gpu=True),
        },
    ]


def next_run(namespace: str) -> int:
    runs = [
        int(match.group(1))
        for name in Gang.objects.filter(namespace=namespace).values_list("name", flat=True)
        if (match := re.search(r"-r(\d+)$", name))
    ]
    return max(runs, default=0) + 1


class Command(BaseCommand):
    help = "Submit a small demo workload (six gangs) to show gang scheduling on the dashboard."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", default="demo")
        parser.add_argument("--run", type=int, help="Run suffix (default: one more than the last run).")
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing if any gang exists (first `make run`)."
        )

    def handle(self, *args, namespace: str, run: int | None, if_empty: bool = False, **options):
        if if_empty and Gang.objects.exists():
            self.stdout.write("Gangs exist already: no demo submitted")
            return
        run = run or next_run(namespace)
        try:
            with transaction.atomic():
                gangs = [gang_submit(namespace=namespace, **spec) for spec in workload(run)]
        except ValueError as error:
            raise CommandError(str(error)) from None
        for gang in gangs:
            self.stdout.write(f"submitted {gang.key} (min_member {gang.min_member})")
        self.stdout.write(f"Demo run {run}: {len(gangs)} gangs in namespace {namespace}")
