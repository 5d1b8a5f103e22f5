"""Who may submit where: a queue with no access rows is open to every submitter, otherwise only
to the users and groups listed; operators and the Kubernetes mirror always. To a submitter, a
queue they may not use reads exactly as one that does not exist, through the API and apply."""

import pytest
from django.contrib.auth.models import Group

from scheduler_core.cluster.kube.mirror import CLUSTER
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.documents import documents_parse
from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import Gang, LocalQueue, Member, Queue, QueueAccess
from scheduler_core.services.queue_access import queue_facts
from scheduler_core.services.queues import queue_allows, queue_require
from scheduler_core.services.submit import gang_submit
from scheduler_core.services.tenancy import Actor

pytestmark = pytest.mark.django_db

PODGROUP = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: ml}}
spec: {{minMember: 1, queue: {queue}}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}
spec: {{schedulerName: gangsched, containers: [{{name: c, image: x}}]}}
"""


@pytest.fixture
def closed_queue(bob):
    """``private``: only bob (and his group) may submit; ``public``: everyone."""
    private = Queue.objects.create(name="private")
    Queue.objects.create(name="public")
    QueueAccess.objects.create(queue=private, user=bob)
    return private


def test_the_rules(alice, bob, olga, closed_queue):
    assert queue_allows(alice, "public")
    assert not queue_allows(alice, "private")
    assert queue_allows(bob, "private")
    assert queue_allows(olga, "private")  # operators always
    assert queue_allows(alice, "default")  # implicit, open
    assert not queue_allows(alice, "nowhere")
    team = Group.objects.create(name="team")
    alice.groups.add(team)
    QueueAccess.objects.create(queue=closed_queue, group=team)
    assert queue_allows(alice, "private")


def test_with_no_queue_rows_every_name_is_allowed(alice):
    assert queue_allows(alice, "anything")


def test_a_default_queue_row_with_access_rows_is_closed_to_others(alice, bob):
    default = Queue.objects.create(name="default")
    QueueAccess.objects.create(queue=default, user=bob)
    assert not queue_allows(alice, "default")
    assert queue_allows(bob, "default")


def refusal(call) -> tuple[str, str]:
    with pytest.raises(DeclarationError) as error:
        call()
    return error.value.field, error.value.reason


def test_a_refused_queue_reads_exactly_like_a_missing_one_on_submit(alice, closed_queue):
    actor = Actor.of(alice)

    def submit(queue):
        return lambda: gang_submit(
            namespace="ml",
            name=f"g-{queue}",
            min_member=1,
            pods=[{"name": f"p-{queue}"}],
            queue=queue,
            actor=actor,
        )

    refused = refusal(submit("private"))
    missing = refusal(submit("nowhere"))
    assert refused == ("queue", "queue private not found")
    assert missing == ("queue", "queue nowhere not found")
    assert not Gang.objects.exists() and not Member.objects.exists()
    assert submit("public")().queue == "public"


def test_a_refused_queue_reads_exactly_like_a_missing_one_on_apply(alice, closed_queue):
    actor = Actor.of(alice)

    def apply(text):
        return lambda: manifests_apply(documents_parse(text), actor=actor)

    refused = refusal(apply(PODGROUP.format(name="a", queue="private")))
    missing = refusal(apply(PODGROUP.format(name="a", queue="nowhere")))
    assert refused == ("spec.queue", "queue private not found")
    assert missing == ("spec.queue", "queue nowhere not found")
    # A pod scheduled alone names its queue with Kueue's label.
    assert refusal(apply(POD.format(name="p", queue="private"))) == (
        "metadata.labels.kueue.x-k8s.io/queue-name",
        "queue private not found",
    )
    assert not Gang.objects.exists() and not Member.objects.exists()

    apply(PODGROUP.format(name="a", queue="public"))()
    apply(POD.format(name="p", queue="public"))()
    assert Gang.objects.get(name="a").queue == "public"
    assert Member.objects.get(name="p").queue == "public"


VOLCANO_JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job, namespace: ml}
spec:
  queue: private
  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: x}]}}}]
"""
PLUGINS_PODGROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {minMember: 1}
"""
PLUGINS_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: pg-0
  namespace: ml
  labels: {scheduling.x-k8s.io/pod-group: pg, kai.scheduler/queue: private}
spec: {schedulerName: gangsched, containers: [{name: c, image: x}]}
"""


def test_a_refusal_names_the_key_that_named_the_queue(alice, closed_queue):
    """Not the object's name: the fault is the queue key, wherever the format keeps it."""
    actor = Actor.of(alice)

    def apply(*texts):
        return lambda: manifests_apply(documents_parse("---\n".join(texts)), actor=actor)

    assert refusal(apply(VOLCANO_JOB)) == ("spec.queue", "queue private not found")
    # A gang whose format names no queue takes its pods' key: that key is at fault.
    assert refusal(apply(PLUGINS_PODGROUP, PLUGINS_POD)) == (
        "documents[1].metadata.labels.kai.scheduler/queue",
        "queue private not found",
    )
    assert not Gang.objects.exists() and not Member.objects.exists()


