"""Why a gang is not placed, by reason, with the count of nodes each reason rules out.

The anchor is kube-scheduler's answer for one pod: "0/16 nodes are available: 4 node(s) had
untolerated taint {nvidia.com/gpu: present}, 12 Insufficient nvidia.com/gpu".
"""

from scheduler_core.engine import Node, Pod, Reason, Taint, Toleration, run_cycle
from scheduler_core.engine.diagnosis import reason_text
from scheduler_core.engine.filters import NodeFilter

from .topology.tworld import RACK, fleet, required, world
from .world import NOW, gang, members, node, nodes, pod, snapshot

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def demo_cluster(busy_untainted: int = 0) -> list[Node]:
    """Four tainted GPU nodes and twelve CPU nodes, as ``make run``'s demo has them."""
    cluster = [node(f"gpu{i}", cpu=32, memory=128, gpu=8, taints=(GPU_TAINT,)) for i in range(4)]
    cluster += [node(f"cpu{i}", cpu=16, memory=64) for i in range(12)]
    cluster += [node(f"open{i}", cpu=32, memory=128, gpu=8) for i in range(busy_untainted)]
    return cluster


def explain(cluster, pods, gangs):
    return run_cycle(snapshot(cluster, pods, gangs), NOW).explanations


def counts_add_up(explanation, total: int) -> None:
    for shape in explanation.details["shapes"]:
        assert shape["nodes"] == total
        assert shape["available"] + sum(row["count"] for row in shape["reasons"]) == total, shape


def test_an_untolerated_taint_is_named_with_its_node_count_not_blamed_on_resources():
    why = explain(demo_cluster(), members("ml/train", 4, cpu=8, memory=32, gpu=1), [gang("ml/train", 4)])
    explanation = why["ml/train"]
    assert explanation.reason == Reason.NO_FEASIBLE_NODES
    assert explanation.message.startswith(
        "0/16 nodes are available: 4 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "12 Insufficient nvidia.com/gpu; needs 4 x {cpu 8, memory 32Gi, nvidia.com/gpu 1}"
    )
    assert "InsufficientResources" not in explanation.message
    (shape,) = explanation.details["shapes"]
    assert shape["reasons"] == [
        {"reason": "UntoleratedTaint", "count": 4, "detail": "nvidia.com/gpu=present:NoSchedule"},
        {"reason": "Insufficient", "count": 12, "detail": "nvidia.com/gpu"},
    ]
    assert shape["available"] == 0 and shape["fit_if_empty"] == 0
    counts_add_up(explanation, 16)
    # True: the only nodes with GPUs exclude it by their taint, so no node could take it empty.
    assert explanation.message.endswith("it cannot fit even on an empty cluster")


def test_a_toleration_lets_the_same_gang_run():
    tolerating = members(
        "ml/train", 4, cpu=8, memory=32, gpu=1, tolerations=(Toleration("nvidia.com/gpu", "Exists"),)
    )
    result = run_cycle(snapshot(demo_cluster(), tolerating, [gang("ml/train", 4)]), NOW)
    assert "ml/train" not in result.explanations
    assert len(result.binds) == 4


def test_a_node_selector_mismatch_is_counted_under_the_selector():
    cluster = [node(f"a{i}", labels={"zone": "a"}) for i in range(3)] + [
        node("b0", cpu=1, labels={"zone": "b"})
    ]
    explanation = explain(
        cluster, members("team/job", 2, cpu=2, node_selector={"zone": "b"}), [gang("team/job", 2)]
    )["team/job"]
    assert explanation.reason == Reason.NO_FEASIBLE_NODES
    assert explanation.message.startswith(
        "0/4 nodes are available: 3 node(s) didn't match the node selector, 1 Insufficient cpu"
    )
    (shape,) = explanation.details["shapes"]
    assert shape["reasons"][0] == {"reason": "NodeSelector", "count": 3, "detail": "zone=b"}
    counts_add_up(explanation, 4)


