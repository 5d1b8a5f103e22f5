"""services/queues.py: each refusal names the spec's field and key and writes nothing; a good
apply answers as kubectl does.

Cases re-expressed from the peers' validation (no code copied):
- Volcano ``pkg/webhooks/admission/queues/validate/validate_queue_test.go``
  (TestAdmitQueues: negative weight, capability below guarantee / deserved);
- Kueue ``pkg/webhooks/clusterqueue_webhook_test.go`` (TestValidateClusterQueue: negative
  nominal quota, lending limit above nominal quota) and ``pkg/cache/.../cohort`` cycle tests
  (a Cohort naming a descendant as its parent is refused);
- YuniKorn ``pkg/common/configs/configvalidator_test.go`` (TestCheckResourceConfigurationsForQueue:
  a child's guaranteed above its parent's max).
"""

import pytest

from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import Gang, LocalQueue, Member, Queue, ResourceFlavor
from scheduler_core.services import queues as q
from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec

from .conftest import spec

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


def refused(specs, field, words):
    before = list(Queue.objects.values_list("name", "guarantee", "max", "parent__name", "weight"))
    with pytest.raises(DeclarationError) as error:
        q.queues_put(specs)
    assert error.value.field == field, error.value
    assert words in error.value.reason
    assert list(Queue.objects.values_list("name", "guarantee", "max", "parent__name", "weight")) == before


def test_a_tree_is_created_parents_first_and_reapplying_it_changes_nothing():
    specs = [
        spec("nlp", parent="ml", field="items[1]", guarantee={GPU: 4}, max={GPU: 8}),
        spec("ml", guarantee={GPU: 8}, max={GPU: 16}, weight=2),
    ]
    assert q.queues_put(specs) == ["created", "created"]
    assert Queue.objects.get(name="nlp").parent.name == "ml"
    assert q.queues_put(specs) == ["unchanged", "unchanged"]
    specs[0].max = {GPU: 12}
    assert q.queues_put(specs) == ["configured", "unchanged"]


def test_a_negative_amount_is_refused_naming_it():
    refused([spec("ml", guarantee={GPU: -1})], "items[0].guarantee.nvidia.com/gpu", "negative")


def test_a_weight_of_zero_or_less_is_refused():
    refused([spec("ml", weight=0)], "items[0].weight", "greater than 0")
    refused([spec("ml", weight=-2.5)], "items[0].weight", "greater than 0")


def test_an_unknown_parent_is_refused():
    refused([spec("nlp", parent="ml")], "items[0].parent", "parent queue ml not found")


def test_a_cycle_in_the_tree_is_refused():
    q.queues_put([spec("a"), spec("b", parent="a")])
    refused([spec("a", parent="b")], "items[0].parent", "its own ancestor")
    refused([spec("x", parent="x")], "items[0].parent", "its own ancestor")


def test_max_below_guarantee_is_refused():
    refused(
        [spec("ml", guarantee={GPU: 8}, max={GPU: 4})], "items[0].max.nvidia.com/gpu", "below the guarantee"
    )


def test_a_lending_limit_above_the_guarantee_is_refused():
    refused(
        [spec("ml", guarantee={"cpu": 1000}, lending_limit={"cpu": 2000})],
        "items[0].lending_limit.cpu",
        "above the guarantee",
    )


def test_childrens_guarantees_above_the_parents_max_are_refused():
    q.queues_put([spec("ml", max={GPU: 8}), spec("nlp", parent="ml", guarantee={GPU: 6})])
    refused(
        [spec("vision", parent="ml", guarantee={GPU: 4})],
        "items[0].guarantee.nvidia.com/gpu",
        "above its max 8",
    )
    refused([spec("ml", max={GPU: 4})], "items[0].max.nvidia.com/gpu", "above its max 4")


def test_an_apply_is_judged_as_a_whole_not_step_by_step():
    q.queues_put([spec("ml", max={GPU: 8}), spec("nlp", parent="ml", guarantee={GPU: 8})])
    # Lowering the parent's max and its child's guarantee together is fine in one apply.
    statuses = q.queues_put(
        [spec("ml", max={GPU: 4}), spec("nlp", parent="ml", field="items[1]", guarantee={GPU: 4})]
    )
    assert statuses == ["configured", "configured"]


