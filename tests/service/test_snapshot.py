"""Rows -> engine Snapshot, and the JSON <-> engine dataclass round trips."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine import model as engine
from scheduler_core.engine.model import GangMode, GangPhase, Placement, TimeoutStyle
from scheduler_core.models import Gang, GangGroup, Member, MemberPhase, Node
from scheduler_core.snapshot import build as snapshot

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "value": "", "effect": "NoSchedule"}
ZONE_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}


@pytest.fixture
def world(db):
    """Two GPU nodes, a gang pair (train is half bound; eval not submitted yet), a lone pod."""
    Node.objects.create(
        name="gpu-b",
        allocatable={"cpu": 32000, "nvidia.com/gpu": 4},
        labels={"zone": "b"},
        taints=[GPU_TAINT],
    )
    Node.objects.create(
        name="gpu-a",
        allocatable={"cpu": 32000, "memory": 2**37, "nvidia.com/gpu": 4},
        labels={"zone": "a"},
        taints=[GPU_TAINT],
        unschedulable=True,
    )
    pair = GangGroup.objects.create(key="ml/pair", members=["ml/train", "ml/eval"])
    train = Gang.objects.create(
        namespace="ml",
        name="train",
        min_member=2,
        total_number=3,
        min_resources={"nvidia.com/gpu": 4},
        mode=GangMode.NON_STRICT.value,
        style=TimeoutStyle.SOFT.value,
        wait_seconds=600.0,
        group=pair,
        priority=100,
        placement=Placement.SPREAD.value,
        preemptible=False,
        queue="research",
        phase=GangPhase.SCHEDULING.value,
        wait_started=NOW - timedelta(seconds=30),
        created=NOW - timedelta(minutes=5),
    )
    Member.objects.create(
        namespace="ml",
        name="train-0",
        gang=train,
        requests={"cpu": 4000, "nvidia.com/gpu": 2},
        priority=100,
        phase=MemberPhase.RUNNING,
        node="gpu-a",
        tolerations=[GPU_TOLERATION],
        affinity=[ZONE_TERM],
        node_selector={"zone": "a"},
        started_at=NOW - timedelta(seconds=10),
        duration_seconds=3600.0,
        created=NOW - timedelta(minutes=5),
    )
    Member.objects.create(
        namespace="ml", name="train-1", gang=train, requests={"nvidia.com/gpu": 2}, reserved_node="gpu-b"
    )
    Member.objects.create(
        namespace="ml", name="train-2", gang=train, phase=MemberPhase.SUCCEEDED, node="gpu-b"
    )
    Member.objects.create(namespace="web", name="solo", requests={"cpu": 500}, preemptible=False)
    # Done gangs: one with no live pods (left out), one still holding a node (kept).
    Gang.objects.create(namespace="ml", name="old", min_member=1, phase=GangPhase.FINISHED.value)
    killed = Gang.objects.create(namespace="ml", name="dying", min_member=1, phase=GangPhase.KILLED.value)
    Member.objects.create(
        namespace="ml", name="dying-0", gang=killed, phase=MemberPhase.RUNNING, node="gpu-b", terminating=True
    )


def test_nodes_arrive_sorted_with_their_taints(world):
    snap = snapshot.build_snapshot()

    assert snap.nodes == (
        engine.Node(
            name="gpu-a",
            allocatable={"cpu": 32000, "memory": 2**37, "nvidia.com/gpu": 4},
            labels={"zone": "a"},
            taints=(engine.Taint("nvidia.com/gpu", "present", "NoSchedule"),),
            unschedulable=True,
        ),
        engine.Node(
            name="gpu-b",
            allocatable={"cpu": 32000, "nvidia.com/gpu": 4},
            labels={"zone": "b"},
            taints=(engine.Taint("nvidia.com/gpu", "present", "NoSchedule"),),
        ),
    )


def test_pods_are_the_pending_and_running_members(world):
    pods = {pod.key: pod for pod in snapshot.build_snapshot().pods}

    assert list(pods) == ["ml/dying-0", "ml/train-0", "ml/train-1", "web/solo"]
    assert pods["ml/train-0"] == engine.Pod(
        namespace="ml",
        name="train-0",
        requests={"cpu": 4000, "nvidia.com/gpu": 2},
        priority=100,
        created=(NOW - timedelta(minutes=5)).timestamp(),
        gang="ml/train",
        node="gpu-a",
        node_selector={"zone": "a"},
        tolerations=(engine.Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),),
        affinity=(engine.NodeSelectorTerm((engine.NodeSelectorRequirement("zone", "In", ("a", "b")),)),),
        started=(NOW - timedelta(seconds=10)).timestamp(),
        duration=3600.0,
    )
    assert pods["ml/train-1"].pending and pods["ml/train-1"].reserved_node == "gpu-b"
    assert pods["web/solo"].gang is None and pods["web/solo"].preemptible is False
    assert pods["ml/dying-0"].terminating is True and pods["ml/train-0"].terminating is False


def test_gangs_carry_their_scheduling_state(world):
    gangs = {gang.key: gang for gang in snapshot.build_snapshot().gangs}

    assert list(gangs) == ["ml/dying", "ml/train"]  # ml/old is finished with no live pods
    assert gangs["ml/train"] == engine.Gang(
        namespace="ml",
        name="train",
        min_member=2,
        min_resources={"nvidia.com/gpu": 4},
        total_number=3,
        mode=GangMode.NON_STRICT,
        wait_seconds=600.0,
        style=TimeoutStyle.SOFT,
        group="ml/pair",
        created=(NOW - timedelta(minutes=5)).timestamp(),
        phase=GangPhase.SCHEDULING,
        priority=100,
        placement=Placement.SPREAD,
        preemptible=False,
        queue="research",
        wait_started=(NOW - timedelta(seconds=30)).timestamp(),
    )


def test_gang_groups_list_expected_gangs_even_unsubmitted_ones(world):
    assert snapshot.build_snapshot().gang_groups == (engine.GangGroup("ml/pair", ("ml/train", "ml/eval")),)


def test_a_timed_out_gang_stays_in_the_snapshot_to_be_explained(db):
    Gang.objects.create(namespace="ml", name="late", min_member=1, phase=GangPhase.TIMED_OUT.value)

    assert [gang.key for gang in snapshot.build_snapshot().gangs] == ["ml/late"]


def test_it_reads_everything_in_seven_queries(world, django_assert_num_queries):
    # nodes, pods, gangs, groups, the queue tree, the topologies and the HyperNodes
    with django_assert_num_queries(7):
        snapshot.build_snapshot()


def test_two_builds_over_the_same_rows_are_equal(world):
    assert snapshot.build_snapshot() == snapshot.build_snapshot()


def test_an_empty_database_is_an_empty_snapshot(db):
    assert snapshot.build_snapshot() == engine.Snapshot()


# ---------------------------------------------------------------- round trips

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-./", min_size=1, max_size=20)
values = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._", max_size=12)
effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])

taints = st.builds(engine.Taint, key=names, value=values, effect=effects)
tolerations = st.builds(
    engine.Toleration,
    key=st.one_of(st.just(""), names),
    operator=st.sampled_from(["Equal", "Exists"]),
    value=values,
    effect=st.one_of(st.just(""), effects),
)
terms = st.builds(
    engine.NodeSelectorTerm,
    match_expressions=st.lists(
        st.builds(
            engine.NodeSelectorRequirement,
            key=names,
            operator=st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
            values=st.lists(values, max_size=3).map(tuple),
        ),
        max_size=3,
    ).map(tuple),
)


@given(taints)
def test_taints_round_trip(taint):
    assert snapshot.taint_from_json(snapshot.taint_to_json(taint)) == taint


@given(tolerations)
def test_tolerations_round_trip(toleration):
    assert snapshot.toleration_from_json(snapshot.toleration_to_json(toleration)) == toleration


@given(terms)
def test_node_selector_terms_round_trip(term):
    assert snapshot.term_from_json(snapshot.term_to_json(term)) == term


@given(st.datetimes(timezones=st.just(UTC), min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)))
def test_times_round_trip_to_the_microsecond(moment):
    assert snapshot.from_epoch(snapshot.to_epoch(moment)) == moment


def test_kubernetes_defaults_fill_missing_json_keys():
    assert snapshot.taint_from_json({"key": "gpu"}) == engine.Taint("gpu", "", "NoSchedule")
    assert snapshot.toleration_from_json({}) == engine.Toleration()
    assert snapshot.term_from_json({}) == engine.NodeSelectorTerm()
    assert snapshot.to_epoch(None) is None and snapshot.from_epoch(None) is None


@pytest.mark.django_db
@given(
    allocatable=st.dictionaries(names, st.integers(0, 2**62), max_size=4),
    node_taints=st.lists(taints, max_size=3),
)
def test_nodes_round_trip_through_the_database(allocatable, node_taints):
    Node.objects.all().delete()
    Node.objects.create(
        name="n", allocatable=allocatable, taints=[snapshot.taint_to_json(t) for t in node_taints]
    )

    (node,) = snapshot.build_snapshot().nodes

    assert node.allocatable == allocatable
    assert node.taints == tuple(node_taints)
