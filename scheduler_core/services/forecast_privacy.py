"""What a submitter may read of their gang's forecast: nothing of anyone else's work.

A forecast carries the engine's explanation of the gang ("waiting for"), and explanations name
other work: the head of the queue a gang is blocked behind (``blocked behind ml/other ...``,
with how much later it was created), the victims a preemption or a reclaim evicts (their gang,
priority, member count and pod names), the gang group member it waits for, the exclusive gangs
holding topology domains (``r0 by ml/a``). A submitter reads the message as it is when every
gang and pod it names is theirs; otherwise the reason's generic sentence, which names and
counts nothing. Positions are counted among the submitter's own pending gangs only
(``own_positions``): Kueue's counts would tell how much of others' work waits.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping

from scheduler_core.engine.decisions import Reason

#: ``namespace/name`` as Kubernetes spells a gang's or a pod's key: a namespace is an RFC 1123
#: label (no dot), so ``nvidia.com/gpu`` and ``topology.kubernetes.io/zone`` never match.
KEY = re.compile(r"(?<![-a-z0-9./])[a-z0-9](?:[-a-z0-9]*[a-z0-9])?/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?")

#: The sentence a submitter reads instead of a message naming another submitter's work.
GENERIC = {
    Reason.BLOCKED_BEHIND.value: "blocked behind another submitter's gang, which is first in the queue "
    "and has capacity reserved",
    Reason.PREEMPTING.value: "evicting lower-priority work to make room; binds once it is gone",
    Reason.WAITING_FOR_RECLAIM.value: "waiting for reclaim: work of queues over their share is evicted "
    "to make room",
    Reason.WAITING_FOR_GROUP.value: "waiting for another gang of its gang group",
    Reason.NO_DOMAIN_FITS.value: "no domain of its topology level can hold it now; other exclusive gangs "
    "hold some",
}
OTHERWISE = "waiting for other submitters' work (operators see which)"


def named_keys(message: str) -> list[str]:
    """The ``namespace/name`` keys a message names, in order."""
    return KEY.findall(message)


def message_for_owner(reason: str, message: str, submitter: str, owners: Mapping[str, str]) -> str:
    """``message`` as ``submitter`` may read it. ``owners``: gang and pod key -> its submitter;
    a key it does not know counts as another's (nothing is shown that might be)."""
    foreign = [key for key in named_keys(message) if not submitter or owners.get(key) != submitter]
    if not foreign:
        return message
    return GENERIC.get(reason, OTHERWISE)


Entry = tuple[str, str, str, tuple[str, str], int, int, int]


def own_positions(entries: Iterable[Entry]) -> dict[str, tuple[int, int, int]]:
    """Gang key -> how many of the same submitter's pending gangs are ahead of it: in its queue,
    in its local queue, in the cluster. ``entries``: (key, submitter, queue, local queue,
    position in queue, in local queue, in cluster), positions as Kueue counts them; the local
    queue as ``forecast.positions`` names it (namespace and declared name). Gangs of one group
    share a place, so none of them is ahead of another."""
    rows = list(entries)
    lanes: dict[tuple, list[int]] = defaultdict(list)
    for _key, submitter, queue, local, in_queue, in_local, in_cluster in rows:
        lanes["q", submitter, queue].append(in_queue)
        lanes["l", submitter, queue, local].append(in_local)
        lanes["c", submitter].append(in_cluster)
    for positions in lanes.values():
        positions.sort()
    return {
        key: (
            bisect_left(lanes["q", submitter, queue], in_queue),
            bisect_left(lanes["l", submitter, queue, local], in_local),
            bisect_left(lanes["c", submitter], in_cluster),
        )
        for key, submitter, queue, local, in_queue, in_local, in_cluster in rows
    }
