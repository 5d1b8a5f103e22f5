"""The replay's side of each cycle: the snapshot the engine sees, and its result carried back.

The snapshot holds every job that holds resources and the pending jobs that matter (the queue
window, less those ``bounds.py`` proves cannot start), with a running job's bound pods merged
when that is exact. The result's binds, reservations, releases and evictions then update the
jobs: which started, which were preempted below their minimum, which hold pods at Permit.

``EngineView`` is a base of the replay loop (``replay._Loop``), whose state it reads (jobs,
queue, capacity, config) and whose bookkeeping it calls (``_account``, ``Job.set_pods``,
``_begin``, ``_stop``).
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import itertools

import numpy as np

from scheduler_core.engine import apply_result
from scheduler_core.engine.config import HeadOfLine, permit_quorum
from scheduler_core.engine.decisions import CycleResult
from scheduler_core.engine.model import GangMode, Pod, Snapshot

from .bounds import Bounds
from .jobs import NAMESPACE, Job


class EngineView:
    def _view(self) -> tuple[Snapshot, dict[int, tuple[int, int, int]], bool]:
        """What the engine sees: running and holding jobs, and pending jobs that matter.

        A pending job that cannot place anything on the free capacity at the start of the cycle
        places nothing during it either (capacity only shrinks within a cycle), so leaving it out
        changes no decision, with two exceptions the filter keeps: the first such job that could
        run on an empty cluster becomes the head of the queue (RESERVE and BLOCK: it limits or
        stops what is behind it), and with preemption or deadlock breaking at work capacity can
        grow within a cycle (then no job is filtered). Of the jobs that pass, the first
        ``queue_window`` are the window; of those, the ones ``Bounds`` proves cannot start in
        this cycle are left out too (but still count against the window, so the window is the
        same), except the first, which may be the head.

        With queues the window is per queue (each leaf queue's first ``queue_window`` jobs), as
        Kueue looks at the heads of every ClusterQueue: a tenant that floods the backlog must not
        hide the others' jobs, whose demand sets the fair shares.
        """
        chosen: list[Job] = list(self.running.values())
        room = self.options.queue_window
        exact = not self.config.preemption and not (self.config.deadlock_resolution and self.holding)
        wants_head = self.config.head_of_line != HeadOfLine.NONE
        free = self.alloc - self.used
        copies: dict[bytes, tuple[int, int]] = {}
        bounds = Bounds(self.config, self.options.skip_certain_failures)
        truncated = False
        per_queue: dict[str, int] | None = {} if self.queues else None
        for order in self.pending:
            job = self.jobs[order[-1]]
            if job.held:
                continue  # holders are all shown, below
            if per_queue is not None:
                left = per_queue.get(job.gang.queue, room)
                truncated = truncated or left == 0
                if left:
                    per_queue[job.gang.queue] = left - 1
                    chosen.append(job)
                continue
            if not exact:
                if room == 0:
                    truncated = True
                    break
                chosen.append(job)
                room -= 1
                continue
            shape = job.request.tobytes()
            if shape not in copies:
                copies[shape] = (self._copies(free, job.request), self._copies(self.alloc, job.request))
            now, empty = copies[shape]
            if now >= self._need(job):
                if room == 0:
                    truncated = True
                    if not wants_head:
                        break
                    continue
                room -= 1
                if bounds.certain_to_fail(job, shape, now, empty):
                    if wants_head:  # the first failure of the cycle may be the head: keep it
                        chosen.append(job)
                        wants_head = False
                    else:
                        self.left_out += 1
                    continue
                chosen.append(job)
            elif wants_head and empty >= job.min_workers:
                chosen.append(job)  # the head of the queue
                if room == 0:
                    break
                wants_head = False
        self.window = chosen[len(self.running) :]  # the pending jobs shown, in queue order
        chosen.extend(self.jobs[index] for index in sorted(self.holding))
        pods: list[Pod] = []
        offsets: dict[int, tuple[int, int, int]] = {}
        for position, job in enumerate(chosen):
            seen = job.view if job.view is not None else job.pods
            offsets[job.index] = (len(pods), len(pods) + len(seen), position)
            pods.extend(seen)
        gangs = tuple(job.gang for job in chosen)
        snapshot = Snapshot(self.nodes, tuple(pods), gangs, queues=self.queues, topologies=self.topologies)
        return snapshot, offsets, truncated

    def _need(self, job: Job) -> int:
        """Copies of its pod that must fit now for the engine to place anything of the job."""
        if not self.config.gangs or self.config.force_mode == GangMode.NON_STRICT:
            return 1  # pods placed one by one, or kept as reservations one by one
        if self.config.permit_hold > 0:
            return permit_quorum(job.min_workers, self.config.permit_hold)  # kept at Permit
        return job.min_workers

    @staticmethod
    def _copies(free: np.ndarray, request: np.ndarray) -> int:
        wanted = request > 0
        return int((np.maximum(free[:, wanted], 0) // request[wanted].astype(np.int64)).min(axis=1).sum())

    def _apply(
        self, snapshot: Snapshot, result: CycleResult, offsets: dict[int, tuple[int, int, int]], tick: float
    ) -> bool:
        touched = {d.gang for d in itertools.chain(result.binds, result.reservations) if d.gang}
        touched.update(d.gang for d in itertools.chain(result.releases, result.evictions) if d.gang)
        touched.update(t.gang for t in result.transitions)
        if not touched:
            return False
        after = apply_result(snapshot, result, tick)
        # Reclaim's evictions say so (actions/reclaim.py); priority preemption's do not.
        reclaimed = {d.gang for d in result.evictions if d.reason.startswith("reclaimed by queue")}
        began = False
        # In gang-key (trace) order: a set of strings iterates in an order that changes with the
        # process's hash seed, and the order jobs start in is the order the next snapshot lists
        # them (the backfill plan breaks ties between equal end times by that order).
        for key in sorted(touched):
            job = self.by_gang.get(key)
            if job is None:
                continue
            first, last, position = offsets[job.index]
            was_bound = job.bound
            self._account(job, -1)
            if job.view is not None:
                bound = [pod for pod in job.pods if pod.node is not None]
                job.set_pods(bound + list(after.pods[first + job.merged : last]))
            else:
                job.set_pods(list(after.pods[first:last]))
            job.gang = after.gangs[position]
            if job.start is None and job.bound >= job.min_workers:
                began = True
                self._begin(job, tick)
            elif job.start is not None and job.bound < job.min_workers:
                if key in reclaimed and self.book is not None:
                    self.book.reclaimed(job.index, job.queue, tick - job.start, was_bound, job.request)
                self._stop(job)
            if job.start is not None and job.bound < len(job.pods):
                self.incomplete.add(job.index)
            else:
                self.incomplete.discard(job.index)
            if job.start is not None and self.merge:
                self._merge(job)
            else:
                job.view, job.merged = None, 0
            if job.start is None and job.held:
                self.holding.add(job.index)
            else:
                self.holding.discard(job.index)
            if self.permit_timeout is not None:
                self._watch_permit(job, tick)
            self._account(job, +1)
        return began

    def _permit_timeout(self, job: Job, when: float) -> None:
        """Coscheduling's permit timeout: the waiting pods are rejected, the group goes to the back.

        Unreserve rejects every waiting pod of the group and records the failure, whose time
        becomes the group's place in the queue (QueueSort uses the last failure, not the
        creation, to avoid head-of-line blocking): behind everything submitted before it.
        """
        self._account(job, -1)
        job.set_pods(
            [
                dataclasses.replace(pod, reserved_node=None) if pod.reserved_node is not None else pod
                for pod in job.pods
            ],
        )
        self._account(job, +1)
        if not job.held:
            self.holding.discard(job.index)
        job.hold_since = None
        self.pending.pop(bisect.bisect_left(self.pending, job.order))
        job.order = self._order(job.priority, when, job.pods, job.index)
        job.gang = dataclasses.replace(job.gang, created=when)
        bisect.insort(self.pending, job.order)
        self.permit_timeouts += 1

    def _watch_permit(self, job: Job, tick: float) -> None:
        """Start the permit clock of a gang that began holding pods at Permit; stop it otherwise."""
        if job.start is None and job.held > job.bound:
            if job.hold_since is None:
                job.hold_since = tick
                heapq.heappush(self.deadlines, (tick + self.permit_timeout, job.index, tick))
        else:
            job.hold_since = None

    def _merge(self, job: Job) -> None:
        """The engine's view of a running job: its bound pods as one pod per (node, start).

        Exact for the engine when no running pod can be evicted (no preemption, or a single
        priority): bound pods only add to their node's usage and, for backfilling, end at
        start + duration, both of which a merged pod with the summed request keeps. It turns
        thousands of running pods into a few hundred, and a cycle's cost is linear in pods.
        """
        groups: dict[tuple[str, float | None], int] = {}
        pending = []
        for pod in job.pods:
            if pod.node is None:
                pending.append(pod)
            else:
                key = (pod.node, pod.started)
                groups[key] = groups.get(key, 0) + 1
        base = job.pods[0]
        merged = [
            Pod(
                NAMESPACE,
                f"{job.gang.name}-bound-{n}",
                self._requests(base.requests, count),
                priority=base.priority,
                created=base.created,
                gang=job.gang.key,
                node=node,
                started=started,
                duration=base.duration,
            )
            for n, ((node, started), count) in enumerate(groups.items())
        ]
        job.view, job.merged = merged + pending, len(merged)

    def _requests(self, requests: dict[str, int], count: int) -> dict[str, int]:
        """One mapping per (request, count), shared, so the engine's identity cache hits."""
        key = (tuple(sorted(requests.items())), count)
        found = self._merged_requests.get(key)
        if found is None:
            found = self._merged_requests[key] = {r: a * count for r, a in requests.items()}
        return found
