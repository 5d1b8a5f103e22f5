"""The work ``bench/service.py`` gives the service: a simulated cluster of identical nodes and
gangs of identical pods, submitted through ``gang_submit`` as a client of the service would.

Split from the script so that each part reads on its own.
"""

from __future__ import annotations

import threading
import time

NAMESPACE = "bench"
NODE = {"cpu": "64", "memory": "256Gi", "pods": "110"}
POD = {"cpu": "1", "memory": "4Gi"}


def nodes_create(count: int) -> None:
    from scheduler_core.engine.quantity import parse_resources
    from scheduler_core.models import Node

    allocatable = parse_resources(NODE)
    Node.objects.bulk_create(
        [Node(name=f"node-{i:05d}", allocatable=dict(allocatable)) for i in range(count)], batch_size=1000
    )


def gang_pods(index: int, members: int) -> list[dict]:
    return [{"name": f"g{index:05d}-{j:04d}", "requests": dict(POD)} for j in range(members)]


def submit_all(gangs: int, members: int, submitters: int, trigger) -> dict[str, float]:
    """Submit every gang; returns gang key -> time.time() at the start of its gang_submit."""
    from django.db import connection

    from scheduler_core.services.submit import gang_submit

    submitted: dict[str, float] = {}
    lock = threading.Lock()

    def run(indexes: range) -> None:
        try:
            for index in indexes:
                pods = gang_pods(index, members)
                began = time.time()
                gang = gang_submit(namespace=NAMESPACE, name=f"g{index:05d}", min_member=members, pods=pods)
                with lock:
                    submitted[gang.key] = began
                if trigger is not None:
                    trigger()
        finally:
            connection.close()

    if submitters <= 1:
        run(range(gangs))
    else:
        threads = [
            threading.Thread(target=run, args=(range(i, gangs, submitters),)) for i in range(submitters)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return submitted


def submit_all_indexes(indexes, members: int) -> None:
    from scheduler_core.services.submit import gang_submit

    for index in indexes:
        gang_submit(
            namespace=NAMESPACE, name=f"g{index:05d}", min_member=members, pods=gang_pods(index, members)
        )
