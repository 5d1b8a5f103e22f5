"""What a submitter may read of their gang's forecast: nothing of anyone else's work.

A forecast carries the engine's explanation of the gang ("waiting for"), and explanations name
other work: the head of the queue a gang is blocked behind (``blocked behind ml/other ...``, with how much
later it was created), the victims a preemption or a reclaim evicts (their gang, priority, member
count and pod names), the gang group member it waits for, the exclusive gangs holding topology
domains (``r0 by ml/a``). A submitter reads the message as it is when every gang and pod it names
is theirs; otherwise the reason's generic sentence, which names and counts nothing: the one rule
of ``scheduler_core/reads/redaction.py``, which the pages, the API and the live updates apply to a
gang's own explanation and history too. Positions are counted among the submitter's own pending
gangs only (``own_positions``): Kueue's counts would tell how much of others' work waits.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping

from scheduler_core.reads.redaction import GENERIC, OTHERWISE, named_keys, redact_message, shown_by

__all__ = ["GENERIC", "OTHERWISE", "message_for_owner", "named_keys", "own_positions"]


def message_for_owner(reason: str, message: str, submitter: str, owners: Mapping[str, str | None]) -> str:
    """``message`` as ``submitter`` may read it, by the one rule of ``reads/redaction.py``.
    ``owners``: gang and pod key -> its submitter; a key it does not know counts as another's
    (nothing is shown that might be), unless it is a count (``0/16 nodes``)."""
    return redact_message(reason, message, shown_by(owners, submitter))


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