def test_mixed_reasons_count_each_node_once_under_its_first_filter():
    tainted_and_unlabelled = node("t0", gpu=1, taints=(GPU_TAINT,))
    cordoned = node("c0", gpu=1, labels={"pool": "ml"}, unschedulable=True)
    not_ready = node("r0", gpu=1, labels={"pool": "ml"}, ready=False)
    other_taint = node("t1", gpu=1, labels={"pool": "ml"}, taints=(Taint("dedicated", "infra", "NoExecute"),))
    unlabelled = node("u0", gpu=1)
    small = node("s0", cpu=1, gpu=1, labels={"pool": "ml"})
    no_gpu = node("g0", labels={"pool": "ml"})
    fits = node("f0", gpu=1, labels={"pool": "ml"})
    cluster = [tainted_and_unlabelled, cordoned, not_ready, other_taint, unlabelled, small, no_gpu, fits]
    pods = members("ml/a", 3, cpu=2, gpu=1, node_selector={"pool": "ml"})
    explanation = explain(cluster, pods, [gang("ml/a", 3)])["ml/a"]
    (shape,) = explanation.details["shapes"]
    assert [(row["reason"], row["count"], row["detail"]) for row in shape["reasons"]] == [
        ("NotReady", 1, ""),
        ("Unschedulable", 1, "node.kubernetes.io/unschedulable"),
        ("UntoleratedTaint", 1, "nvidia.com/gpu=present:NoSchedule"),  # in the order of the nodes
        ("UntoleratedTaint", 1, "dedicated=infra:NoExecute"),
        ("NodeSelector", 1, "pool=ml"),
        ("Insufficient", 1, "cpu"),
        ("Insufficient", 1, "nvidia.com/gpu"),
    ]
    assert shape["available"] == 1
    counts_add_up(explanation, 8)
    # One node passes the filters and has room: resources hold the gang back (the shortfall
    # first), and the filters' counts follow it.
    assert explanation.reason == Reason.INSUFFICIENT_RESOURCES
    assert explanation.message.startswith(
        "needs 3 x {cpu 2, memory 1Gi, nvidia.com/gpu 1}; 1 node can take one each; short by 2; "
    )
    assert (
        "1/8 nodes are available: 1 node(s) were not ready, 1 node(s) were unschedulable"
        in explanation.message
    )


def test_empty_cluster_is_said_only_when_no_node_could_take_it_even_empty():
    # Two untainted GPU nodes, busy: the gang waits for them, it is not impossible.
    busy = [pod(f"other/busy-{i}", cpu=1, gpu=8, node=f"open{i}", started=0.0) for i in range(2)]
    pods = (*busy, *members("ml/train", 2, cpu=8, memory=32, gpu=1))
    explanation = explain(demo_cluster(busy_untainted=2), pods, [gang("ml/train", 2)])["ml/train"]
    assert explanation.reason == Reason.INSUFFICIENT_RESOURCES
    assert "empty cluster" not in explanation.message
    assert "fits_on_empty_cluster" not in explanation.details
    assert explanation.message == (
        "needs 2 x {cpu 8, memory 32Gi, nvidia.com/gpu 1}; no node can take one; short by 2; "
        "limiting resource nvidia.com/gpu; 0/18 nodes are available: 4 node(s) had untolerated taint "
        "{nvidia.com/gpu: present}, 14 Insufficient nvidia.com/gpu"
    )
    counts_add_up(explanation, 18)


def test_resources_alone_keep_the_shortfall_as_it_was():
    cluster = [node(f"gpu{i}", gpu=1) for i in range(2)] + [node("cpu0")]
    explanation = explain(cluster, members("ml/t", 3, gpu=1), [gang("ml/t", 3)])["ml/t"]
    assert explanation.message == (
        "needs 3 x {cpu 1, memory 1Gi, nvidia.com/gpu 1}; 2 nodes can take one each; short by 1; "
        "limiting resource nvidia.com/gpu; it cannot fit even on an empty cluster"
    )
    (shape,) = explanation.details["shapes"]
    assert shape["reasons"] == [{"reason": "Insufficient", "count": 1, "detail": "nvidia.com/gpu"}]
    assert shape["available"] == 2 and shape["fit_if_empty"] == 2


