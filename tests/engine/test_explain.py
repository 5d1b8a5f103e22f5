"""Explanations an operator can act on, with fields a page can render."""

from scheduler_core.engine import Node, Pod, Reason, run_cycle

from .world import NOW, gang, snapshot


def test_the_message_says_what_is_needed_how_far_short_and_what_limits_it():
    cluster = [Node(f"gpu{i}", {"cpu": 16000, "nvidia.com/gpu": 1}) for i in range(5)]
    cluster += [Node(f"busy{i}", {"cpu": 16000, "nvidia.com/gpu": 1}) for i in range(3)]
    cluster += [Node(f"cpu{i}", {"cpu": 64000}) for i in range(3)]
    pods = [Pod("ml", f"w-{i}", {"cpu": 4000, "nvidia.com/gpu": 1}, gang="ml/train") for i in range(8)]
    pods += [Pod("other", f"r-{i}", {"nvidia.com/gpu": 1}, node=f"busy{i}") for i in range(3)]
    explanation = run_cycle(snapshot(cluster, pods, [gang("ml/train", 8)]), NOW).explanations["ml/train"]
    assert explanation.reason == Reason.INSUFFICIENT_RESOURCES
    assert explanation.message == (
        "needs 8 x {cpu 4, nvidia.com/gpu 1}; 5 nodes can take one each; short by 3; "
        "limiting resource nvidia.com/gpu"
    )
    assert explanation.details["limiting_resource"] == "nvidia.com/gpu"
    assert explanation.details["nodes_that_fit"] == 5


def test_nodes_taking_several_copies_are_counted_in_all():
    cluster = [Node("big", {"cpu": 8000}), Node("small", {"cpu": 2000})]
    pods = [Pod("ml", f"w-{i}", {"cpu": 2000}, gang="ml/train") for i in range(6)]
    explanation = run_cycle(snapshot(cluster, pods, [gang("ml/train", 6)]), NOW).explanations["ml/train"]
    assert explanation.message == (
        "needs 6 x {cpu 2}; 2 nodes can take 5 in all; short by 1; limiting resource cpu; "
        "it cannot fit even on an empty cluster"
    )
    assert explanation.details["fits_on_empty_cluster"] is False
