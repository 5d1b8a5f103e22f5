"""``GangMap`` maps a snapshot's gangs by key as ``{gang.key: gang ...}`` does, order included.

It carries the last map and applies only the gangs replaced, gone or new (``gang_map.py``);
here random successions of snapshots replace, drop, add (at the end or in between) and reorder
gangs, and every map, its order and the gangs that may time out must be the plain ones.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine import Gang
from scheduler_core.engine.gang_map import GangMap, may_time_out

STEPS = st.lists(
    st.tuples(st.sampled_from(["replace", "drop", "append", "insert", "swap", "clock"]), st.integers(0, 50)),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 8), STEPS)
def test_the_map_is_the_plain_one_after_any_changes(size, steps) -> None:
    gangs = [Gang("ns", f"g{i}", 1, wait_seconds=60.0) for i in range(size)]
    made = size
    mapped = GangMap()
    for kind, at in [("start", 0), *steps]:
        if kind == "replace" and gangs:
            i = at % len(gangs)
            gangs[i] = dataclasses.replace(gangs[i], satisfied=not gangs[i].satisfied)
        elif kind == "clock" and gangs:
            i = at % len(gangs)
            gangs[i] = dataclasses.replace(gangs[i], wait_started=float(at))
        elif kind == "drop" and gangs:
            del gangs[at % len(gangs)]
        elif kind in ("append", "insert"):
            made += 1
            position = len(gangs) if kind == "append" else at % (len(gangs) + 1)
            gangs.insert(position, Gang("ns", f"g{made}", 1, wait_seconds=60.0, wait_started=1.0))
        elif kind == "swap" and len(gangs) > 1:
            i = at % (len(gangs) - 1)
            gangs[i], gangs[i + 1] = gangs[i + 1], gangs[i]
        snapshot = tuple(gangs)
        by_key, watch = mapped.update(snapshot)
        expected = {gang.key: gang for gang in snapshot}
        assert list(by_key.items()) == list(expected.items())
        assert watch == {key for key, gang in expected.items() if may_time_out(gang)}


def test_the_map_handed_out_is_a_copy() -> None:
    mapped = GangMap()
    gangs = (Gang("ns", "a", 1),)
    by_key, _ = mapped.update(gangs)
    by_key["ns/a"] = dataclasses.replace(gangs[0], satisfied=True)
    again, _ = mapped.update(gangs)
    assert again["ns/a"] is gangs[0]
