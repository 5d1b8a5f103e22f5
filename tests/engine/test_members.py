"""``GangMembers`` gives each gang the pods grouping the snapshot pod by pod gives.

The engine no longer groups every pod by gang each cycle (``engine/members.py``): it splits the
snapshot into runs of one gang and joins a gang's runs when asked. Gangs interleaved in the
snapshot, pods of no gang and codes carried from earlier snapshots must not change the lists.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine import Pod, Snapshot
from scheduler_core.engine.members import GangCodes, GangMembers
from scheduler_core.engine.queue import pods_by_gang

GANGS = ["ns/a", "ns/b", "other/c", None]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(GANGS), max_size=40),
    st.lists(st.sampled_from(["ns/z", "ns/b", "ns/y"]), max_size=5),
)
def test_members_are_the_pods_of_each_gang_in_snapshot_order(gangs, seen_before) -> None:
    pods = tuple(Pod("ns", f"p{i}", {"cpu": 1}, gang=gang) for i, gang in enumerate(gangs))
    names = GangCodes()
    names.of([Pod("ns", f"old{i}", {}, gang=gang) for i, gang in enumerate(seen_before)])  # codes kept
    members = GangMembers(pods, names.of(pods), names)
    expected = pods_by_gang(Snapshot(nodes=(), pods=pods))
    for key in {*GANGS, "ns/z", "missing/gang"} - {None}:
        assert members.get(key, []) == expected.get(key, [])
        assert members.get(key) is None or members.get(key) == expected[key]


def test_a_gang_split_in_two_runs_keeps_snapshot_order() -> None:
    pods = tuple(
        Pod("ns", name, {}, gang=gang) for name, gang in [("a0", "ns/a"), ("b0", "ns/b"), ("a1", "ns/a")]
    )
    names = GangCodes()
    members = GangMembers(pods, names.of(pods), names)
    assert [pod.name for pod in members.get("ns/a")] == ["a0", "a1"]
    assert members.get("ns/none", ()) == ()
