"""The work ``bench/service.py`` gives the service: a simulated cluster of identical nodes and
gangs of identical pods, submitted through ``gang_submit`` as a client of the service would.

Split from the script so that each part reads on its own.
"""

from __future__ import annotations

import multiprocessing
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


def submit_all(
    gangs: int, members: int, submitters: int, trigger, *, processes: int = 1, kicked=None
) -> tuple[dict[str, float], float]:
    """Submit every gang; returns gang key -> time.time() at the start of its gang_submit, and
    the time the last one returned (committed).

    ``submitters`` threads in all, spread over ``processes`` processes (1: this one). Threads of
    one process share its GIL: on this machine one process submits at most ~3,500-4,500 pods/s
    however many threads it has, which the stream phase would measure instead of the scheduler.
    Processes are what API clients and the service's web workers are.

    In this process each submission calls ``trigger`` (and ``gang_submit`` asks for a cycle on
    commit, unless suppressed). The submitting processes do not ask for cycles themselves, so
    that only the script's process talks to the scheduler's Redis flag and queue (a submitting
    process's trigger thread could still be sending when the process exits): each submission
    sets ``kicked`` instead, a multiprocessing event the script's ticker waits on, so it asks
    for a cycle at once (None: the backlog's load, which asks for none)."""
    if processes <= 1:
        return _submit_threads(range(gangs), members, submitters, trigger), time.time()
    return _submit_processes(gangs, members, submitters, processes, kicked)


def _submit_threads(indexes: range, members: int, threads: int, trigger) -> dict[str, float]:
    from django.db import connection

    from scheduler_core.services.submit import gang_submit

    submitted: dict[str, float] = {}
    lock = threading.Lock()

    def run(indexes) -> None:
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

    if threads <= 1:
        run(indexes)
    else:
        workers = [threading.Thread(target=run, args=(indexes[i::threads],)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return submitted


def _submit_processes(gangs, members, submitters, processes, kicked) -> tuple[dict[str, float], float]:
    """Spawned processes (Django set up afresh from this process's environment: the bench
    database, Redis db and queue), started together once all are ready, so their start-up is
    not timed; the gang at index i goes to process i mod ``processes``."""
    context = multiprocessing.get_context("spawn")
    ready, go, results = context.Barrier(processes + 1), context.Event(), context.Queue()
    threads = max(1, submitters // processes)
    children = [
        context.Process(
            target=_submit_child,
            args=(range(i, gangs, processes), members, threads, kicked, ready, go, results),
            daemon=True,
        )
        for i in range(processes)
    ]
    for child in children:
        child.start()
    ready.wait(timeout=120)
    go.set()
    submitted: dict[str, float] = {}
    finished = 0.0
    for _ in children:
        part = results.get(timeout=600)
        if isinstance(part, str):
            raise SystemExit(f"a submitting process failed: {part}")
        submitted.update(part[0])
        finished = max(finished, part[1])
    for child in children:
        child.join(timeout=30)
        if child.exitcode is None:
            raise SystemExit("a submitting process did not exit")
    return submitted, finished


def _submit_child(indexes, members, threads, kicked, ready, go, results) -> None:
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import django

        django.setup()
        from bench.service_worker import triggers_suppressed

        ready.wait(timeout=120)
        go.wait(timeout=120)
        with triggers_suppressed():  # the parent asks for cycles (see submit_all)
            part = _submit_threads(indexes, members, threads, None if kicked is None else kicked.set)
        results.put((part, time.time()))
    except BaseException as error:  # reported to the parent, which aborts the run
        results.put(f"{type(error).__name__}: {error}")
        raise


def submit_all_indexes(indexes, members: int) -> None:
    from scheduler_core.services.submit import gang_submit

    for index in indexes:
        gang_submit(
            namespace=NAMESPACE, name=f"g{index:05d}", min_member=members, pods=gang_pods(index, members)
        )
