"""Snapshot builds reuse the engine objects of unchanged rows, and only those."""

import gc

import pytest

from scheduler_core.engine.gc_pause import gc_paused
from scheduler_core.models import LocalQueue, Member, Node, Queue
from scheduler_core.snapshot import build as snapshot
from scheduler_core.snapshot.reuse import REUSE, RowCache
from tests.service.test_snapshot import world  # noqa: F401  (the fixture)


def fresh_build():
    """A build that reuses nothing: what ``build_snapshot`` must equal."""
    REUSE.clear()
    return snapshot.build_snapshot()


def by_key(objects) -> dict:
    return {getattr(o, "key", None) or o.name: o for o in objects}


def test_unchanged_rows_give_the_very_same_objects(world):  # noqa: F811
    first = snapshot.build_snapshot()
    second = snapshot.build_snapshot()
    assert second == first
    old = (*first.pods, *first.nodes, *first.gangs)
    new = (*second.pods, *second.nodes, *second.gangs)
    assert all(a is b for a, b in zip(old, new, strict=True))


def test_a_changed_row_is_built_again_and_the_rest_reused(world):  # noqa: F811
    first = by_key(snapshot.build_snapshot().pods)
    Member.objects.filter(name="train-1").update(reserved_node=None, node="gpu-b")
    Node.objects.filter(name="gpu-a").update(unschedulable=False)
    built = snapshot.build_snapshot()
    pods = by_key(built.pods)
    assert pods["ml/train-1"] is not first["ml/train-1"] and pods["ml/train-1"].node == "gpu-b"
    assert pods["ml/train-0"] is first["ml/train-0"] and pods["web/solo"] is first["web/solo"]
    assert not by_key(built.nodes)["gpu-a"].unschedulable
    assert built == fresh_build()


def test_a_queue_change_reaches_a_pod_whose_row_did_not_change(world):  # noqa: F811
    assert by_key(snapshot.build_snapshot().pods)["web/solo"].queue == "default"
    Member.objects.filter(name="solo").update(queue="team-queue")
    assert by_key(snapshot.build_snapshot().pods)["web/solo"].queue == "team-queue"
    # A Kueue LocalQueue of that name now stands for a ClusterQueue: same row, another queue.
    cluster_queue = Queue.objects.create(name="cq")
    LocalQueue.objects.create(namespace="web", name="team-queue", cluster_queue=cluster_queue)
    reused = snapshot.build_snapshot()
    assert by_key(reused.pods)["web/solo"].queue == "cq"
    assert reused == fresh_build()


def test_a_row_cache_keeps_only_what_the_last_build_used():
    cache: RowCache[str] = RowCache()
    assert cache.get(("a",), lambda: "A") == "A" and cache.get(("b",), lambda: "B") == "B"
    cache.rotate()
    assert cache.get(("a",), lambda: "new") == "A"  # reused
    cache.rotate()
    assert cache.get(("b",), lambda: "B2") == "B2"  # "b" was not used by the build before: gone
    assert (cache.hits, cache.built) == (1, 3)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_inside_and_left_as_it_was(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the inner pause leaves it to the outer one
        assert gc.isenabled() == enabled
        with pytest.raises(RuntimeError), gc_paused():
            raise RuntimeError("a cycle that fails")
        assert gc.isenabled() == enabled
    finally:
        gc.enable()


def test_rows_read_without_django_converters_are_what_django_returns(world):  # noqa: F811
    epochs = Member.objects.annotate(at=snapshot._epoch("created")).order_by("name").values_list("name", "at")
    assert list(snapshot._tuples(epochs)) == list(epochs)  # float8 epochs: read as they come
    # A JSON column needs Django's converter (decoding): it is left to Django.
    jsons = Member.objects.order_by("name").values_list("name", "requests")
    assert list(snapshot._tuples(jsons)) == list(jsons)
    assert isinstance(next(iter(snapshot._tuples(jsons)))[1], dict)