def test_a_queue_holding_gangs_cannot_become_a_parent_or_a_cohort():
    q.queues_put([spec("ml")])
    Gang.objects.create(namespace="ns", name="g", min_member=1, queue="ml")
    refused([spec("nlp", parent="ml")], "items[0].parent", "holds active gangs")
    refused([spec("ml", cohort=True)], "items[0].cohort", "cannot become a cohort")
    Gang.objects.filter(name="g").update(phase="Finished")
    q.queues_put([spec("nlp", parent="ml")])


def test_removing_a_queue_with_children_or_active_work_is_refused_naming_it():
    q.queues_put([spec("ml"), spec("nlp", parent="ml")])
    with pytest.raises(q.QueueInUse, match="queue ml has child queues \\(nlp\\)"):
        q.queue_remove("ml")
    Member.objects.create(namespace="ns", name="p", queue="nlp")
    with pytest.raises(q.QueueInUse, match="queue nlp holds active gangs or pods"):
        q.queue_remove("nlp")
    Member.objects.filter(name="p").update(phase="Succeeded")
    assert q.queue_remove("nlp") == "deleted"
    assert q.queue_remove("ml") == "deleted"
    with pytest.raises(q.QueueNotFound, match="queue ml not found"):
        q.queue_remove("ml")


def test_work_through_a_local_queue_holds_its_cluster_queue():
    q.queues_put([spec("cq")])
    assert q.local_queue_put(LocalQueueSpec("team-a", "main", "cq", "items[1]")) == "created"
    assert q.queue_for_gang("team-a", "main") == "cq"
    assert q.queue_for_gang("team-b", "main") == "main"
    with pytest.raises(q.QueueInUse, match="LocalQueue team-a/main"):
        q.queue_remove("cq")
    Gang.objects.create(namespace="team-a", name="g", min_member=1, queue="main")
    assert q.queue_active(["cq"]) == ["cq"]


def test_removing_a_local_queue_its_namespace_still_names_is_refused():
    """Its gangs would run charged to no queue, and its ClusterQueue would look emptier than it is."""
    q.queues_put([spec("cq")])
    q.local_queue_put(LocalQueueSpec("team-a", "main", "cq", "items[1]"))
    gang = Gang.objects.create(namespace="team-a", name="g", min_member=1, queue="main")
    Gang.objects.create(namespace="team-b", name="g", min_member=1, queue="main")  # another namespace
    with pytest.raises(q.QueueInUse, match="localqueue team-a/main is named by active gangs or pods"):
        q.local_queue_remove("team-a", "main")
    assert LocalQueue.objects.filter(namespace="team-a", name="main").exists()
    gang.phase = "Finished"
    gang.save()
    assert q.local_queue_remove("team-a", "main") == "deleted"
    with pytest.raises(q.QueueNotFound):
        q.local_queue_remove("team-a", "main")


def test_a_local_queue_naming_an_unknown_cluster_queue_is_refused():
    with pytest.raises(DeclarationError) as error:
        q.local_queue_put(LocalQueueSpec("team-a", "main", "nope", "items[0]"))
    assert error.value.field == "items[0].spec.clusterQueue"
    assert not LocalQueue.objects.exists()


def test_close_open_and_flavors():
    q.queues_put([spec("ml")])
    assert q.queue_close("ml") == "configured"
    assert q.queue_close("ml") == "unchanged"
    assert not Queue.objects.get(name="ml").open
    assert q.queue_open("ml") == "configured"
    assert q.flavor_put(FlavorSpec("a100", "items[0]", {"gpu": "a100"})) == "created"
    assert q.flavor_put(FlavorSpec("a100", "items[0]", {"gpu": "a100"})) == "unchanged"
    assert ResourceFlavor.objects.get().node_labels == {"gpu": "a100"}
    assert q.flavor_remove("a100") == "deleted"
