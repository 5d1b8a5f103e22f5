"""Each queue format's preemption rules, read into ``preempt_within`` and ``reclaim_up_to``
(``scheduler_core/declarations/queues_*.py``) and carried to the engine and the queues API.

Kueue: ``spec.preemption.withinClusterQueue`` defaults to Never (``apis/kueue/v1beta1``
``clusterqueue_types.go``, ``ClusterQueuePreemption``); only LowerPriority preempts inside the
ClusterQueue. YuniKorn has no intra-queue preemption (its preemption design, "Non goals") and
preempts only up to guarantees (``yunikorn-core`` ``pkg/scheduler/objects/preemption.go``).
Volcano and KAI-Scheduler keep gangsched's rules.
"""

import importlib

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.services.queues import queues_check
from scheduler_core.snapshot.queues import queues_read
from tests.queues.conftest import cluster_queue, spec, yunikorn_configs

from ..conftest import apply_text
from .helpers import EXAMPLES, load_example, load_text, specs_by_name

pytestmark = pytest.mark.django_db


def rules(spec) -> tuple[bool, str]:
    return spec.preempt_within, spec.reclaim_up_to


@pytest.mark.parametrize(
    ("preemption", "within"),
    [
        ("{}", False),  # Kueue's default: Never
        ("{withinClusterQueue: Never}", False),
        ("{withinClusterQueue: LowerPriority}", True),
        ("{reclaimWithinCohort: Any}", False),
    ],
)
def test_kueue_preempts_within_a_cluster_queue_only_with_lower_priority(preemption, within):
    specs = specs_by_name(load_text(cluster_queue("cq", preemption)))
    assert rules(specs["cq"]) == (within, "fair-share")


def test_every_example_s_rules():
    kueue = specs_by_name(load_example("kueue-v1beta1.yaml"))
    assert rules(kueue["team-a-cq"]) == (True, "fair-share")  # withinClusterQueue: LowerPriority
    assert rules(kueue["team-b-cq"]) == (False, "fair-share")  # no preemption: Never
    yunikorn = specs_by_name(load_example("yunikorn-configs.yaml"))
    assert yunikorn and all(rules(s) == (False, "guarantee") for s in yunikorn.values())
    for name in ("volcano-queues.yaml", "kai-queues.yaml"):
        specs = specs_by_name(load_example(name))
        assert specs and all(rules(s) == (True, "fair-share") for s in specs.values()), name


def test_yunikorn_s_inserted_root_has_its_rules_too():
    text = yunikorn_configs("{name: team}")  # no root: YuniKorn inserts it
    specs = specs_by_name(load_text(text))
    assert rules(specs["root"]) == rules(specs["root.team"]) == (False, "guarantee")


def test_the_rules_reach_the_engine_and_the_api(as_alice):
    never = cluster_queue("never")
    lower = cluster_queue("lower", "{withinClusterQueue: LowerPriority}")
    apply_text("\n---\n".join([never, lower, (EXAMPLES / "yunikorn-configs.yaml").read_text()]))

    engine = {queue.name: (queue.preempt_within, queue.reclaim_up_to) for queue in queues_read()[0]}
    assert engine["never"] == (False, "fair-share") and engine["lower"] == (True, "fair-share")
    assert engine["root"] == (False, "guarantee")

    body = as_alice.get("/api/v1/queues/never/").json()
    assert body["preemptWithin"] is False and body["reclaimUpTo"] == "fair-share"
    assert as_alice.get("/api/v1/queues/root/").json()["reclaimUpTo"] == "guarantee"


def test_an_unknown_reclaim_rule_is_refused_naming_it():
    with pytest.raises(DeclarationError) as error:
        queues_check([spec("q", reclaim_up_to="everything")])
    assert error.value.field == "items[0].reclaim_up_to"
    assert "fair-share, guarantee" in error.value.reason


def test_queues_applied_before_the_rules_existed_get_their_format_s():
    """The data step of migration 0025: rows written with the columns' defaults (gangsched's
    rules) take what a new apply would give them."""
    from django.apps import apps

    from scheduler_core.models import Queue

    migration = importlib.import_module("scheduler_core.migrations.0025_queue_preemption_rules")
    lower = {"spec": {"preemption": {"withinClusterQueue": "LowerPriority"}}}
    Queue.objects.create(name="never", source_format="kueue", declaration={"spec": {}})
    Queue.objects.create(name="lower", source_format="kueue", declaration=lower)
    Queue.objects.create(name="cohort", source_format="kueue", cohort=True)
    Queue.objects.create(name="root", source_format="yunikorn")
    Queue.objects.create(name="q1", source_format="volcano")

    migration.rules_from_declarations(apps, None)

    rows = {q.name: (q.preempt_within, q.reclaim_up_to) for q in Queue.objects.all()}
    assert rows == {
        "never": (False, "fair-share"),
        "lower": (True, "fair-share"),
        "cohort": (True, "fair-share"),  # groups queues, takes no work
        "root": (False, "guarantee"),
        "q1": (True, "fair-share"),
    }