def test_a_shape_kept_off_every_node_by_a_filter_makes_the_whole_gang_infeasible():
    # The launcher fits anywhere; the workers select a pool no node is in. Before, the nodes the
    # launcher fits on made this read as a resource shortfall.
    launcher = Pod("ml", "l-0", {"cpu": 1000}, gang="ml/mpi")
    workers = members("ml/mpi", 2, cpu=2, node_selector={"pool": "gpu"})
    explanation = explain(nodes(3), (launcher, *workers), [gang("ml/mpi", 3)])["ml/mpi"]
    assert explanation.reason == Reason.NO_FEASIBLE_NODES
    assert explanation.message.startswith(
        "{cpu 2, memory 1Gi}: 0/3 nodes are available: 3 node(s) didn't match the node selector; "
        "needs 2 x {cpu 2, memory 1Gi} + 1 x {cpu 1}"
    )
    assert [shape["available"] for shape in explanation.details["shapes"]] == [0, 3]
    counts_add_up(explanation, 3)


def test_insufficient_cpu_and_memory_count_each_node_once_in_the_fit_order():
    # Re-expresses kubernetes' pkg/scheduler/schedule_one_test.go TestSchedulerFailedSchedulingReasons
    # (100 nodes too small in cpu and memory: "0/100 nodes are available: 100 Insufficient cpu,
    # 100 Insufficient memory."). kube-scheduler counts every failing resource of a node; here a
    # node counts once, under the first resource NodeResourcesFit checks (cpu before memory), so
    # the counts add up to the node count.
    cluster = nodes(100, cpu=1, memory=1)
    explanation = explain(cluster, members("team/big", 2, cpu=2, memory=2), [gang("team/big", 2)])["team/big"]
    (shape,) = explanation.details["shapes"]
    assert shape["reasons"] == [{"reason": "Insufficient", "count": 100, "detail": "cpu"}]
    assert explanation.reason == Reason.INSUFFICIENT_RESOURCES
    assert explanation.message.endswith("it cannot fit even on an empty cluster")


def test_rejections_name_the_first_untolerated_taint_of_each_node():
    # Re-expresses the TaintToleration filter's expected status in kubernetes'
    # pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go TestTaintTolerationFilter
    # ("node(s) had untolerated taint {foo: bar}"): here with the count of nodes.
    both = (Taint("foo", "bar", "NoSchedule"), Taint("dedicated", "user2", "NoSchedule"))
    cluster = (node("a", taints=both), node("b", taints=(Taint("foo", "bar", "NoSchedule"),)), node("c"))
    tolerates_dedicated = Pod("x", "p", {}, tolerations=(Toleration("dedicated", "Equal", "user2"),))
    rows, remaining = NodeFilter(cluster).rejections(tolerates_dedicated)
    assert rows == [{"reason": "UntoleratedTaint", "count": 2, "detail": "foo=bar:NoSchedule"}]
    assert reason_text(rows[0]) == "2 node(s) had untolerated taint {foo: bar}"
    assert remaining.tolist() == [False, False, True]
    rows, _ = NodeFilter(cluster).rejections(Pod("x", "q", {}))
    assert [row["detail"] for row in rows] == ["dedicated=user2:NoSchedule", "foo=bar:NoSchedule"]


def test_nodes_with_room_outside_any_rack_that_holds_the_gang_count_under_topology():
    cluster = fleet("b0:r0=2,r1=2", gpu=4)  # two racks of 8 GPUs; the gang needs 12 in one
    tainted = node("t0", gpu=8, labels={RACK: "r2"}, taints=(GPU_TAINT,))
    pods = members("ml/ring", 12, gpu=1)
    result = run_cycle(world((*cluster, tainted), pods, [gang("ml/ring", 12, topology=required(RACK))]), NOW)
    explanation = result.explanations["ml/ring"]
    assert explanation.reason == Reason.NO_DOMAIN_FITS
    (shape,) = explanation.details["shapes"]
    assert shape["reasons"] == [
        {"reason": "UntoleratedTaint", "count": 1, "detail": "nvidia.com/gpu=present:NoSchedule"},
        {"reason": "TopologyDomain", "count": 4, "detail": "rack"},
    ]
    assert explanation.message.endswith(
        "0/5 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "4 node(s) had room, but not in a rack that holds the whole gang; "
        "it cannot fit even on an empty cluster"
    )
    counts_add_up(explanation, 5)
