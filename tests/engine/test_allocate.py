"""All-or-nothing placement, gang groups, after-gang pods, filters and placement policies."""

import pytest

from scheduler_core.engine import (
    EngineConfig,
    MatchPolicy,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Placement,
    Reason,
    Taint,
    Toleration,
    TransitionKind,
    run_cycle,
)

from .world import NOW, bound, bound_of, gang, group, members, node, nodes, pod, snapshot


def test_a_gang_that_fits_binds_every_member_at_once():
    world = snapshot(nodes(4), members("team/train", 8, cpu=2), [gang("team/train", 8)])
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "team/train")) == 8
    assert result.transitions_of("team/train") == [TransitionKind.SATISFIED]
    assert "team/train" not in result.explanations


def test_a_gang_that_does_not_fit_binds_nothing_and_says_why():
    world = snapshot(nodes(3), members("team/train", 8, cpu=2), [gang("team/train", 8)])
    result = run_cycle(world, NOW)
    assert result.binds == []
    explanation = result.explanations["team/train"]
    assert explanation.reason == Reason.INSUFFICIENT_RESOURCES
    assert explanation.details["placeable"] == 6
    assert explanation.details["short_by"] == 2


def test_members_beyond_min_member_bind_when_they_fit_and_wait_as_ordinary_pods_otherwise():
    world = snapshot(nodes(2), members("team/train", 6, cpu=2), [gang("team/train", 3)])
    result = run_cycle(world, NOW)
    assert len(bound_of(result, "team/train")) == 4
    assert result.transitions_of("team/train") == [TransitionKind.SATISFIED]


def test_after_the_gang_is_satisfied_a_replacement_member_is_an_ordinary_pod():
    running = members("team/train", 3, node="n0", started=0.0)
    replacement = members("team/train", 1, start=3)
    world = snapshot(nodes(2), running + replacement, [gang("team/train", 4, satisfied=True)])
    result = run_cycle(world, NOW)
    assert bound(result) == {"team/train-3": "n0"}
    assert result.transitions_of("team/train") == []


@pytest.mark.parametrize(
    ("policy", "running", "new", "binds"),
    [
        (MatchPolicy.ONCE_SATISFIED, 1, 1, True),
        (MatchPolicy.WAITING_AND_RUNNING, 1, 1, False),
        (MatchPolicy.WAITING_AND_RUNNING, 2, 1, True),
        (MatchPolicy.ONLY_WAITING, 2, 1, False),
        (MatchPolicy.ONLY_WAITING, 0, 3, True),
    ],
)
def test_new_members_of_a_satisfied_gang_bind_as_its_match_policy_says(policy, running, new, binds):
    """Koordinator's isGangValidForPermit (coscheduling/core/gang.go; core_test.go TestPermit):
    once-satisfied passes, waiting-and-running counts bound members, only-waiting does not."""
    old = members("team/train", running, node="n0", started=0.0)
    world = snapshot(
        nodes(2),
        old + members("team/train", new, start=3),
        [gang("team/train", 3, satisfied=True, match_policy=policy)],
    )
    result = run_cycle(world, NOW)
    assert len(bound(result)) == (new if binds else 0)
    if not binds:
        assert result.explanations["team/train"].reason == Reason.WAITING_FOR_MEMBERS


def test_min_resources_must_be_met_by_the_placed_members():
    world = snapshot(
        nodes(4),
        members("team/train", 2, cpu=1),
        [gang("team/train", 2, min_resources={"cpu": 4000})],
    )
    result = run_cycle(world, NOW)
    assert result.binds == []
    assert result.explanations["team/train"].reason == Reason.MIN_RESOURCES


def test_fewer_pods_than_min_member_wait_for_the_rest():
    world = snapshot(nodes(4), members("team/train", 3), [gang("team/train", 4)])
    result = run_cycle(world, NOW)
    assert result.binds == []
    assert result.explanations["team/train"].reason == Reason.WAITING_FOR_MEMBERS


def test_pods_of_an_undeclared_gang_wait_for_their_gang():
    world = snapshot(nodes(4), members("team/later", 2))
    result = run_cycle(world, NOW)
    assert result.binds == []