def test_pods_may_not_move_a_stored_gang_into_a_refused_queue(alice, closed_queue):
    """A PodGroup applied first is in the default queue; its pods arriving later with a queue
    key move it there, as a real cluster sends them, but only into a queue the submitter may use."""
    actor = Actor.of(alice)
    manifests_apply(documents_parse(PLUGINS_PODGROUP), actor=actor)
    field, reason = refusal(lambda: manifests_apply(documents_parse(PLUGINS_POD), actor=actor))
    assert (field, reason) == ("metadata.labels.kai.scheduler/queue", "queue private not found")
    assert Gang.objects.get(name="pg").queue == "default" and not Member.objects.exists()
    manifests_apply(documents_parse(PLUGINS_POD.replace("private", "public")), actor=actor)
    assert Gang.objects.get(name="pg").queue == "public"


def test_the_kubernetes_mirror_and_operators_are_never_refused(olga, closed_queue):
    manifests_apply(documents_parse(PODGROUP.format(name="a", queue="private")), actor=CLUSTER)
    manifests_apply(documents_parse(PODGROUP.format(name="b", queue="private")), actor=Actor.of(olga))
    assert Gang.objects.filter(queue="private").count() == 2


def test_moving_an_own_gang_into_a_refused_queue_is_refused(alice, closed_queue):
    actor = Actor.of(alice)
    manifests_apply(documents_parse(PODGROUP.format(name="a", queue="public")), actor=actor)
    field, reason = refusal(
        lambda: manifests_apply(documents_parse(PODGROUP.format(name="a", queue="private")), actor=actor)
    )
    assert reason == "queue private not found"
    assert Gang.objects.get(name="a").queue == "public"


def test_a_submitter_names_a_leaf_queue(alice):
    parent = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=parent)
    Queue.objects.create(name="all", cohort=True)
    actor = Actor.of(alice)
    for queue in ("ml", "all"):
        field, reason = refusal(
            lambda queue=queue: manifests_apply(
                documents_parse(PODGROUP.format(name="a", queue=queue)), actor=actor
            )
        )
        assert reason == f"queue {queue} is not a leaf queue: name one of its children (work runs in leaves)"
    manifests_apply(documents_parse(PODGROUP.format(name="a", queue="nlp")), actor=actor)
    assert Gang.objects.get(name="a").queue == "nlp"


def test_a_local_queue_is_judged_by_its_cluster_queue(alice, bob, closed_queue):
    """A Kueue LocalQueue resolves to its ClusterQueue before the rules are applied: one
    namespace's ``main`` may point at a closed queue, another's at an open one, and a name with
    no LocalQueue in the namespace is itself."""
    LocalQueue.objects.create(namespace="ml", name="main", cluster_queue=closed_queue)
    LocalQueue.objects.create(namespace="web", name="main", cluster_queue=Queue.objects.get(name="public"))
    assert refusal(lambda: queue_require(Actor.of(alice), "ml", "main", "queue")) == (
        "queue",
        "queue main not found",
    )
    queue_require(Actor.of(bob), "ml", "main", "queue")  # listed on the cluster queue
    queue_require(Actor.of(alice), "web", "main", "queue")
    queue_require(Actor.of(alice), "ml", "public", "queue")
    assert queue_facts(username="alice", queue="main", namespace="ml").name == "private"
    assert queue_facts(username="alice", queue="main").name == "main"  # no namespace: no resolution


def test_a_local_queue_of_a_parent_is_not_a_leaf(alice):
    parent = Queue.objects.create(name="ml")
    Queue.objects.create(name="nlp", parent=parent)
    LocalQueue.objects.create(namespace="team", name="main", cluster_queue=parent)
    field, reason = refusal(lambda: queue_require(Actor.of(alice), "team", "main", "queue"))
    assert reason == "queue main is not a leaf queue: name one of its children (work runs in leaves)"


def test_an_actor_with_no_user_row_is_granted_nothing_by_access_rows(closed_queue):
    ghost = Actor("ghost", False, False)
    assert not queue_allows(ghost, "private")
    assert queue_allows(ghost, "public")


@pytest.mark.parametrize("queue", ["default", "public", "private", "nowhere"])
def test_the_question_is_one_query(alice, closed_queue, queue, django_assert_num_queries):
    actor = Actor.of(alice)
    with django_assert_num_queries(1):
        queue_allows(actor, queue)


def test_a_submitter_reads_the_queues_they_may_use_and_their_ancestors(alice, bob, closed_queue):
    from scheduler_core.reads.queue_figures import queue_figures
    from scheduler_core.services.queue_access import queues_usable, queues_visible

    Queue.objects.create(name="inner", parent=closed_queue)  # open, under bob's queue
    hidden = Queue.objects.create(name="hidden", parent=closed_queue)
    QueueAccess.objects.create(queue=hidden, user=bob)
    assert queues_usable("alice") == {"public", "inner"}
    figures = queue_figures()
    seen = queues_visible(figures, username="alice", sees_all=False)
    assert list(seen) == ["private", "inner", "public"]  # tree order kept
    assert seen["private"].children == ["inner"] and figures["private"].children == ["hidden", "inner"]
    assert queues_visible(figures, username="nobody", sees_all=True) is figures