class TestGangGroup:
    def world(self, worker_gpus: int):
        gangs = [
            gang("ns-a/gang-ps", 2, group="g"),
            gang("ns-b/gang-worker", 2, group="g"),
        ]
        pods = members("ns-a/gang-ps", 2, cpu=0.5) + members("ns-b/gang-worker", 2, gpu=1)
        cluster = (node("cpu0"), node("gpu0", gpu=worker_gpus))
        return snapshot(cluster, pods, gangs, [group("g", "ns-a/gang-ps", "ns-b/gang-worker")])

    def test_gangs_in_two_namespaces_bind_together(self):
        result = run_cycle(self.world(worker_gpus=2), NOW)
        assert len(bound_of(result, "ns-a/gang-ps")) == 2
        assert len(bound_of(result, "ns-b/gang-worker")) == 2

    def test_one_gang_that_cannot_place_holds_the_whole_group_back(self):
        result = run_cycle(self.world(worker_gpus=1), NOW)
        assert result.binds == []
        ps = result.explanations["ns-a/gang-ps"]
        assert ps.reason == Reason.WAITING_FOR_GROUP
        assert "ns-b/gang-worker" in ps.message
        assert result.explanations["ns-b/gang-worker"].reason == Reason.INSUFFICIENT_RESOURCES

    def test_a_member_gang_not_declared_yet_holds_the_group_back(self):
        world = snapshot(
            nodes(4),
            members("ns-a/ps", 2),
            [gang("ns-a/ps", 2, group="g")],
            [group("g", "ns-a/ps", "ns-b/worker")],
        )
        result = run_cycle(world, NOW)
        assert result.binds == []
        explanation = result.explanations["ns-a/ps"]
        assert explanation.reason == Reason.WAITING_FOR_GROUP
        assert explanation.message == "waiting for gang group member ns-b/worker"


@pytest.mark.parametrize(
    ("name", "pod_kwargs", "node_kwargs", "expected"),
    [
        (
            "node selector",
            {"node_selector": {"zone": "b"}},
            [{"labels": {"zone": "a"}}, {"labels": {"zone": "b"}}],
            "n1",
        ),
        ("untolerated taint", {}, [{"taints": (Taint("gpu", "yes"),)}, {}], "n1"),
        (
            "tolerated taint",
            {"tolerations": (Toleration("gpu", "Exists"),)},
            [{"taints": (Taint("gpu", "yes"),), "unschedulable": True}, {"taints": (Taint("gpu", "yes"),)}],
            "n1",
        ),
        ("cordoned node", {}, [{"unschedulable": True}, {}], "n1"),
        ("not ready node", {}, [{"ready": False}, {}], "n1"),
        (
            "required affinity Gt",
            {"affinity": (NodeSelectorTerm((NodeSelectorRequirement("gen", "Gt", ("3",)),)),)},
            [{"labels": {"gen": "3"}}, {"labels": {"gen": "4"}}],
            "n1",
        ),
    ],
)
def test_members_go_only_to_nodes_that_pass_every_filter(name, pod_kwargs, node_kwargs, expected):
    cluster = [node(f"n{i}", **kwargs) for i, kwargs in enumerate(node_kwargs)]
    world = snapshot(cluster, members("team/job", 2, **pod_kwargs), [gang("team/job", 2)])
    result = run_cycle(world, NOW)
    assert set(bound(result).values()) == {expected}, name


def test_no_node_passing_filters_is_explained_by_filter():
    world = snapshot(
        nodes(3, labels={"zone": "a"}),
        members("team/job", 2, node_selector={"zone": "b"}),
        [gang("team/job", 2)],
    )
    explanation = run_cycle(world, NOW).explanations["team/job"]
    assert explanation.reason == Reason.NO_FEASIBLE_NODES
    assert explanation.details["excluded_by"] == {"node_selector": 3}


def test_binpack_fills_fewer_fuller_nodes():
    busy = pod("other/busy", cpu=2, node="n1", started=0.0)
    world = snapshot(nodes(3), (busy, *members("team/job", 2, cpu=2)), [gang("team/job", 2)])
    placed = bound(run_cycle(world, NOW))
    # One node can take the whole gang, so it goes there rather than filling two half-used nodes.
    assert len(set(placed.values())) == 1


def test_binpack_fills_the_fuller_node_first_when_neither_takes_the_whole_gang():
    busy = pod("other/busy", cpu=3, node="n1", started=0.0)
    world = snapshot(nodes(2), (busy, *members("team/job", 5, cpu=1)), [gang("team/job", 5)])
    placed = bound(run_cycle(world, NOW))
    assert sorted(placed.values()) == ["n0", "n0", "n0", "n0", "n1"]


def test_spread_puts_members_on_as_many_nodes_as_possible():
    world = snapshot(
        nodes(4), members("team/job", 4, cpu=1), [gang("team/job", 4, placement=Placement.SPREAD)]
    )
    placed = bound(run_cycle(world, NOW))
    assert sorted(placed.values()) == ["n0", "n1", "n2", "n3"]


def test_pod_policy_binds_part_of_a_gang_like_kube_scheduler():
    world = snapshot(nodes(3), members("team/train", 8, cpu=2), [gang("team/train", 8)])
    result = run_cycle(world, NOW, EngineConfig(gangs=False))
    assert len(result.binds) == 6


def test_the_engine_never_reads_the_clock_and_is_deterministic():
    world = snapshot(
        nodes(3), members("team/a", 3) + members("team/b", 9), [gang("team/a", 3), gang("team/b", 9)]
    )
    first, second = run_cycle(world, NOW), run_cycle(world, NOW)
    assert first.binds == second.binds
    assert first.explanations == second.explanations
